//! Async deliveries and settlement deduplication.

use crate::common;

use common::{call, failed, start, succeeded, turn, view};
use serde_json::json;
use verdict_policy::{
    Admission, Decision, Delivery, Effect, FailureKind, FinalDecision, LoopPolicy, StopReason,
    TrackingBound,
};

fn delivery<'a>(id: &'a str, admitted: Option<Effect>, receipt: Option<Effect>) -> Delivery<'a> {
    Delivery {
        sequence: None,
        call_id: id,
        tool_name: "send_report",
        admitted_effect: admitted,
        receipt_effect: receipt,
        arguments: None,
        outcome: None,
        result: None,
    }
}

#[test]
fn settlements_are_deduplicated() {
    let mut exec = start(&LoopPolicy::default());
    let args = json!({});
    assert_eq!(
        exec.admit(&call("c1", "fetch", Effect::Read, &args)),
        Admission::Run
    );
    exec.observe(
        common::seq("c1"),
        Some(failed(FailureKind::Execution, true)),
        None,
    );
    // The same settlement again, and a redelivery of it, count once.
    exec.observe(
        common::seq("c1"),
        Some(failed(FailureKind::Execution, true)),
        None,
    );
    let mut again = delivery("c1", Some(Effect::Read), None);
    again.sequence = Some(common::seq("c1"));
    again.outcome = Some(failed(FailureKind::Execution, true));
    exec.import_delivery(&again);
    let diag = exec.diagnostics();
    assert_eq!(diag.counters.failures, 1);
    assert_eq!(diag.counters.observations, 1);
    // A settlement for a call never admitted is ignored.
    assert_eq!(
        exec.observe(common::seq("ghost"), Some(succeeded()), None),
        Decision::Continue
    );
    assert_eq!(exec.diagnostics().counters.observations, 1);
}

#[test]
fn delivered_outcomes_keep_the_admitted_effect() {
    // The retained admission effect (write) wins over the receipt's (read):
    // a missing outcome blocks conservatively.
    let mut exec = start(&LoopPolicy::default());
    assert_eq!(
        exec.import_delivery(&delivery("a1", Some(Effect::Write), Some(Effect::Read))),
        Decision::Stop {
            reason: StopReason::UncertainEffect
        }
    );
    // Legacy results: the receipt effect, else unknown.
    let mut exec = start(&LoopPolicy::default());
    assert_eq!(
        exec.import_delivery(&delivery("a2", None, Some(Effect::Read))),
        Decision::Continue
    );
    assert_eq!(
        exec.import_delivery(&delivery("a3", None, None)),
        Decision::Stop {
            reason: StopReason::UncertainEffect
        }
    );
    // Deliveries are not admissions of this execution.
    let mut exec = start(&LoopPolicy::default());
    let mut ok = delivery("a4", Some(Effect::Write), None);
    ok.outcome = Some(succeeded());
    assert_eq!(exec.import_delivery(&ok), Decision::Continue);
    assert_eq!(exec.diagnostics().counters.admissions, 0);
    assert_eq!(exec.diagnostics().counters.observations, 1);
}

#[test]
fn imported_failures_respect_recovery_limits() {
    let mut exec = start(&LoopPolicy {
        max_recovery_attempts: 1,
        ..LoopPolicy::default()
    });
    let mut first = delivery("d1", Some(Effect::Read), None);
    first.outcome = Some(failed(FailureKind::Execution, true));
    assert_eq!(exec.import_delivery(&first), Decision::Continue);
    assert!(turn(&mut exec).is_some_and(|f| f.contains("send_report")));
    let mut second = delivery("d2", Some(Effect::Read), None);
    second.outcome = Some(failed(FailureKind::Timeout, true));
    assert_eq!(
        exec.import_delivery(&second),
        Decision::Stop {
            reason: StopReason::RecoveryExhausted
        }
    );
}

#[test]
fn expected_delivery_is_pending_until_imported() {
    let mut exec = start(&LoopPolicy::default());
    let awaited = delivery("e1", Some(Effect::Write), None);
    exec.expect_delivery(&awaited);
    // Expecting twice registers it once.
    exec.expect_delivery(&awaited);
    assert_eq!(
        exec.final_candidate("done", &view(), None),
        FinalDecision::Stop {
            reason: StopReason::PendingAsync
        }
    );
    let mut exec = start(&LoopPolicy::default());
    exec.expect_delivery(&awaited);
    exec.expect_delivery(&awaited);
    let mut arrived = delivery("e1", Some(Effect::Write), None);
    arrived.outcome = Some(succeeded());
    assert_eq!(exec.import_delivery(&arrived), Decision::Continue);
    assert_eq!(exec.diagnostics().counters.admissions, 0);
    assert_eq!(exec.diagnostics().counters.observations, 1);
    assert_eq!(
        exec.final_candidate("done", &view(), None),
        FinalDecision::Answer
    );
}

#[test]
fn nothing_is_imported_past_the_observation_bound() {
    let mut exec = start(&LoopPolicy {
        max_observations: 2,
        ..LoopPolicy::default()
    });
    for id in ["d1", "d2"] {
        assert_eq!(exec.before_import(), None);
        let mut arrived = delivery(id, Some(Effect::Read), None);
        arrived.outcome = Some(succeeded());
        assert_eq!(exec.import_delivery(&arrived), Decision::Continue);
    }
    // The bound is reached: the next delivery is left to the caller.
    assert_eq!(exec.before_import(), Some(StopReason::TrackingBound));
    let mut third = delivery("d3", Some(Effect::Read), None);
    third.outcome = Some(succeeded());
    assert_eq!(
        exec.import_delivery(&third),
        Decision::Stop {
            reason: StopReason::TrackingBound
        }
    );
    let diag = exec.diagnostics();
    assert_eq!(diag.counters.observations, 2);
    assert_eq!(diag.tracking_bound, Some(TrackingBound::Observations));
}

#[test]
fn the_admission_bound_counts_awaited_and_imported_calls() {
    let policy = LoopPolicy {
        max_admissions: 2,
        ..LoopPolicy::default()
    };
    // One awaited call and one admission fill the bound.
    let mut exec = start(&policy);
    exec.expect_delivery(&delivery("e1", Some(Effect::Write), None));
    let args = json!({});
    assert_eq!(
        exec.admit(&call("c1", "fetch", Effect::Read, &args)),
        Admission::Run
    );
    assert_eq!(
        exec.admit(&call("c2", "fetch", Effect::Read, &json!({"n": 2}))),
        Admission::Stop {
            reason: StopReason::TrackingBound
        }
    );
    assert_eq!(
        exec.diagnostics().tracking_bound,
        Some(TrackingBound::Admissions)
    );
    // An awaited call with no room left stops the execution.
    let mut exec = start(&policy);
    exec.expect_delivery(&delivery("e1", Some(Effect::Write), None));
    exec.expect_delivery(&delivery("e2", Some(Effect::Write), None));
    assert_eq!(exec.diagnostics().reason, None);
    exec.expect_delivery(&delivery("e3", Some(Effect::Write), None));
    let diag = exec.diagnostics();
    assert_eq!(diag.reason, Some(StopReason::TrackingBound));
    assert_eq!(diag.tracking_bound, Some(TrackingBound::Admissions));
    // An ended execution imports nothing either.
    assert_eq!(exec.before_import(), Some(StopReason::TrackingBound));
}
