//! A worker whose agent changed under a running execution: the execution
//! fails, its record naming what differed, and the conversation takes the
//! next execution (before, Restate retried the journal mismatch forever,
//! the record stayed `running` and the conversation's lock blocked every
//! later submit). And a checker that notes record ids replays to the same
//! record (before, the ids reached the diagnostics on the first attempt
//! only, so the replayed state write disagreed with the journal).

use std::time::Duration;

use serde_json::json;
use verdict_durable::{ExecutionRecord, ExecutionRef, ExecutionState};
use verdict_policy::StopReason;
use verdict_providers::fake::{Conversation, ScriptedTurn};

use crate::support::*;

/// A mismatch must end the execution well within this (a retried
/// mismatch never ends).
const MISMATCH_WAIT: Duration = Duration::from_secs(45);

/// The record of `execution` once it left `running`, within `limit`.
async fn ended(s: &Scenario, execution: &ExecutionRef, limit: Duration) -> ExecutionRecord {
    let end = std::time::Instant::now() + limit;
    loop {
        if let Ok(Some(record)) = s.client.status(execution).await
            && record.state != ExecutionState::Running
        {
            return record;
        }
        assert!(
            std::time::Instant::now() < end,
            "{execution} still running after {limit:?}: {:?}",
            s.client.status(execution).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A second story on the same conversation: read A42, then the answer.
fn second(tag: &str) -> Conversation {
    Conversation {
        first_user_contains: Some(tag.to_owned()),
        turns: vec![
            ScriptedTurn::tool_call("read-9", "read_artifact", json!({"id": "A42"})),
            ScriptedTurn::text("A42 is still ready."),
        ],
    }
}

/// Killed after the write was journaled, taken over by a worker with a
/// progress checker the execution did not start with: the replay fails at
/// the setup, naming the added checker, without calling the model or
/// writing again; the next execution of the conversation runs to the end.
#[tokio::test(flavor = "multi_thread")]
async fn an_added_progress_checker_fails_the_execution_and_frees_the_conversation() {
    let Some(mut s) = Scenario::start(
        vec![story("A42"), second("second task")],
        &["--pause-model", "3:{paused}"],
    )
    .await
    else {
        return;
    };
    let execution = s.submit("conv-1", "Verify A42 and write the report.").await;
    s.paused().await;
    let requests = s.fake.requests().len();
    s.take_over(&["--with-progress"]);
    let record = ended(&s, &execution, MISMATCH_WAIT).await;

    assert_eq!(record.state, ExecutionState::Failed, "{record:?}");
    let error = record.error.clone().unwrap_or_default();
    assert!(error.contains("step 0"), "{error}");
    assert!(
        error.contains("the progress checker was none, now a checker"),
        "{error}"
    );
    // The record keeps what the journal holds (the write, the refusal).
    assert_eq!(record.tool_calls, 1, "{record:?}");
    assert_eq!(s.lines("writes.log").len(), 1);
    assert_eq!(s.fake.requests().len(), requests);

    let next = s
        .submit("conv-1", "second task: is the artifact still ready?")
        .await;
    let record = ended(&s, &next, MISMATCH_WAIT).await;
    assert_eq!(
        record.stop_reason(),
        Some(StopReason::Completed),
        "{record:?}"
    );
    assert_eq!(record.output, "A42 is still ready.");
}

/// Killed inside the read (the write and its record journaled), taken
/// over by a worker without the read tool: the execution fails naming the
/// removed tool; the write never runs again.
#[tokio::test(flavor = "multi_thread")]
async fn a_removed_tool_fails_the_execution_naming_it() {
    let Some(mut s) = Scenario::start(vec![story("A42")], &["--pause-read", "{paused}"]).await
    else {
        return;
    };
    let execution = s.submit("conv-1", "Verify A42 and write the report.").await;
    s.paused().await;
    s.take_over(&["--without-read"]);
    let record = ended(&s, &execution, MISMATCH_WAIT).await;

    assert_eq!(record.state, ExecutionState::Failed, "{record:?}");
    let error = record.error.clone().unwrap_or_default();
    assert!(error.contains("tool read_artifact was removed"), "{error}");
    assert_eq!(s.lines("writes.log").len(), 1);
    assert_eq!(s.lines("reads.log").len(), 1);
}

/// A checker that notes a fresh record id per check (as a recording
/// checker does), the worker killed after the refused check and the
/// write: the next worker completes the execution, and its diagnostics
/// list exactly the ids of the checks that ran, the first one's included.
#[tokio::test(flavor = "multi_thread")]
async fn a_noting_checker_replays_to_the_record_ids_of_the_checks_that_ran() {
    let Some(mut s) = Scenario::start(
        vec![story("A42")],
        &["--noting-checker", "--pause-model", "3:{paused}"],
    )
    .await
    else {
        return;
    };
    let execution = s.submit("conv-1", "Verify A42 and write the report.").await;
    s.paused().await;
    s.take_over(&["--noting-checker"]);
    let record = ended(&s, &execution, MISMATCH_WAIT).await;

    let diagnostics = record.diagnostics.clone().expect("diagnostics");
    assert_eq!(
        diagnostics.reason,
        Some(StopReason::Completed),
        "{record:?}"
    );
    let noted = s.lines("records.log");
    assert_eq!(noted.len(), 2, "one check per process");
    assert_eq!(diagnostics.check_records, noted);
}
