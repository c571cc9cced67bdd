//! Arbitrary event sequences: no panic, and every bound and invariant holds.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use proptest::prelude::*;
use serde_json::json;
use verdict_policy::{
    BatchDecision, CheckDecision, CheckPacket, Effect, FailureKind, FinalDecision, LoopPolicy,
    OutcomeStatus, PolicyExecution, StopReason, Verdict, WorkflowStatus,
};
use verdict_policy::{MAX_OBSERVATIONS, MAX_PACKET_BYTES};

#[derive(Debug, Clone)]
enum Event {
    Admit {
        tool: u8,
        effect: u8,
        arg: u8,
    },
    Observe {
        call: u8,
        outcome: u8,
        result: u8,
    },
    Turn,
    Batch {
        key: u8,
        scope_change: bool,
    },
    Final {
        complete: bool,
        identity_change: bool,
    },
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        4 => (0u8..3, 0u8..3, 0u8..4).prop_map(|(tool, effect, arg)| Event::Admit { tool, effect, arg }),
        4 => (any::<u8>(), 0u8..8, 0u8..3).prop_map(|(call, outcome, result)| Event::Observe { call, outcome, result }),
        2 => Just(Event::Turn),
        1 => (0u8..2, any::<bool>()).prop_map(|(key, scope_change)| Event::Batch { key, scope_change }),
        1 => (any::<bool>(), any::<bool>()).prop_map(|(complete, identity_change)| Event::Final { complete, identity_change }),
    ]
}

fn policy() -> impl Strategy<Value = common::Setup> {
    (0u32..4, 1u32..3, 1u32..3, 1u32..12, 1u32..8, 1u32..10).prop_map(|(r, rr, up, a, s, o)| {
        let policy = LoopPolicy {
            max_recovery_attempts: r,
            repeated_read_limit: rr,
            unchanged_progress_limit: up,
            max_admissions: a,
            max_call_signatures: s,
            max_observations: o,
            read_allowlist: vec!["tool0".into()],
        };
        common::with_progress(common::with_completion(policy))
    })
}

fn outcome(kind: u8) -> Option<verdict_policy::ObservedOutcome> {
    Some(match kind {
        0 => common::succeeded(),
        1 => common::status(OutcomeStatus::NotStarted),
        2 => common::status(OutcomeStatus::Unknown),
        3 => common::failed(FailureKind::Permission, false),
        4 => common::failed(FailureKind::Timeout, true),
        5 => common::failed(FailureKind::Execution, true),
        6 => common::failed(FailureKind::Cancelled, false),
        _ => return None,
    })
}

fn check_invariants(exec: &PolicyExecution, policy: &LoopPolicy, previous: Option<StopReason>) {
    let diag = exec.diagnostics();
    let c = &diag.counters;
    assert!(c.admissions <= policy.max_admissions);
    assert!(c.call_signatures <= policy.max_call_signatures);
    assert!(c.failure_identities <= policy.max_observations);
    assert!(diag.recovery_attempts_used <= policy.max_recovery_attempts);
    if let Some(previous) = previous {
        assert_eq!(
            diag.reason,
            Some(previous),
            "a finished execution changed its reason"
        );
    }
    if diag.status == Some(WorkflowStatus::Completed) {
        assert_eq!(diag.reason, Some(StopReason::Completed));
        assert!(diag.last_verdict.as_ref().is_some_and(|v| v.complete));
    }
    assert!(serde_json::from_str::<serde_json::Value>(&diag.to_json()).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_event_sequence_keeps_every_bound(
        setup in policy(),
        events in prop::collection::vec(event(), 0..60),
    ) {
        let policy = &setup.policy;
        let mut exec = PolicyExecution::start(policy, &setup.checkers, "e", Some(20)).unwrap();
        let mut calls: Vec<String> = Vec::new();
        let base = common::view();
        for (step, event) in events.into_iter().enumerate() {
            let before = exec.diagnostics().reason;
            match event {
                Event::Admit { tool, effect, arg } => {
                    let effect = [Effect::Read, Effect::Write, Effect::Unknown][effect as usize];
                    let args = json!({ "arg": arg });
                    let id = format!("call-{step}");
                    let tool = format!("tool{tool}");
                    exec.admit(&common::call(&id, &tool, effect, &args));
                    calls.push(id);
                }
                Event::Observe { call, outcome: kind, result } => {
                    if !calls.is_empty() {
                        let id = &calls[call as usize % calls.len()];
                        let value = json!({ "r": result });
                        exec.observe(common::seq(id), outcome(kind), Some(&value));
                    }
                }
                Event::Turn => {
                    exec.begin_turn();
                }
                Event::Batch { key, scope_change } => {
                    if let BatchDecision::SampleProgress(request) = exec.after_batch(&base, None) {
                        // Every packet the engine builds passes the validating constructor.
                        prop_assert!(CheckPacket::from_parts(request.packet.clone().into_parts()).is_ok());
                        let mut now = base.clone();
                        if scope_change {
                            now.scope.session = "other".into();
                        }
                        exec.progress_key(request.ticket, &now, Ok(format!("k{key}")));
                    }
                }
                Event::Final { complete, identity_change } => {
                    if let FinalDecision::Check(request) = exec.final_candidate("out", &base, None) {
                        prop_assert!(request.packet.observations.len() <= MAX_OBSERVATIONS);
                        prop_assert!(serde_json::to_vec(&request.packet).unwrap().len() <= MAX_PACKET_BYTES);
                        prop_assert!(CheckPacket::from_parts(request.packet.clone().into_parts()).is_ok());
                        let mut now = base.clone();
                        if identity_change {
                            now.identity.owner = "other".into();
                        }
                        let verdict = Verdict::bare(complete);
                        let decision = exec.completion_verdict(request.ticket, &now, Ok(verdict));
                        if identity_change {
                            prop_assert_eq!(decision, CheckDecision::Stop { reason: StopReason::StateChanged });
                        }
                    }
                }
            }
            check_invariants(&exec, policy, before);
        }
    }
}
