//! A check's timeout is decided once, in its journal entry: the loop takes
//! a journaled check's answer however late Restate acknowledges it, so the
//! first attempt and a replay (answered at once from the journal) agree.
//! The handler is played here by a task that answers the loop's steps as
//! the pump does, with the acknowledgement's delay chosen by the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use verdict_agent::{Checkers, CompletionFn};
use verdict_policy::{CheckerErrorKind, LoopDiagnostics, LoopPolicy, StopReason, Verdict};
use verdict_providers::fake::{Conversation, Script, ScriptedModel, ScriptedTurn};

use crate::blueprint::Blueprint;
use crate::journal::{CheckOutcome, Journal, Step};
use crate::pump::decide;

/// How the stand-in handler answers checks.
enum Ack {
    /// Runs each check and answers after this acknowledgement delay,
    /// keeping the outcomes (the journal).
    After(Duration),
    /// Answers each check at once with the journaled outcome.
    Replay(VecDeque<CheckOutcome>),
}

/// One attempt of a one-turn execution whose checker answers after
/// `check_takes` (deadline 300 ms); its diagnostics and the journal.
async fn attempt(check_takes: Duration, ack: Ack) -> (LoopDiagnostics, VecDeque<CheckOutcome>) {
    let model = ScriptedModel::new(Script {
        conversations: vec![Conversation {
            first_user_contains: None,
            turns: vec![ScriptedTurn::text("A42 is ready.")],
        }],
    });
    let checker = CompletionFn::new(move |_, _| {
        std::thread::sleep(check_takes);
        Ok(Verdict::bare(true))
    });
    let blueprint = Blueprint::new(Arc::new(model), "m")
        .checker_timeout(Duration::from_millis(300))
        .loop_policy(
            LoopPolicy::default(),
            Checkers::new().with_completion(Arc::new(checker)),
        );
    let (journal, steps) = Journal::channel();
    let agent = blueprint.build(&journal).unwrap();
    let handler = tokio::spawn(handle(steps, ack));
    let options = blueprint.run_options("conv/ex");
    let response = agent.run("Verify A42.", options).await.unwrap();
    drop(agent);
    drop(journal);
    let kept = handler.await.unwrap();
    (response.loop_diagnostics.expect("diagnostics"), kept)
}

async fn handle(mut steps: mpsc::UnboundedReceiver<Step>, mut ack: Ack) -> VecDeque<CheckOutcome> {
    let mut kept = VecDeque::new();
    while let Some(step) = steps.recv().await {
        match step {
            Step::Model { call, reply, .. } => {
                let _ = reply.send(call.await);
            }
            Step::Check { call, reply } => {
                let outcome = match &mut ack {
                    Ack::After(delay) => {
                        let outcome = decide(call.deadline, call.run).await;
                        kept.push_back(outcome.clone());
                        tokio::time::sleep(*delay).await;
                        outcome
                    }
                    Ack::Replay(journaled) => journaled.pop_front().expect("a journaled check"),
                };
                let _ = reply.send(outcome);
            }
            Step::Tool { .. } => panic!("no tools in this story"),
        }
    }
    kept
}

/// The verifier answers in 50 ms, Restate acknowledges 500 ms later, past
/// the 300 ms deadline: the verdict stands on the first attempt as on the
/// replay (before, the first attempt timed the acknowledgement and stopped
/// with `checker_error` while the replay completed).
#[tokio::test(flavor = "multi_thread")]
async fn a_verdict_journaled_in_time_stands_however_late_its_acknowledgement() {
    let (first, journal) = attempt(
        Duration::from_millis(50),
        Ack::After(Duration::from_millis(500)),
    )
    .await;
    assert_eq!(first.reason, Some(StopReason::Completed), "{first:?}");
    let (replayed, _) = attempt(Duration::from_millis(50), Ack::Replay(journal)).await;
    assert_eq!(replayed, first);
}

/// A verifier that answers after its deadline: the entry holds a timeout,
/// and the replay sees the same timeout.
#[tokio::test(flavor = "multi_thread")]
async fn a_check_past_its_deadline_is_a_journaled_timeout_on_every_attempt() {
    let (first, journal) = attempt(Duration::from_millis(450), Ack::After(Duration::ZERO)).await;
    assert_eq!(first.reason, Some(StopReason::CheckerError), "{first:?}");
    assert_eq!(first.checker_error, Some(CheckerErrorKind::Timeout));
    let (replayed, _) = attempt(Duration::from_millis(450), Ack::Replay(journal)).await;
    assert_eq!(replayed, first);
}
