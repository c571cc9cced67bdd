//! Scenario tests of model routing: chosen once before a managed execution,
//! kept by recovery, retries, tool iterations and continuations.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::{any_object, scripted};
use serde_json::json;
use verdict_agent::{
    Agent, AsyncSettler, CallBudget, ConnectorRegistry, PendingResult, Route, Router, RouterFn,
    RunOptions, RunStatus, Tool, ToolError, ToolReturn,
};
use verdict_policy::{Effect, LoopPolicy, StopReason};
use verdict_providers::Model;
use verdict_providers::fake::{ScriptedModel, ScriptedTurn};

/// A router sending execution n to `connectors[n % len]`; counts its calls.
fn rotating(connectors: &'static [&'static str]) -> (Arc<dyn Router>, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let router = RouterFn(move |_: &verdict_agent::RouteRequest<'_>| {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        let connector = connectors[n % connectors.len()];
        Ok(Route {
            connector: connector.to_owned(),
            model_name: format!("model-{connector}"),
        })
    });
    (Arc::new(router), calls)
}

fn registry(models: &[(&str, &Arc<ScriptedModel>)]) -> ConnectorRegistry {
    let mut registry = ConnectorRegistry::new();
    for (name, model) in models {
        let model: Arc<dyn Model> = (*model).clone();
        registry.register(*name, model);
    }
    registry
}

fn builder(default: &Arc<ScriptedModel>) -> verdict_agent::AgentBuilder {
    let model: Arc<dyn Model> = default.clone();
    Agent::builder().model(model).model_name("default-model")
}

#[tokio::test]
async fn routing_is_chosen_once_across_a_recovery() {
    let default = scripted(vec![]);
    let fast = scripted(vec![
        ScriptedTurn::tool_call("r1", "read_notes", json!({})),
        ScriptedTurn::text(""),
        ScriptedTurn::text("Recovered and done."),
    ]);
    let slow = scripted(vec![]);
    let (router, routed) = rotating(&["fast", "slow"]);
    let failing = Tool::new("read_notes", any_object(), |_, _| async {
        Err::<serde_json::Value, _>(ToolError::new("store offline"))
    })
    .unwrap()
    .with_effect(Effect::Read);
    let agent = builder(&default)
        .tool(failing)
        .loop_policy(LoopPolicy::default())
        .router(&registry(&[("fast", &fast), ("slow", &slow)]), router)
        .build()
        .unwrap();
    let budget = CallBudget::new(6);
    let run = agent
        .run(
            "Read notes.",
            RunOptions::default().with_budget(budget.clone()),
        )
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(routed.load(Ordering::SeqCst), 1, "routed once");
    // The failure turn, the empty-answer retry and the recovery turn all
    // stayed on the routed model, under the run's one budget.
    let requests = fast.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|r| r.model == "model-fast"));
    assert!(default.requests().is_empty() && slow.requests().is_empty());
    assert_eq!(budget.used(), 3);
    let route = run.route.unwrap();
    assert_eq!(route.route.unwrap().connector, "fast");
    assert!(!route.continued && route.error.is_none());
    assert_eq!(run.loop_diagnostics.unwrap().counters.failures, 1);
}

