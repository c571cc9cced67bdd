//! Helpers shared by the rule tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use verdict_policy::{
    Admission, CheckView, CheckerIdentities, Effect, FailureKind, LoopPolicy, ObservedOutcome,
    OutcomeStatus, PolicyExecution, ToolCallRequest, TurnDecision,
};

/// The identity of the test checkers (the one [`view`] reports).
pub const CHECKER: &str = "sha256:abc";

/// A policy and the checkers an execution names (by identity).
#[derive(Debug, Clone, Default)]
pub struct Setup {
    pub policy: LoopPolicy,
    pub checkers: CheckerIdentities,
}

/// What an execution starts from: a policy alone, or a [`Setup`].
pub trait AsSetup {
    fn setup(&self) -> Setup;
}

impl AsSetup for LoopPolicy {
    fn setup(&self) -> Setup {
        Setup {
            policy: self.clone(),
            checkers: CheckerIdentities::default(),
        }
    }
}

impl AsSetup for Setup {
    fn setup(&self) -> Setup {
        self.clone()
    }
}

/// Starts an execution and no iteration bound.
pub fn start(setup: &impl AsSetup) -> PolicyExecution {
    start_bounded(setup, None)
}

/// Starts an execution with `max_iterations`.
pub fn start_bounded(setup: &impl AsSetup, max_iterations: Option<u32>) -> PolicyExecution {
    let setup = setup.setup();
    PolicyExecution::start(&setup.policy, &setup.checkers, "exec-1", max_iterations).unwrap()
}

/// With a completion checker (the engine never calls it).
pub fn with_completion(setup: impl AsSetup) -> Setup {
    let mut setup = setup.setup();
    setup.checkers.completion = Some(CHECKER.to_owned());
    setup
}

/// With a progress checker (the engine never calls it).
pub fn with_progress(setup: impl AsSetup) -> Setup {
    let mut setup = setup.setup();
    setup.checkers.progress = Some(CHECKER.to_owned());
    setup
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

pub fn succeeded() -> ObservedOutcome {
    ObservedOutcome {
        status: OutcomeStatus::Succeeded,
        failure: None,
        executed: true,
        result_fingerprint: None,
    }
}

pub fn failed(kind: FailureKind, executed: bool) -> ObservedOutcome {
    ObservedOutcome {
        status: OutcomeStatus::Failed,
        failure: Some(kind),
        executed,
        result_fingerprint: None,
    }
}

pub fn status(status: OutcomeStatus) -> ObservedOutcome {
    ObservedOutcome {
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
        TurnDecision::Proceed { feedback } => feedback,
        TurnDecision::Stop { reason } => panic!("turn stopped: {reason:?}"),
    }
}

pub fn view() -> CheckView {
    let mut view = CheckView::default();
    view.scope.account = "acct-1".into();
    view.scope.session = "sess-1".into();
    view.identity.owner = "owner-1".into();
    view.identity.conversation = "conv-1".into();
    view.identity.checker = CHECKER.into();
    view
}
