//! Configuration rules: bounds, validation, JSON loading and capture.

use crate::common;

use common::{call, start};
use serde_json::json;
use verdict_policy::{
    Admission, CheckerIdentities, Effect, LoopPolicy, PolicyExecution, PolicyLoadError,
};

fn fields(policy: &LoopPolicy) -> Vec<String> {
    match policy.validate() {
        Ok(()) => Vec::new(),
        Err(error) => error.0.into_iter().map(|v| v.field).collect(),
    }
}

#[test]
fn every_violation_is_reported_with_its_field() {
    let policy = LoopPolicy {
        max_recovery_attempts: 1001,
        repeated_read_limit: 0,
        unchanged_progress_limit: 0,
        max_admissions: 1001,
        max_call_signatures: 0,
        max_observations: 5000,
        ..LoopPolicy::default()
    };
    assert_eq!(
        fields(&policy),
        [
            "max_recovery_attempts",
            "repeated_read_limit",
            "unchanged_progress_limit",
            "max_admissions",
            "max_call_signatures",
            "max_observations",
        ]
    );
    // The edges are valid: recovery may be 0, every threshold may be 1000.
    let edges = LoopPolicy {
        max_recovery_attempts: 0,
        repeated_read_limit: 1000,
        unchanged_progress_limit: 1,
        max_admissions: 1000,
        max_call_signatures: 1,
        max_observations: 1000,
        ..LoopPolicy::default()
    };
    assert!(fields(&edges).is_empty());
}

#[test]
fn allowlist_bounds_are_enforced() {
    let mut policy = LoopPolicy {
        read_allowlist: vec![
            "status".into(),
            "".into(),
            " ".into(),
            "x".repeat(257),
            "y".repeat(256),
        ],
        ..LoopPolicy::default()
    };
    assert_eq!(
        fields(&policy),
        [
            "read_allowlist[1]",
            "read_allowlist[2]",
            "read_allowlist[3]"
        ]
    );
    policy.read_allowlist = (0..101).map(|i| format!("tool{i}")).collect();
    assert_eq!(fields(&policy), ["read_allowlist"]);
    policy.read_allowlist.pop();
    assert!(fields(&policy).is_empty());
}

#[test]
fn invalid_policy_cannot_start_an_execution() {
    let policy = LoopPolicy {
        max_admissions: 0,
        ..LoopPolicy::default()
    };
    let error =
        PolicyExecution::start(&policy, &CheckerIdentities::default(), "e", None).unwrap_err();
    assert_eq!(error.0.len(), 1);
    assert_eq!(error.0[0].field, "max_admissions");
}

#[test]
fn empty_json_policy_tracks_without_a_verifier() {
    let policy = LoopPolicy::from_json("{}").unwrap();
    // Plain data: `{}` is the default policy, and names no checker.
    assert_eq!(policy, LoopPolicy::default());
    let mut exec = start(&policy);
    // Tracking is on: a duplicate write is refused...
    let args = json!({"id": 1});
    assert_eq!(
        exec.admit(&call("a", "send", Effect::Write, &args)),
        Admission::Run
    );
    assert!(matches!(
        exec.admit(&call("b", "send", Effect::Write, &args)),
        Admission::Skip { .. }
    ));
    // ...and invalid JSON thresholds are refused with their field.
    match LoopPolicy::from_json(r#"{"max_admissions": 2000, "read_allowlist": [""]}"#) {
        Err(PolicyLoadError::Invalid(error)) => assert_eq!(error.0.len(), 2),
        other => panic!("expected invalid policy, got {other:?}"),
    }
}

#[test]
fn unknown_json_field_is_refused() {
    assert!(matches!(
        LoopPolicy::from_json(r#"{"maxRecoveryAttempts": 2}"#),
        Err(PolicyLoadError::Malformed(_))
    ));
    assert!(matches!(
        LoopPolicy::from_json(r#"{"max_recovery_attempts": -1}"#),
        Err(PolicyLoadError::Malformed(_))
    ));
}

// An execution captures a copy of its policy at start, and later edits to
// the policy value apply to later executions only: by construction, which
// the compiler checks. `PolicyExecution::start` borrows the policy only for
// the call, and an execution is `'static` (it holds no borrow of it), so
// the policy cannot be edited while an execution could still see it.
// `LoopPolicy` is plain owned data (no shared handle to alias). The path
// where an edited policy replaces another for one execution
// (`RunOptions::with_policy`, then the agent's own for the next run) is
// tested behaviourally in verdict-agent:
// `lifecycle::a_run_policy_applies_to_that_execution_only`.
const _: fn() = || {
    // A struct field admits no elided lifetime: this stops compiling if an
    // execution ever borrows (from its policy or anything else).
    #[allow(dead_code)]
    struct Held(PolicyExecution);
    fn captured<T: Send + Sync + 'static>() {}
    captured::<Held>();
    fn plain<T: Clone + PartialEq + Send + Sync + 'static>() {}
    plain::<LoopPolicy>();
};