#[tokio::test]
async fn a_continuation_keeps_the_route_and_a_new_run_routes_again() {
    let default = scripted(vec![]);
    let a = scripted(vec![
        ScriptedTurn::tool_call("j1", "start_job", json!({})),
        ScriptedTurn::text("Started."),
        ScriptedTurn::text("Finished."),
    ]);
    let b = scripted(vec![ScriptedTurn::text("Next task done.")]);
    let (router, routed) = rotating(&["a", "b"]);
    let settlers: Arc<Mutex<Vec<AsyncSettler>>> = Arc::default();
    let keep = settlers.clone();
    let job = Tool::new_async("start_job", any_object(), move |_, _| {
        let (handle, settler) = PendingResult::new();
        keep.lock().unwrap().push(settler);
        async move { Ok::<_, ToolError>(ToolReturn::Pending(handle)) }
    })
    .unwrap()
    .with_effect(Effect::Write);
    let agent = builder(&default)
        .tool(job)
        .loop_policy(LoopPolicy::default())
        .router(&registry(&[("a", &a), ("b", &b)]), router)
        .build()
        .unwrap();
    let first = agent.run("Start.", RunOptions::default()).await.unwrap();
    assert_eq!(first.status, RunStatus::Stopped(StopReason::PendingAsync));
    settlers
        .lock()
        .unwrap()
        .pop()
        .unwrap()
        .settle(Ok(json!("ok")));
    let cont = agent
        .continue_with_async_results(RunOptions::default())
        .await
        .unwrap();
    assert_eq!(cont.status, RunStatus::Completed);
    assert_eq!(
        routed.load(Ordering::SeqCst),
        1,
        "continuation not rerouted"
    );
    assert_eq!(a.requests().len(), 3);
    assert!(cont.route.unwrap().continued);
    let next = agent.run("Next.", RunOptions::default()).await.unwrap();
    assert_eq!(next.status, RunStatus::Completed);
    assert_eq!(routed.load(Ordering::SeqCst), 2);
    assert_eq!(b.requests().len(), 1);
    assert_eq!(agent.last_route().unwrap().route.unwrap().connector, "b");
}

#[tokio::test]
async fn an_uncertain_action_is_never_repeated_on_another_model() {
    let default = scripted(vec![]);
    let a = scripted(vec![
        ScriptedTurn::tool_call("w1", "charge", json!({})),
        ScriptedTurn::text("unreachable"),
    ]);
    let b = scripted(vec![ScriptedTurn::tool_call("w2", "charge", json!({}))]);
    let (router, routed) = rotating(&["a", "b"]);
    let charges = Arc::new(AtomicUsize::new(0));
    let count = charges.clone();
    let charge = Tool::new("charge", any_object(), move |_, _| {
        count.fetch_add(1, Ordering::SeqCst);
        // Outlives its deadline: whether the charge happened is unknown.
        async {
            tokio::time::sleep(std::time::Duration::from_secs(5)).await;
            Ok::<_, ToolError>(json!("charged"))
        }
    })
    .unwrap()
    .with_effect(Effect::Write)
    .with_deadline(std::time::Duration::from_millis(10));
    let agent = builder(&default)
        .tool(charge)
        .loop_policy(LoopPolicy {
            max_recovery_attempts: 3,
            ..LoopPolicy::default()
        })
        .router(&registry(&[("a", &a), ("b", &b)]), router)
        .build()
        .unwrap();
    let run = agent.run("Charge.", RunOptions::default()).await.unwrap();
    assert_eq!(run.status, RunStatus::Stopped(StopReason::UncertainEffect));
    assert_eq!(routed.load(Ordering::SeqCst), 1);
    assert_eq!(a.requests().len(), 1);
    assert!(b.requests().is_empty(), "no other model tried it");
    assert_eq!(charges.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_routing_failure_falls_back_and_stays_out_of_completion() {
    let default = scripted(vec![ScriptedTurn::text("Done on the default model.")]);
    let router: Arc<dyn Router> = Arc::new(RouterFn(|_: &verdict_agent::RouteRequest<'_>| {
        Ok(Route {
            connector: "missing".into(),
            model_name: "x".into(),
        })
    }));
    let agent = builder(&default)
        .loop_policy(LoopPolicy::default())
        .router(&ConnectorRegistry::new(), router)
        .build()
        .unwrap();
    let run = agent.run("Go.", RunOptions::default()).await.unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(default.requests()[0].model, "default-model");
    let route = run.route.unwrap();
    assert!(route.route.is_none());
    assert!(route.error.unwrap().contains("missing"));
    assert!(run.loop_diagnostics.is_some());
}
