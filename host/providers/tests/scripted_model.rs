//! The scripted model in-process: same script semantics as the HTTP fake,
//! without a socket.

use crate::common;

use std::time::Duration;

use common::{call, calls_of, connector, expected_id, text_of, wire_id};
use serde_json::json;
use verdict_providers::fake::{
    Conversation, FakeProvider, Fault, Matcher, Reply, Script, ScriptedCall, ScriptedModel,
    ScriptedTurn,
};
use verdict_providers::{
    FinishReason, Message, ModelRequest, ModelResponse, Protocol, ProviderError, RetryPolicy,
    ToolResult, Usage,
};

fn script() -> Script {
    script_for(Protocol::OpenAiChat)
}

/// The script, its follow-up expecting the result under the id `p`'s wire
/// carries (none on Gemini's).
fn script_for(p: Protocol) -> Script {
    Script::new(vec![
        ScriptedTurn::reply(Reply {
            text: Some("Looking it up.".into()),
            tool_calls: vec![ScriptedCall {
                id: Some("call_a".into()),
                name: "lookup".into(),
                arguments: json!({"key": "A42"}),
            }],
            usage: Usage {
                input_tokens: 30,
                output_tokens: 9,
                ..Usage::default()
            },
            ..Reply::default()
        }),
        ScriptedTurn::text("A42 is ready.").when(Matcher::LastIsToolResult {
            call_id: wire_id(p, "call_a").into(),
        }),
    ])
}

fn follow_up(first: &ModelResponse) -> ModelRequest {
    let mut request = ModelRequest::new("m", "Verify artifact A42.");
    request.messages.push(Message::from_response(first));
    request.messages.push(Message::ToolResult(ToolResult {
        call_id: first.tool_calls[0].id.clone(),
        name: "lookup".into(),
        content: "{\"ready\":true}".into(),
        is_error: false,
    }));
    request
}

/// What a loop sees of a response: text, calls, finish reason and usage,
/// without transport details (ids of the response, attempts).
type Essence = (
    Option<String>,
    Vec<(String, String, serde_json::Value)>,
    FinishReason,
    Usage,
);

fn essence(r: &ModelResponse) -> Essence {
    (
        r.text.clone(),
        r.tool_calls
            .iter()
            .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
            .collect(),
        r.finish_reason.clone(),
        r.usage,
    )
}

#[tokio::test]
async fn in_process_and_http_give_the_same_turns() {
    for stream in [false, true] {
        let scripted = ScriptedModel::new(script());
        let first = request_of();
        let (a1, e1) = call(&scripted, &first, stream).await.unwrap();
        let (a2, _) = call(&scripted, &follow_up(&a1), stream).await.unwrap();
        assert_eq!(scripted.remaining_turns(), 0);
        assert_eq!(scripted.requests().len(), 2);
        if stream {
            assert_eq!(text_of(&e1), "Looking it up.");
            assert_eq!(calls_of(&e1).len(), 1);
        }
        for p in Protocol::ALL {
            let fake = FakeProvider::start(script_for(p)).await.unwrap();
            let model = connector(&fake, p);
            let (b1, _) = call(&model, &first, stream).await.unwrap();
            let (b2, _) = call(&model, &follow_up(&b1), stream).await.unwrap();
            let mut expected = essence(&a1);
            for (n, call) in expected.1.iter_mut().enumerate() {
                call.0 = expected_id(p, &call.0, n);
            }
            assert_eq!(expected, essence(&b1), "{p:?} stream={stream}");
            assert_eq!(essence(&a2).0, essence(&b2).0, "{p:?} stream={stream}");
            assert_eq!(a2.text.as_deref(), Some("A42 is ready."));
        }
    }
}

fn request_of() -> ModelRequest {
    ModelRequest::new("m", "Verify artifact A42.")
}

#[tokio::test]
async fn without_records_the_same_turns_come_and_no_request_is_kept() {
    let recorded = ScriptedModel::new(script());
    let unrecorded = ScriptedModel::new(script()).without_records();
    let (r1, _) = call(&recorded, &request_of(), false).await.unwrap();
    let (u1, _) = call(&unrecorded, &request_of(), false).await.unwrap();
    assert_eq!(u1, r1);
    let (r2, _) = call(&recorded, &follow_up(&r1), false).await.unwrap();
    let (u2, _) = call(&unrecorded, &follow_up(&u1), false).await.unwrap();
    assert_eq!(u2, r2);
    assert_eq!(unrecorded.remaining_turns(), 0);
    assert_eq!(recorded.requests().len(), 2);
    assert!(unrecorded.requests().is_empty());
}

