//! A loop with a sync tool, an async tool, a suspending tool, a host
//! context, a router and both checkers, written against the facade only:
//! every type the issue found missing is named by its `verdict::` path.

use std::sync::{Arc, Mutex};

use serde_json::json;
use verdict::fake::{Script, ScriptedModel, ScriptedTurn};
use verdict::{
    Agent, AsyncDelivery, AsyncSettler, CancelHandle, CheckPacket, CheckerErrorKind, CompletionFn,
    Effect, FailureKind, HostContext, HostScope, LoopDiagnostics, LoopPolicy, Observation,
    OutcomeStatus, PendingResult, Phase, ProgressFn, RecoveryTrigger, Route, RouteRequest, Router,
    RouterFn, RunOptions, RunOutcome, SettledCall, Suspension, Tool, ToolOutcome, ToolReturn,
    TrackingBound, Verdict,
};

/// A host whose scope is one account.
struct Host;

impl HostContext for Host {
    fn scope(&self) -> HostScope {
        HostScope {
            account: "acme".to_owned(),
            ..HostScope::default()
        }
    }
}

/// Whether `observation` is a successful call of `tool`.
fn succeeded(observation: &Observation, tool: &str) -> bool {
    observation.tool_name == tool
        && observation
            .outcome
            .as_ref()
            .is_some_and(|o| o.status == OutcomeStatus::Succeeded && o.failure.is_none())
}

/// What the loop's diagnostics say, by the facade's types.
fn describe(diag: &LoopDiagnostics) -> (Phase, Option<RecoveryTrigger>, Option<TrackingBound>) {
    let _: Option<CheckerErrorKind> = diag.checker_error;
    (diag.phase, diag.last_trigger, diag.tracking_bound)
}

/// Hands a result that arrived elsewhere to the agent.
fn deliver(agent: &Agent, delivery: AsyncDelivery) -> bool {
    agent.deliver_async_result(delivery)
}

#[tokio::test]
async fn an_embedder_writes_a_whole_loop_against_the_facade() {
    let model = Arc::new(ScriptedModel::new(Script::new(vec![
        ScriptedTurn::tool_call("r1", "peek", json!({})),
        ScriptedTurn::tool_call("j1", "start_job", json!({})),
        ScriptedTurn::text("done"),
    ])));
    let peek = Tool::new("peek", json!({"type": "object"}), |_, _| async {
        Ok(json!({"ready": true}))
    })
    .unwrap()
    .with_effect(Effect::Read);
    // An async tool: the settler is kept by the host and settled now.
    let settlers: Arc<Mutex<Vec<AsyncSettler>>> = Arc::default();
    let kept = settlers.clone();
    let job = Tool::new_async("start_job", json!({"type": "object"}), move |_, _| {
        let kept = kept.clone();
        async move {
            let (handle, settler): (PendingResult, AsyncSettler) = PendingResult::new();
            kept.lock().unwrap().push(settler);
            Ok(ToolReturn::Pending(handle))
        }
    })
    .unwrap()
    .with_effect(Effect::Read);
    let pause = Tool::new_async("pause", json!({"type": "object"}), |_, _| async {
        Ok(ToolReturn::Suspend(Suspension {
            correlation_id: "c-1".to_owned(),
            reason: None,
        }))
    })
    .unwrap();
    let checker = CompletionFn::inline(|packet: &CheckPacket, _ctx| {
        let read = packet.observations.iter().any(|o| succeeded(o, "peek"));
        Ok(Verdict::new(
            read,
            None,
            (!read).then(|| "Peek first.".to_owned()),
        )?)
    });
    let progress =
        ProgressFn::inline(|packet: &CheckPacket, _ctx| Ok(packet.observed_tool_calls.to_string()));
    let _router: Arc<dyn Router> = Arc::new(RouterFn(|_: &RouteRequest<'_>| {
        Err::<Route, String>("the agent's own model".to_owned())
    }));
    let agent = Agent::builder()
        .model(model)
        .model_name("scripted")
        .tool(peek)
        .tool(job)
        .tool(pause)
        .host(Arc::new(Host))
        .loop_policy(LoopPolicy::default())
        .completion_checker(Arc::new(checker))
        .progress_checker(Arc::new(progress))
        .build()
        .unwrap();
    let cancel = CancelHandle::new();
    let response = agent
        .run(
            "Peek, then start the job.",
            RunOptions::default().with_cancel(cancel),
        )
        .await
        .unwrap();
    // The job is still pending: the final answer stops, unjudged.
    let settled: &[SettledCall] = &response.tool_calls;
    assert!(matches!(settled[0].outcome, ToolOutcome::Succeeded { .. }));
    assert_eq!(agent.pending_async_calls(), vec!["j1".to_owned()]);
    let diag = response.loop_diagnostics.as_ref().unwrap();
    assert_eq!(describe(diag), (Phase::Stopped, None, None));
    assert_eq!(
        response.outcome(),
        RunOutcome::Stopped {
            reason: verdict::StopReason::PendingAsync
        }
    );
    // Nothing failed, so no failure kind was observed.
    let failed: Vec<FailureKind> = settled
        .iter()
        .filter_map(|call| match &call.outcome {
            ToolOutcome::Failed { kind, .. } => Some(*kind),
            _ => None,
        })
        .collect();
    assert!(failed.is_empty());
    let _ = deliver;
}
