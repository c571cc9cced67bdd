//! Helpers shared by the rule tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::Value;
use verdict_policy::{
    Admission, CheckView, CheckerError, CompletionFn, Effect, FailureKind, LoopPolicy, Outcome,
    OutcomeStatus, PolicyExecution, ProgressFn, ToolCallRequest, Turn, Verdict,
};

/// Starts an execution with `policy` and no iteration bound.
pub fn start(policy: &LoopPolicy) -> PolicyExecution {
    PolicyExecution::start(policy, "exec-1", None).unwrap()
}

/// A policy with a completion checker (the engine never calls it).
pub fn with_completion(policy: LoopPolicy) -> LoopPolicy {
    policy.with_completion(Arc::new(CompletionFn(|_: &_| {
        Ok::<_, CheckerError>(Verdict {
            complete: true,
            reason: None,
            feedback: None,
        })
    })))
}

/// A policy with a progress checker (the engine never calls it).
pub fn with_progress(policy: LoopPolicy) -> LoopPolicy {
    policy.with_progress(Arc::new(ProgressFn(|_: &_| {
        Ok::<_, CheckerError>(String::new())
    })))
}

/// The sequence number of the test call named `name`: tests name their
/// calls, and each name is one call (the engine keys admissions by the
/// loop's sequence number, never by the call id).
pub fn seq(name: &str) -> u64 {
    // FNV-1a: stable across runs and platforms.
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The admission request of the call named `id` (its sequence number is
/// [`seq`] of the name).
pub fn call<'a>(
    id: &'a str,
    tool: &'a str,
    effect: Effect,
    args: &'a Value,
) -> ToolCallRequest<'a> {
    ToolCallRequest {
        sequence: seq(id),
        call_id: id,
        tool_name: tool,
        effect,
        arguments: args,
    }
}

pub fn succeeded() -> Outcome {
    Outcome {
        status: OutcomeStatus::Succeeded,
        failure: None,
        executed: true,
        result_fingerprint: None,
    }
}

pub fn failed(kind: FailureKind, executed: bool) -> Outcome {
    Outcome {
        status: OutcomeStatus::Failed,
        failure: Some(kind),
        executed,
        result_fingerprint: None,
    }
}

pub fn status(status: OutcomeStatus) -> Outcome {
    Outcome {
        status,
        failure: None,
        executed: false,
        result_fingerprint: None,
    }
}

/// Admits and settles one read with `result`, asserting it ran.
pub fn read(exec: &mut PolicyExecution, id: &str, tool: &str, args: &Value, result: &Value) {
    assert_eq!(
        exec.admit(&call(id, tool, Effect::Read, args)),
        Admission::Run
    );
    exec.observe(seq(id), Some(succeeded()), Some(result));
}

/// Begins a turn and returns its feedback, asserting it proceeds.
pub fn turn(exec: &mut PolicyExecution) -> Option<String> {
    match exec.begin_turn() {
        Turn::Proceed { feedback } => feedback,
        Turn::Stop { reason } => panic!("turn stopped: {reason:?}"),
    }
}

pub fn view() -> CheckView {
    let mut view = CheckView::default();
    view.scope.account = "acct-1".into();
    view.scope.session = "sess-1".into();
    view.identity.owner = "owner-1".into();
    view.identity.conversation = "conv-1".into();
    view.identity.plugin = "sha256:abc".into();
    view
}
