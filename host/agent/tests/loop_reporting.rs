//! What the loop reports to checkers and observers: the packet's iteration,
//! the progress packet's empty output, `IterationComplete` diagnostics, the
//! diagnostics kept across `load_conversation`, and the bound on check
//! restarts under a host scope that keeps changing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use common::{agent_on, any_object, completion, scripted};
use futures::StreamExt;
use serde_json::json;
use verdict_agent::{
    AgentEvent, Checkers, HostContext, ProgressFn, RunOptions, RunOutcome, RunStatus, Tool,
};
use verdict_policy::{
    CheckPacket, CheckerError, CheckerErrorKind, Effect, HostScope, LoopPolicy, StopReason, Verdict,
};
use verdict_providers::fake::{Reply, ScriptedCall, ScriptedTurn};

fn peek() -> Tool {
    Tool::new("peek", any_object(), |_, _| async { Ok(json!({"rev": 1})) })
        .unwrap()
        .with_effect(Effect::Read)
}

/// A turn with text and one `peek` call.
fn look(id: &str) -> ScriptedTurn {
    ScriptedTurn::reply(Reply {
        text: Some("Let me look.".into()),
        tool_calls: vec![ScriptedCall {
            id: Some(id.into()),
            name: "peek".into(),
            arguments: json!({"n": id}),
        }],
        ..Reply::default()
    })
}

#[tokio::test]
async fn packets_carry_the_main_loop_iteration() {
    let model = scripted(vec![
        ScriptedTurn::text("Done."),
        look("p1"),
        ScriptedTurn::text("Done now."),
    ]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(move |packet| {
        log.lock().unwrap().push(packet.iteration);
        Ok(Verdict::new(packet.iteration == 3, None, Some("Look first.".into())).unwrap())
    }));
    let agent = agent_on(&model)
        .tool(peek())
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let run = agent.run("Go.", RunOptions::default()).await.unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(*seen.lock().unwrap(), vec![1, 3]);
    assert_eq!(run.iterations, 3);
}

#[tokio::test]
async fn the_progress_packet_has_no_output_text() {
    let model = scripted(vec![look("p1"), ScriptedTurn::text("Done.")]);
    let seen: Arc<Mutex<Vec<CheckPacket>>> = Arc::default();
    let log = seen.clone();
    let policy = LoopPolicy::default();
    let checkers =
        Checkers::new().with_progress(Arc::new(ProgressFn::new(move |packet: &_, _: &_| {
            log.lock().unwrap().push(CheckPacket::clone(packet));
            Ok::<_, CheckerError>("rev-1".to_owned())
        })));
    let agent = agent_on(&model)
        .tool(peek())
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let run = agent.run("Go.", RunOptions::default()).await.unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    let packets = seen.lock().unwrap();
    assert_eq!(packets.len(), 1, "sampled after the one batch");
    // The model's prose ("Let me look.") is not a progress source.
    assert_eq!(packets[0].output_text, "");
    assert!(!packets[0].output_truncated);
    assert_eq!(packets[0].iteration, 1);
    assert_eq!(packets[0].observations.len(), 1);
    assert_eq!(packets[0].observations[0].tool_name, "peek");
}

#[tokio::test]
async fn iteration_complete_carries_the_diagnostics_of_a_managed_run() {
    let model = scripted(vec![look("p1"), look("p2"), ScriptedTurn::text("Done.")]);
    let agent = agent_on(&model)
        .tool(peek())
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let events: Vec<AgentEvent> = agent.stream("Go.", RunOptions::default()).collect().await;
    let Some(AgentEvent::ResponseComplete(response)) = events.last() else {
        panic!("{:?}", events.last());
    };
    let execution = response
        .loop_diagnostics
        .as_ref()
        .unwrap()
        .execution_id
        .clone();
    let iterations: Vec<(u32, u32, u32)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::IterationComplete {
                iteration,
                loop_diagnostics,
            } => {
                let diag = loop_diagnostics
                    .as_ref()
                    .expect("diagnostics with a policy");
                assert_eq!(diag.execution_id, execution);
                assert_eq!(diag.reason, None, "still running");
                Some((
                    *iteration,
                    diag.counters.iterations,
                    diag.counters.observations,
                ))
            }
            _ => None,
        })
        .collect();
    assert_eq!(iterations, [(1, 1, 1), (2, 2, 2)]);

    // Without a policy the event carries none.
    let model = scripted(vec![look("p1"), ScriptedTurn::text("Done.")]);
    let agent = agent_on(&model).tool(peek()).build().unwrap();
    let events: Vec<AgentEvent> = agent.stream("Go.", RunOptions::default()).collect().await;
    let unmanaged: Vec<bool> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::IterationComplete {
                loop_diagnostics, ..
            } => Some(loop_diagnostics.is_none()),
            _ => None,
        })
        .collect();
    assert_eq!(unmanaged, [true]);
}

