//! Conversations side by side: two in flight while the worker dies, and a
//! second execution of a running conversation waiting for the first.

use std::time::Duration;

use serde_json::json;
use verdict_durable::ExecutionState;
use verdict_policy::StopReason;
use verdict_providers::Message;
use verdict_providers::fake::ScriptedTurn;

use crate::support::*;

fn user_texts(request: &verdict_providers::fake::RecordedRequest) -> Vec<String> {
    request
        .request
        .as_ref()
        .map(|r| {
            r.messages
                .iter()
                .filter_map(|m| match m {
                    Message::User { text } => Some(text.clone()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Two conversations in flight (each with two executions submitted at
/// once) when the worker is killed: a new worker completes all four; the
/// conversations never see each other's messages, and a conversation's
/// second execution starts only after its first ended (it sees the first's
/// final answer, the first never sees its prompt).
#[tokio::test(flavor = "multi_thread")]
async fn two_conversations_survive_a_crash_without_cross_talk_one_execution_at_a_time() {
    let mut conversations = vec![story("conv-a task"), story("conv-b task")];
    for conversation in &mut conversations {
        // The second execution: a read, then the answer.
        conversation.turns.push(ScriptedTurn::tool_call(
            "read-2",
            "read_artifact",
            json!({"id": "A42"}),
        ));
        conversation.turns.push(ScriptedTurn::text("Still ready."));
    }
    // From the third model call on, every call hangs: neither conversation
    // can finish its first execution before the crash.
    let Some(mut s) = Scenario::start(conversations, &["--pause-model", "3:{paused}"]).await else {
        return;
    };
    let a1 = s.submit("conv-a", "conv-a task: verify A42.").await;
    let b1 = s.submit("conv-b", "conv-b task: verify A42.").await;
    let a2 = s
        .submit("conv-a", "conv-a again: is A42 still ready?")
        .await;
    let b2 = s
        .submit("conv-b", "conv-b again: is A42 still ready?")
        .await;
    s.paused().await;
    // Let the other conversation reach its hanging call too.
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The second executions wait behind the first ones.
    for queued in [&a2, &b2] {
        assert!(s.client.status(queued).await.unwrap().is_none());
    }
    s.take_over(&[]);

    for execution in [&a1, &b1, &a2, &b2] {
        let record = s.finished(execution).await;
        assert_eq!(record.state, ExecutionState::Finished, "{record:?}");
        let diagnostics = record.diagnostics.expect("diagnostics");
        assert_eq!(
            diagnostics.reason,
            Some(StopReason::Completed),
            "{execution}"
        );
    }
    let requests = s.fake.requests();
    // 4 turns for each first execution, 2 for each second one.
    assert_eq!(requests.len(), 12);
    for (tag, other) in [("conv-a", "conv-b"), ("conv-b", "conv-a")] {
        let mine: Vec<Vec<String>> = requests
            .iter()
            .map(user_texts)
            .filter(|texts| texts.first().is_some_and(|t| t.starts_with(tag)))
            .collect();
        assert_eq!(mine.len(), 6, "{tag}");
        // No cross-talk.
        assert!(mine.iter().flatten().all(|t| !t.starts_with(other)));
        // One execution at a time: a request either predates the second
        // prompt entirely or comes after the first execution's answer.
        let second = format!("{tag} again");
        for texts in &mine {
            let has_second = texts.iter().any(|t| t.starts_with(&second));
            assert!(has_second || texts.len() <= 2, "{texts:?}");
        }
        let first_answer_seen = requests.iter().any(|r| {
            user_texts(r).iter().any(|t| t.starts_with(&second))
                && r.request.as_ref().is_some_and(|q| {
                    q.messages.iter().any(|m| {
                        matches!(m, Message::Assistant { text: Some(t), .. }
                            if t == "A42 is ready and the report is written.")
                    })
                })
        });
        assert!(
            first_answer_seen,
            "{tag}: the second execution ran on the first's conversation"
        );
    }
    // Each first execution wrote once.
    assert_eq!(s.lines("writes.log").len(), 2);
}
