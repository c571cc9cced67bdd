//! Randomized fault injection: many conversations of the feedback story
//! with a write, executions submitted all along, the worker SIGKILLed at
//! random moments many times and the Restate server killed and started
//! again a few times. The invariants are counted apart from the product:
//! writes on disk (the test worker logs every start and every effect by
//! idempotency key), model requests at the model's own endpoint.
//!
//! - every execution ends (none left running);
//! - no write starts twice, none takes effect twice;
//! - an execution that completed wrote once; one whose write was cut off
//!   (started, its result never journaled) ends in `uncertain_effect`
//!   naming that call. The converse is not required: a worker killed
//!   after the call's start marker was journaled and before the tool began
//!   cannot tell it from a cut-off write, so it stops `uncertain_effect`
//!   too (counted as a false alarm: safe, never a second run);
//! - no request to the model mixes two conversations' prompts.
//!
//! Seeded: the seed is printed, `VERDICT_CHAOS_SEED` replays its schedule
//! (kill times, delays, submissions; the processes' interleaving is the
//! machine's). `VERDICT_CHAOS_SECS` is the chaos budget (default 60).
//! Run by `.ci/run`; `cargo test -p verdict-durable --test durable --
//! --ignored chaos::`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

mod model;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use verdict_durable::{ExecutionRecord, ExecutionRef, ExecutionState, RestateClient};
use verdict_policy::{FEEDBACK_LABEL, StopReason};

use crate::support::*;
use model::ChaosModel;

