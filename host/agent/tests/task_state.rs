//! Scenario tests of the built-in task-state store: its snapshot in the
//! check packet, and a same-revision restore seen by the stale-view guard.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{agent_on, any_object, completion, scripted};
use serde_json::json;
use verdict_agent::{Checkers, RunOptions, RunStatus, TaskStateStore, Tool};
use verdict_policy::{Effect, LoopPolicy, StopReason, Verdict};
use verdict_providers::fake::ScriptedTurn;

#[tokio::test]
async fn checker_sees_the_task_state_snapshot() {
    let model = scripted(vec![
        ScriptedTurn::text("Done."),
        ScriptedTurn::tool_call("s1", "record_step", json!({})),
        ScriptedTurn::text("Done now."),
    ]);
    let store = TaskStateStore::new("task-9");
    let writer = store.clone();
    let tool = Tool::new("record_step", any_object(), move |_, _| {
        let writer = writer.clone();
        async move {
            writer.update(json!({"step": "recorded"})).unwrap();
            Ok(json!("recorded"))
        }
    })
    .unwrap()
    .with_effect(Effect::Write);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(move |packet| {
        let state = packet.task_state.clone().unwrap();
        log.lock()
            .unwrap()
            .push((state.host_scope.clone(), state.revision));
        Ok(Verdict::new(
            state.payload == json!({"step": "recorded"}),
            None,
            Some("Record the step first.".into()),
        )
        .unwrap())
    }));
    let agent = agent_on(&model)
        .tool(tool)
        .task_state(store.clone())
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let run = agent
        .run("Do the task.", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![("task-9".to_owned(), 0), ("task-9".to_owned(), 1)]
    );
    assert_eq!(agent.task_state().unwrap().snapshot().revision, 1);
}

#[tokio::test]
async fn same_revision_restore_during_a_check_stops_with_state_changed() {
    let model = scripted(vec![ScriptedTurn::text("Done.")]);
    let store = TaskStateStore::new("task-9");
    store.update(json!({"step": 1})).unwrap();
    let restorer = store.clone();
    let checks = Arc::new(AtomicUsize::new(0));
    let counter = checks.clone();
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
        // The host restores the same revision while the check runs.
        restorer.restore(&restorer.snapshot()).unwrap();
        Ok(Verdict::bare(true))
    }));
    let agent = agent_on(&model)
        .task_state(store.clone())
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let run = agent
        .run("Do the task.", RunOptions::default())
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Stopped(StopReason::StateChanged));
    assert_eq!(checks.load(Ordering::SeqCst), 1);
    let snap = store.snapshot();
    assert_eq!((snap.revision, snap.generation), (1, 1));
}

#[tokio::test]
async fn without_a_restore_the_same_check_completes() {
    // The checker only reads (the spec forbids it to change task state);
    // the host updates the state while the check runs. A new revision is
    // not a restore: the verdict stands.
    let model = scripted(vec![ScriptedTurn::text("Done.")]);
    let store = TaskStateStore::new("task-9");
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let started_tx = std::sync::Mutex::new(started_tx);
    let release_rx = std::sync::Mutex::new(release_rx);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let policy = LoopPolicy::default();
    let checkers = Checkers::new().with_completion(completion(move |packet| {
        let state = packet.task_state.clone().unwrap();
        log.lock().unwrap().push((state.revision, state.generation));
        started_tx.lock().unwrap().send(()).unwrap();
        let _ = release_rx
            .lock()
            .unwrap()
            .recv_timeout(std::time::Duration::from_secs(10));
        Ok(Verdict::bare(true))
    }));
    let agent = agent_on(&model)
        .task_state(store.clone())
        .loop_policy(policy)
        .checkers(checkers)
        .build()
        .unwrap();
    let host = store.clone();
    let update = async move {
        tokio::task::spawn_blocking(move || {
            started_rx
                .recv_timeout(std::time::Duration::from_secs(20))
                .unwrap();
            host.update(json!({"edited": "by the host"})).unwrap();
            release_tx.send(()).unwrap();
        })
        .await
        .unwrap();
    };
    let (run, ()) = tokio::join!(agent.run("Do the task.", RunOptions::default()), update);
    let run = run.unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(0, 0)],
        "one check, of revision 0"
    );
    let snap = store.snapshot();
    assert_eq!(
        (snap.revision, snap.generation),
        (1, 0),
        "changed during it"
    );
}
