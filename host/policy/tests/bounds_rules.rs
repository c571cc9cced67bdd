//! Tracking bounds: admissions, signatures, observations, failure identities.

use crate::common;

use common::{call, failed, start, succeeded};
use serde_json::json;
use verdict_policy::{
    Admission, Effect, FailureKind, LoopPolicy, StopReason, TrackingBound, TurnDecision,
};

fn bound_stop(exec: &verdict_policy::PolicyExecution, bound: TrackingBound) {
    let diag = exec.diagnostics();
    assert_eq!(diag.reason, Some(StopReason::TrackingBound));
    assert_eq!(diag.tracking_bound, Some(bound));
}

#[test]
fn admission_bound_counts_pending_calls() {
    let mut exec = start(&LoopPolicy {
        max_admissions: 3,
        ..LoopPolicy::default()
    });
    // Three pending (never settled, e.g. async) calls fill the bound.
    for i in 0..3 {
        let args = json!({ "n": i });
        assert_eq!(
            exec.admit(&call(&format!("c{i}"), "job", Effect::Read, &args)),
            Admission::Run
        );
    }
    let args = json!({ "n": 99 });
    assert_eq!(
        exec.admit(&call("c9", "job", Effect::Read, &args)),
        Admission::Stop {
            reason: StopReason::TrackingBound
        }
    );
    bound_stop(&exec, TrackingBound::Admissions);
    assert_eq!(exec.diagnostics().counters.admissions, 3);
}

#[test]
fn signature_bound_stops_next_dispatch() {
    let mut exec = start(&LoopPolicy {
        max_call_signatures: 2,
        ..LoopPolicy::default()
    });
    for i in 0..2 {
        let args = json!({ "n": i });
        let id = format!("c{i}");
        assert_eq!(
            exec.admit(&call(&id, "get", Effect::Read, &args)),
            Admission::Run
        );
        exec.observe(common::seq(&id), Some(succeeded()), Some(&json!(i)));
    }
    let args = json!({ "n": 0 });
    assert!(matches!(
        exec.admit(&call("c5", "get", Effect::Read, &args)),
        Admission::Stop { .. }
    ));
    bound_stop(&exec, TrackingBound::CallSignatures);
}

#[test]
fn observation_bound_stops_next_dispatch() {
    let mut exec = start(&LoopPolicy {
        max_observations: 2,
        ..LoopPolicy::default()
    });
    let args = json!({});
    for id in ["a", "b"] {
        assert_eq!(
            exec.admit(&call(id, "get", Effect::Read, &args)),
            Admission::Run
        );
        exec.observe(common::seq(id), Some(succeeded()), Some(&json!(id)));
    }
    assert!(matches!(
        exec.admit(&call("c", "get", Effect::Read, &args)),
        Admission::Stop { .. }
    ));
    bound_stop(&exec, TrackingBound::Observations);
}

#[test]
fn failure_identity_bound_caps_tracking() {
    let mut exec = start(&LoopPolicy {
        max_observations: 2,
        max_recovery_attempts: 10,
        ..LoopPolicy::default()
    });
    // Three calls admitted in one batch settle as three distinct failures
    // after the bound was reached: no more than two identities are kept.
    for i in 0..3 {
        let args = json!({ "n": i });
        assert_eq!(
            exec.admit(&call(&format!("c{i}"), "get", Effect::Read, &args)),
            Admission::Run
        );
    }
    for i in 0..3 {
        exec.observe(
            common::seq(&format!("c{i}")),
            Some(failed(FailureKind::Execution, true)),
            None,
        );
    }
    let diag = exec.diagnostics();
    assert_eq!(diag.counters.failures, 3);
    assert_eq!(diag.counters.failure_identities, 2);
    // The same failure identity twice is one identity.
    let mut exec = start(&LoopPolicy {
        max_recovery_attempts: 10,
        ..LoopPolicy::default()
    });
    let args = json!({ "n": 1 });
    for id in ["a", "b"] {
        exec.admit(&call(id, "get", Effect::Read, &args));
        exec.observe(
            common::seq(id),
            Some(failed(FailureKind::Execution, true)),
            None,
        );
    }
    assert_eq!(exec.diagnostics().counters.failure_identities, 1);
}

#[test]
fn failure_identity_bound_stops_next_dispatch() {
    let mut exec = start(&LoopPolicy {
        max_observations: 2,
        max_recovery_attempts: 10,
        ..LoopPolicy::default()
    });
    for i in 0..2 {
        let args = json!({ "n": i });
        let id = format!("c{i}");
        exec.admit(&call(&id, "get", Effect::Read, &args));
        exec.observe(
            common::seq(&id),
            Some(failed(FailureKind::Execution, true)),
            None,
        );
    }
    let args = json!({ "n": 7 });
    assert!(matches!(
        exec.admit(&call("c7", "get", Effect::Read, &args)),
        Admission::Stop { .. }
    ));
    // Two distinct failures filled the failure identities (and, since each
    // is an observation, the observations): the specific bound is named.
    bound_stop(&exec, TrackingBound::FailureIdentities);
    assert_eq!(exec.diagnostics().counters.failure_identities, 2);
    assert_eq!(
        serde_json::to_value(exec.diagnostics().tracking_bound).unwrap(),
        json!("failure_identities")
    );
    assert!(matches!(exec.begin_turn(), TurnDecision::Stop { .. }));
    // The same failure twice is one identity: then observations is the bound.
    let mut exec = start(&LoopPolicy {
        max_observations: 2,
        max_recovery_attempts: 10,
        ..LoopPolicy::default()
    });
    let args = json!({ "n": 1 });
    for id in ["a", "b"] {
        exec.admit(&call(id, "get", Effect::Read, &args));
        exec.observe(
            common::seq(id),
            Some(failed(FailureKind::Execution, true)),
            None,
        );
    }
    assert!(matches!(
        exec.admit(&call("c", "get", Effect::Read, &json!({ "n": 2 }))),
        Admission::Stop { .. }
    ));
    bound_stop(&exec, TrackingBound::Observations);
}

#[test]
fn reaching_a_bound_stops_the_next_turn() {
    let mut exec = start(&LoopPolicy {
        max_admissions: 1,
        ..LoopPolicy::default()
    });
    assert!(matches!(exec.begin_turn(), TurnDecision::Proceed { .. }));
    let args = json!({});
    assert_eq!(
        exec.admit(&call("a", "get", Effect::Read, &args)),
        Admission::Run
    );
    exec.observe(common::seq("a"), Some(succeeded()), Some(&json!(1)));
    assert_eq!(
        exec.begin_turn(),
        TurnDecision::Stop {
            reason: StopReason::TrackingBound
        }
    );
    assert_eq!(exec.diagnostics().counters.iterations, 1);
}