#[tokio::test]
async fn loading_a_conversation_keeps_the_latest_diagnostics() {
    let model = scripted(vec![
        look("p1"),
        ScriptedTurn::text("Done."),
        ScriptedTurn::text("Again."),
    ]);
    let agent = agent_on(&model)
        .tool(peek())
        .loop_policy(LoopPolicy::default())
        .build()
        .unwrap();
    let run = agent.run("Go.", RunOptions::default()).await.unwrap();
    let latest = run.loop_diagnostics.unwrap();
    let saved = agent.save_conversation();
    agent.load_conversation(&saved).unwrap();
    assert_eq!(agent.loop_diagnostics(), Some(latest.clone()));
    agent.load_conversation("[]").unwrap();
    assert_eq!(agent.loop_diagnostics(), Some(latest.clone()));
    // The next managed execution replaces them.
    let next = agent.run("More.", RunOptions::default()).await.unwrap();
    let now = agent.loop_diagnostics().unwrap();
    assert_ne!(now.execution_id, latest.execution_id);
    assert_eq!(Some(now), next.loop_diagnostics);
}

/// A host whose scope is different at every read.
struct RestlessHost {
    reads: AtomicU64,
}

impl HostContext for RestlessHost {
    fn scope(&self) -> HostScope {
        HostScope {
            session: format!("s{}", self.reads.fetch_add(1, Ordering::SeqCst)),
            ..HostScope::default()
        }
    }
}

#[tokio::test]
async fn a_check_restarts_at_most_four_times_under_a_changing_scope() {
    let model = scripted(vec![ScriptedTurn::text("Done.")]);
    let checks = Arc::new(AtomicU64::new(0));
    let counted = checks.clone();
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
        Ok(Verdict::bare(true))
    }));
    let agent = agent_on(&model)
        .host(Arc::new(RestlessHost {
            reads: AtomicU64::new(0),
        }))
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let run = agent.run("Finish.", RunOptions::default()).await.unwrap();
    // The first check and four restarts ran; old authority confirmed nothing.
    assert_eq!(run.status, RunStatus::Stopped(StopReason::CheckerError));
    assert_eq!(checks.load(Ordering::SeqCst), 5);
    let diag = run.loop_diagnostics.unwrap();
    assert_eq!(diag.counters.scope_restarts, 4);
    assert_eq!(diag.checker_error, Some(CheckerErrorKind::Failed));
    assert_eq!(diag.status, None);
    assert_eq!(diag.last_verdict, None);
}

fn verdict(complete: bool) -> Verdict {
    Verdict::bare(complete)
}

#[tokio::test]
async fn the_outcome_is_one_classification_of_how_a_run_ended() {
    let policy = LoopPolicy {
        max_recovery_attempts: 0,
        ..LoopPolicy::default()
    };
    let checked = |complete: bool| {
        let model = scripted(vec![ScriptedTurn::text("Done.")]);
        agent_on(&model)
            .loop_policy(policy.clone())
            .completion_checker(completion(move |_| Ok(verdict(complete))))
            .build()
            .unwrap()
    };
    let verified = checked(true).run("Go.", RunOptions::default()).await;
    assert_eq!(RunOutcome::of(&verified), RunOutcome::Verified);
    let refused = checked(false).run("Go.", RunOptions::default()).await;
    assert_eq!(
        RunOutcome::of(&refused),
        RunOutcome::Stopped {
            reason: StopReason::RecoveryExhausted
        }
    );

    // Without a policy, or with one but no completion checker: unverified.
    let model = scripted(vec![
        ScriptedTurn::text("Done."),
        ScriptedTurn::text("Done."),
    ]);
    let agent = agent_on(&model).build().unwrap();
    let plain = agent.run("Go.", RunOptions::default()).await.unwrap();
    assert_eq!(plain.outcome(), RunOutcome::AnswerReturned);
    let unchecked = agent
        .run("Go.", RunOptions::default().with_policy(policy.clone()))
        .await
        .unwrap();
    assert_eq!(unchecked.outcome(), RunOutcome::AnswerReturned);

    // The iteration bound.
    let model = scripted(vec![look("p1"), look("p2")]);
    let agent = agent_on(&model)
        .tool(peek())
        .max_iterations(1)
        .build()
        .unwrap();
    let bounded = agent.run("Go.", RunOptions::default()).await.unwrap();
    assert_eq!(
        bounded.outcome(),
        RunOutcome::Stopped {
            reason: StopReason::MaxIterations
        }
    );

    // A failed run (the script has no answer).
    let model = scripted(Vec::new());
    let failed = agent_on(&model)
        .build()
        .unwrap()
        .run("Go.", RunOptions::default())
        .await;
    assert!(failed.is_err());
    assert_eq!(RunOutcome::of(&failed), RunOutcome::Failed);

    // The diagnostics are `loop` in JSON.
    let json = serde_json::to_value(verified.unwrap()).unwrap();
    assert_eq!(json["loop"]["reason"], "completed");
}