#[tokio::test]
async fn a_request_that_does_not_match_the_script_is_refused() {
    let scripted = ScriptedModel::new(script());
    let (first, _) = call(&scripted, &request_of(), false).await.unwrap();
    assert_eq!(first.tool_calls.len(), 1);
    // The loop forgot to send the tool result back.
    let err = call(&scripted, &request_of(), false).await.unwrap_err();
    assert!(
        matches!(&err, ProviderError::BadRequest { status: 400, message } if message.contains("LastIsToolResult")),
        "{err:?}"
    );
    let err = call(&scripted, &request_of(), false).await.unwrap_err();
    assert!(
        matches!(&err, ProviderError::BadRequest { message, .. } if message.contains("exhausted"))
    );
}

#[tokio::test]
async fn conversations_are_told_apart_by_their_first_user_message() {
    let script = Script {
        conversations: vec![
            Conversation {
                first_user_contains: Some("alpha".into()),
                turns: vec![ScriptedTurn::text("for alpha")],
            },
            Conversation {
                first_user_contains: Some("beta".into()),
                turns: vec![ScriptedTurn::text("for beta")],
            },
        ],
    };
    let json_text = serde_json::to_string(&script).unwrap();
    let scripted = ScriptedModel::new(Script::from_json(&json_text).unwrap());
    let (b, _) = call(&scripted, &ModelRequest::new("m", "beta task"), true)
        .await
        .unwrap();
    let (a, _) = call(&scripted, &ModelRequest::new("m", "alpha task"), false)
        .await
        .unwrap();
    assert_eq!(b.text.as_deref(), Some("for beta"));
    assert_eq!(a.text.as_deref(), Some("for alpha"));
}

#[tokio::test]
async fn faults_in_process() {
    let scripted = ScriptedModel::new(Script::new(vec![
        ScriptedTurn::fault(Fault::Status {
            status: 503,
            message: "busy".into(),
            retry_after_secs: None,
        }),
        ScriptedTurn::text("recovered"),
        ScriptedTurn::fault(Fault::CutStream {
            after_frames: 2,
            reply: Reply {
                text: Some("abcdefghijkl".into()),
                tool_calls: vec![ScriptedCall {
                    id: None,
                    name: "x".into(),
                    arguments: json!({}),
                }],
                ..Reply::default()
            },
        }),
        ScriptedTurn::reply(Reply {
            tool_calls: vec![ScriptedCall {
                id: None,
                name: "x".into(),
                arguments: json!({}),
            }],
            finish_reason: Some(FinishReason::MaxTokens),
            ..Reply::default()
        }),
    ]))
    .with_retry(RetryPolicy {
        max_retries: 1,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(10),
    });
    let (r, _) = call(&scripted, &request_of(), false).await.unwrap();
    assert_eq!((r.text.as_deref(), r.attempts), (Some("recovered"), 2));

    let err = call(&scripted, &request_of(), true).await.unwrap_err();
    assert!(
        matches!(err, ProviderError::TruncatedStream { .. }),
        "{err:?}"
    );

    let (r, _) = call(&scripted, &request_of(), false).await.unwrap();
    assert!(r.tool_calls.is_empty());
    assert_eq!(r.dropped_tool_calls, 1);
}

#[tokio::test]
async fn a_stream_cut_before_its_first_event_is_retried_in_process() {
    let cut = |after_frames| {
        ScriptedTurn::fault(Fault::CutStream {
            after_frames,
            reply: Reply {
                text: Some("abcdefghijkl".into()),
                ..Reply::default()
            },
        })
    };
    let scripted = ScriptedModel::new(Script::new(vec![
        cut(0),
        ScriptedTurn::text("recovered"),
        cut(1),
    ]))
    .with_retry(RetryPolicy {
        max_retries: 1,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(10),
    });
    let (r, _) = call(&scripted, &request_of(), true).await.unwrap();
    assert_eq!((r.text.as_deref(), r.attempts), (Some("recovered"), 2));
    // After an event the cut reaches the caller.
    let err = call(&scripted, &request_of(), true).await.unwrap_err();
    assert!(
        matches!(err, ProviderError::TruncatedStream { .. }),
        "{err:?}"
    );
    assert_eq!(scripted.remaining_turns(), 0);
}
