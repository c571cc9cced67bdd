//! Async imports under the tracking bounds: an execution imports deliveries
//! only while it can track them ("at most 1000 … actual observations …
//! tracked per execution"); the rest stay queued for a later execution,
//! never lost and never imported twice.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use common::{agent_on, scripted};
use proptest::prelude::*;
use serde_json::json;
use verdict_agent::{Agent, AsyncDelivery, ExecutionReceipt, RunOptions, RunStatus, ToolOutcome};
use verdict_policy::{Effect, FailureKind, LoopPolicy, StopReason, TrackingBound};
use verdict_providers::Message;
use verdict_providers::fake::ScriptedTurn;

/// What a delivery carries: its effect and its outcome.
#[derive(Debug, Clone, Copy)]
enum Shape {
    ReadOk,
    ReadFailed,
    WriteOk,
    WriteFailed,
    /// A write without an outcome: it stops the importing execution with
    /// `uncertain_effect`.
    WriteLost,
}

/// A legacy delivery (no origin execution) of call `id`.
fn delivery(id: usize, shape: Shape) -> AsyncDelivery {
    let effect = match shape {
        Shape::ReadOk | Shape::ReadFailed => Effect::Read,
        _ => Effect::Write,
    };
    let outcome = match shape {
        Shape::ReadOk | Shape::WriteOk => Some(ToolOutcome::Succeeded {
            value: json!({ "n": id }),
        }),
        Shape::ReadFailed | Shape::WriteFailed => Some(ToolOutcome::Failed {
            kind: FailureKind::Execution,
            error: "it broke".into(),
        }),
        Shape::WriteLost => None,
    };
    AsyncDelivery {
        call_id: format!("d{id}"),
        execution_id: None,
        tool_name: "job".into(),
        admitted_effect: None,
        receipt: Some(ExecutionReceipt {
            call_id: format!("d{id}"),
            tool_name: "job".into(),
            effect,
            duration_ms: 1,
            result_fingerprint: None,
        }),
        arguments: Some(json!({ "n": id })),
        outcome,
    }
}

/// The `[async result]` messages in the agent's conversation.
fn imported(agent: &Agent) -> usize {
    agent
        .conversation()
        .iter()
        .filter(|m| matches!(m, Message::User { text } if text.starts_with("[async result]")))
        .count()
}

/// An agent whose policy tracks at most `bound` observations, on a model
/// that always answers.
fn bounded_agent(bound: u32) -> Agent {
    let model = scripted((0..64).map(|_| ScriptedTurn::text("Done.")).collect());
    let policy = LoopPolicy {
        max_observations: bound,
        max_recovery_attempts: 1_000,
        ..LoopPolicy::default()
    };
    agent_on(&model).loop_policy(policy).build().unwrap()
}

#[tokio::test]
async fn an_execution_imports_no_more_than_it_can_track_and_leaves_the_rest_queued() {
    let agent = bounded_agent(3);
    for id in 0..5 {
        assert!(agent.deliver_async_result(delivery(id, Shape::ReadOk)));
    }
    let first = agent
        .continue_with_async_results(RunOptions::default())
        .await
        .unwrap();
    assert_eq!(first.status, RunStatus::Stopped(StopReason::TrackingBound));
    let diag = first.loop_diagnostics.unwrap();
    assert_eq!(diag.tracking_bound, Some(TrackingBound::Observations));
    assert_eq!(
        diag.counters.observations, 3,
        "tracked no more than the bound"
    );
    assert_eq!(imported(&agent), 3, "the rest were not imported");
    // The rest stayed queued: the next execution imports them.
    let second = agent
        .continue_with_async_results(RunOptions::default())
        .await
        .unwrap();
    assert_eq!(second.status, RunStatus::Completed);
    assert_eq!(second.loop_diagnostics.unwrap().counters.observations, 2);
    assert_eq!(imported(&agent), 5);
}

/// Delivers `shapes`, then continues until every delivery was imported;
/// each execution's observations stay within `bound`. Returns the
/// executions it took.
async fn import_all(bound: u32, shapes: &[Shape]) -> Result<usize, TestCaseError> {
    let agent = bounded_agent(bound);
    for (id, shape) in shapes.iter().enumerate() {
        prop_assert!(agent.deliver_async_result(delivery(id, *shape)));
    }
    let mut executions = 0;
    let mut before = 0;
    while imported(&agent) < shapes.len() {
        // Each execution imports at least one delivery.
        prop_assert!(executions < shapes.len(), "an execution imported nothing");
        let response = agent
            .continue_with_async_results(RunOptions::default())
            .await
            .unwrap();
        executions += 1;
        let diag = response.loop_diagnostics.unwrap();
        prop_assert!(diag.counters.observations <= bound, "{diag:?}");
        let now = imported(&agent);
        prop_assert!(now > before, "an execution imported nothing");
        prop_assert!(now - before <= bound as usize, "{} imports", now - before);
        prop_assert_eq!(diag.counters.observations as usize, now - before);
        before = now;
    }
    // Nothing imported twice, nothing left: one more execution imports none.
    prop_assert_eq!(imported(&agent), shapes.len());
    let last = agent
        .continue_with_async_results(RunOptions::default())
        .await
        .unwrap();
    prop_assert_eq!(last.loop_diagnostics.unwrap().counters.observations, 0);
    prop_assert_eq!(imported(&agent), shapes.len());
    Ok(executions)
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::ReadOk),
        Just(Shape::ReadFailed),
        Just(Shape::WriteOk),
        Just(Shape::WriteFailed),
        Just(Shape::WriteLost),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn observations_stay_within_the_bound_after_any_sequence_of_imports(
        bound in 1u32..6,
        shapes in proptest::collection::vec(shape(), 0..16),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(import_all(bound, &shapes))?;
    }
}