const CONVERSATIONS: usize = 12;
/// How long the executions may take to end once the chaos stopped (and
/// a submission to be taken): this plus half the chaos budget.
const SETTLE: Duration = Duration::from_secs(240);

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// Submits until Restate takes it (the same idempotency key every time,
/// so a retry after a lost answer starts nothing new).
async fn submit_through(client: &RestateClient, execution: &ExecutionRef, prompt: &str) {
    let end = Instant::now() + SETTLE;
    while let Err(error) = client.submit(execution, prompt, None).await {
        assert!(Instant::now() < end, "cannot submit {execution}: {error}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "chaos: minutes of kills; run by .ci/run (VERDICT_CHAOS_SECS, VERDICT_CHAOS_SEED)"]
async fn executions_survive_random_kills_of_the_worker_and_of_restate() {
    let seed = env_u64("VERDICT_CHAOS_SEED").unwrap_or_else(|| fastrand::u64(..));
    let secs = env_u64("VERDICT_CHAOS_SECS").unwrap_or(60);
    eprintln!("chaos: seed {seed} (VERDICT_CHAOS_SEED={seed} replays it), {secs} s");
    let mut rng = fastrand::Rng::with_seed(seed);
    let Some(mut restate) = Restate::start() else {
        return;
    };
    let client = restate.client();
    let ws = workspace();
    let model = ChaosModel::start(rng.u64(..)).await;
    let port = free_port();
    let flags = ["--tool-delay-ms", "40"];
    let key = restate.key.clone();
    let start_worker = || WorkerProc::start(port, &model.url(), ws.path(), &key, &flags);
    let mut worker = Some(start_worker());
    register(&client, worker.as_ref().unwrap()).await;

    // Submitters: one task per conversation, an execution after another
    // (each queued behind the running one by Restate), paced at random.
    let stop = Arc::new(AtomicBool::new(false));
    let mut submitters = Vec::new();
    for c in 0..CONVERSATIONS {
        let (client, stop) = (client.clone(), Arc::clone(&stop));
        let mut rng = fastrand::Rng::with_seed(rng.u64(..));
        submitters.push(tokio::spawn(async move {
            let conversation = format!("chaos-{c}");
            let mut submitted = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                let execution = ExecutionRef::new(&conversation).unwrap();
                let prompt = format!(
                    "[{conversation}] task {}: verify A42 and write the report.",
                    submitted.len()
                );
                submit_through(&client, &execution, &prompt).await;
                submitted.push(execution);
                tokio::time::sleep(Duration::from_millis(rng.u64(200..2500))).await;
            }
            submitted
        }));
    }

    // The chaos: the worker killed every 0.1-1.5 s (started again after up
    // to 0.3 s), the server killed about every quarter of the budget (at
    // least every 30 s, at most every 8 s).
    let (mut worker_kills, mut restate_kills) = (0u64, 0u64);
    let end = Instant::now() + Duration::from_secs(secs);
    let restate_every = Duration::from_secs((secs / 4).clamp(8, 30));
    let mut next_restate = Instant::now() + restate_every.mul_f64(0.5 + rng.f64());
    while Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(rng.u64(100..1500))).await;
        if Instant::now() >= next_restate {
            restate.crash();
            restate_kills += 1;
            if rng.bool() {
                worker.take().unwrap().kill();
                worker_kills += 1;
            }
            tokio::time::sleep(Duration::from_millis(rng.u64(200..2000))).await;
            restate.restart();
            worker.get_or_insert_with(start_worker);
            next_restate = Instant::now() + restate_every.mul_f64(0.5 + rng.f64());
        } else {
            worker.take().unwrap().kill();
            worker_kills += 1;
            tokio::time::sleep(Duration::from_millis(rng.u64(0..300))).await;
            worker = Some(start_worker());
        }
    }
    stop.store(true, Ordering::SeqCst);
    let mut executions = Vec::new();
    for submitter in submitters {
        executions.extend(submitter.await.unwrap());
    }

    // Every execution ends.
    let deadline = Instant::now() + SETTLE + Duration::from_secs(secs / 2);
    let mut records: Vec<(ExecutionRef, Option<ExecutionRecord>)> = Vec::new();
    for execution in &executions {
        let record = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match client
                .wait(execution, Duration::from_millis(100), left)
                .await
            {
                Ok(record) => break record,
                Err(error) if Instant::now() < deadline => {
                    eprintln!("chaos: status of {execution}: {error}");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(_) => break None,
            }
        };
        records.push((execution.clone(), record));
    }

    // The counts on disk and at the model.
    let count = |name: &str| {
        let mut counts: HashMap<String, usize> = HashMap::new();
        for line in lines(ws.path(), name) {
            *counts.entry(line).or_default() += 1;
        }
        counts
    };
    let (attempts, writes) = (count("attempts.log"), count("writes.log"));
    // Each line is one key, whole (a torn or glued line would hide a count).
    let known: std::collections::HashSet<String> =
        executions.iter().map(|e| format!("{e}:1")).collect();
    let malformed: Vec<&String> = attempts
        .keys()
        .chain(writes.keys())
        .filter(|key| !known.contains(*key))
        .collect();
    assert!(
        malformed.is_empty(),
        "lines that are no write's key: {malformed:?}"
    );
    let seen = model.seen();
    let mut not_ended = Vec::new();
    let (mut completed, mut uncertain, mut other) = (0, 0, Vec::new());
    let mut false_alarms = 0;
    let mut ended_by_key: HashMap<String, Option<StopReason>> = HashMap::new();
    let mut journaled_model_calls = 0;
    let mut by_reason: BTreeMap<String, usize> = BTreeMap::new();
    for (execution, record) in &records {
        let key = format!("{execution}:1");
        let Some(record) = record
            .as_ref()
            .filter(|r| r.state != ExecutionState::Running)
        else {
            not_ended.push(execution.to_string());
            continue;
        };
        journaled_model_calls += record.model_calls;
        *by_reason
            .entry(format!("{:?}/{:?}", record.state, record.stop_reason()))
            .or_default() += 1;
        ended_by_key.insert(key.clone(), record.stop_reason());
        let started = attempts.get(&key).copied().unwrap_or(0);
        let took_effect = writes.get(&key).copied().unwrap_or(0);
        match record.stop_reason() {
            Some(StopReason::Completed) if record.state == ExecutionState::Finished => {
                completed += 1;
                assert!(record.uncertain.is_none(), "{record:?}");
                if record.tool_calls > 0 {
                    assert_eq!((started, took_effect), (1, 1), "{execution}: {record:?}");
                }
            }
            Some(StopReason::UncertainEffect) => {
                uncertain += 1;
                let call = record
                    .uncertain
                    .as_ref()
                    .expect("the uncertain call is named");
                assert_eq!(call.tool, "write_artifact", "{record:?}");
                assert_eq!(call.sequence, 1, "{record:?}");
                assert_eq!(call.idempotency_key, key, "{record:?}");
                assert!(
                    started <= 1,
                    "{execution}: the uncertain write started twice"
                );
                assert!(took_effect <= started, "{execution}");
                if started == 0 {
                    false_alarms += 1;
                }
            }
            _ => other.push(format!("{execution}: {record:?}")),
        }
    }
    let twice: Vec<_> = attempts.iter().filter(|(_, n)| **n > 1).collect();
    // Every write that started belongs to an execution that completed or
    // stopped on it as uncertain.
    let unaccounted: Vec<_> = attempts
        .keys()
        .filter(|key| {
            !matches!(
                ended_by_key.get(*key),
                Some(Some(StopReason::Completed | StopReason::UncertainEffect))
            )
        })
        .collect();
    let effect_twice: Vec<_> = writes.iter().filter(|(_, n)| **n > 1).collect();
    let mut cross_talk = 0;
    for request in &seen {
        let prompts: Vec<&String> = request
            .users
            .iter()
            .filter(|t| !t.starts_with(FEEDBACK_LABEL))
            .collect();
        let tag = prompts
            .first()
            .and_then(|t| t.split(']').next())
            .unwrap_or_default();
        if prompts.iter().any(|t| t.split(']').next() != Some(tag)) {
            cross_talk += 1;
        }
    }

    eprintln!(
        "chaos figures: seed {seed}, {secs} s of chaos; {} conversations, {} executions \
         ({completed} completed, {uncertain} uncertain_effect of which {false_alarms} before \
         the write began, {} other, {} not ended); \
         {worker_kills} worker kills, {restate_kills} Restate kills; writes counted on disk: \
         {} started, {} took effect, {} started twice; model requests: {} ({} journaled, \
         {} asked again after a crash); cross-talk: {cross_talk}; outcomes {by_reason:?}",
        CONVERSATIONS,
        executions.len(),
        other.len(),
        not_ended.len(),
        attempts.values().sum::<usize>(),
        writes.values().sum::<usize>(),
        twice.len(),
        seen.len(),
        journaled_model_calls,
        (seen.len() as u64).saturating_sub(journaled_model_calls),
    );
    assert!(
        not_ended.is_empty(),
        "executions not ended: {not_ended:?}\n{}",
        restate.log()
    );
    assert!(twice.is_empty(), "writes started twice: {twice:?}");
    assert!(
        unaccounted.is_empty(),
        "writes of no ended execution: {unaccounted:?}"
    );
    assert!(
        effect_twice.is_empty(),
        "writes that took effect twice: {effect_twice:?}"
    );
    assert!(
        other.is_empty(),
        "executions that neither completed nor stopped uncertain: {other:?}"
    );
    assert_eq!(cross_talk, 0, "requests mixing conversations");
    // Every model call journaled was asked of the model at least once.
    assert!(seen.len() as u64 >= journaled_model_calls);
    assert!(worker_kills > 0 && restate_kills > 0);
    drop(worker);
}
