//! Every protocol, non-streaming and streaming, through the real connector
//! against the fake provider on loopback.

use crate::common;

use common::{call, calls_of, connector, expected_id, text_of, wire_id};
use serde_json::json;
use verdict_providers::fake::{FakeProvider, Matcher, Reply, Script, ScriptedCall, ScriptedTurn};
use verdict_providers::{
    FinishReason, Message, ModelRequest, Protocol, StreamEvent, ToolDefinition, ToolResult, Usage,
};

fn request() -> ModelRequest {
    let mut r = ModelRequest::new("test-model", "What is the weather in Paris?");
    r.tools = vec![ToolDefinition {
        name: "get_weather".into(),
        description: Some("Weather for a city".into()),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    }];
    r
}

fn modes() -> impl Iterator<Item = (Protocol, bool)> {
    Protocol::ALL
        .into_iter()
        .flat_map(|p| [(p, false), (p, true)])
}

#[tokio::test]
async fn text_with_usage() {
    for (p, stream) in modes() {
        let usage = Usage {
            input_tokens: 12,
            output_tokens: 7,
            cached_input_tokens: 0,
            reasoning_tokens: 0,
        };
        let fake = FakeProvider::start(Script::new(vec![ScriptedTurn::reply(Reply {
            text: Some("Sunny and 21 degrees in Paris.".into()),
            usage,
            ..Reply::default()
        })]))
        .await
        .unwrap();
        let (r, events) = call(&connector(&fake, p), &request(), stream)
            .await
            .unwrap();
        let ctx = format!("{p:?} stream={stream}");
        assert_eq!(
            r.text.as_deref(),
            Some("Sunny and 21 degrees in Paris."),
            "{ctx}"
        );
        assert_eq!(r.finish_reason, FinishReason::Stop, "{ctx}");
        assert!(r.tool_calls.is_empty(), "{ctx}");
        assert_eq!(
            (r.usage.input_tokens, r.usage.output_tokens),
            (12, 7),
            "{ctx}"
        );
        assert_eq!(r.attempts, 1, "{ctx}");
        if stream {
            assert_eq!(text_of(&events), "Sunny and 21 degrees in Paris.", "{ctx}");
            let deltas = events
                .iter()
                .filter(|e| matches!(e, StreamEvent::TextDelta(_)));
            assert!(deltas.count() >= 7, "{ctx}: text should arrive in pieces");
        }
        assert_eq!(fake.requests().len(), 1, "{ctx}");
        assert_eq!(fake.requests()[0].stream, stream, "{ctx}");
    }
}

#[tokio::test]
async fn single_and_parallel_tool_calls() {
    for (p, stream) in modes() {
        let ctx = format!("{p:?} stream={stream}");
        let calls = vec![
            ScriptedCall {
                id: Some("call_paris".into()),
                name: "get_weather".into(),
                arguments: json!({"city": "Paris"}),
            },
            ScriptedCall {
                id: Some("call_rome".into()),
                name: "get_weather".into(),
                arguments: json!({"city": "Rome", "units": ["c", "f"], "nested": {"deep": true}}),
            },
        ];
        let fake = FakeProvider::start(Script::new(vec![
            ScriptedTurn::reply(Reply {
                tool_calls: calls[..1].to_vec(),
                ..Reply::default()
            }),
            ScriptedTurn::reply(Reply {
                text: Some("Checking both.".into()),
                tool_calls: calls.clone(),
                ..Reply::default()
            }),
        ]))
        .await
        .unwrap();
        let model = connector(&fake, p);
        let (one, events) = call(&model, &request(), stream).await.unwrap();
        assert_eq!(one.finish_reason, FinishReason::ToolCalls, "{ctx}");
        assert_eq!(one.tool_calls.len(), 1, "{ctx}");
        assert_eq!(
            one.tool_calls[0].id,
            expected_id(p, "call_paris", 0),
            "{ctx}"
        );
        assert_eq!(
            one.tool_calls[0].arguments,
            json!({"city": "Paris"}),
            "{ctx}"
        );
        if stream {
            assert_eq!(calls_of(&events), one.tool_calls, "{ctx}");
        }
        let (two, events) = call(&model, &request(), stream).await.unwrap();
        assert_eq!(two.text.as_deref(), Some("Checking both."), "{ctx}");
        let ids: Vec<_> = two.tool_calls.iter().map(|c| c.id.clone()).collect();
        assert_eq!(
            ids,
            [
                expected_id(p, "call_paris", 0),
                expected_id(p, "call_rome", 1)
            ],
            "{ctx}"
        );
        assert_eq!(two.tool_calls[1].arguments, calls[1].arguments, "{ctx}");
        if stream {
            assert_eq!(calls_of(&events).len(), 2, "{ctx}");
            assert!(
                matches!(events.last(), Some(StreamEvent::Completed(_))),
                "{ctx}"
            );
        }
    }
}

#[tokio::test]
async fn tool_results_are_sent_back() {
    for (p, stream) in modes() {
        let ctx = format!("{p:?} stream={stream}");
        let fake = FakeProvider::start(Script::new(vec![
            ScriptedTurn::tool_call("call_1", "get_weather", json!({"city": "Paris"})),
            ScriptedTurn::text("It is sunny.").when(Matcher::LastIsToolResult {
                call_id: wire_id(p, "call_1").into(),
            }),
        ]))
        .await
        .unwrap();
        let model = connector(&fake, p);
        let mut req = request();
        let (first, _) = call(&model, &req, stream).await.unwrap();
        req.messages.push(Message::from_response(&first));
        req.messages.push(Message::ToolResult(ToolResult {
            call_id: first.tool_calls[0].id.clone(),
            name: "get_weather".into(),
            content: "{\"sky\":\"sunny\"}".into(),
            is_error: false,
        }));
        let (second, _) = call(&model, &req, stream).await.unwrap();
        assert_eq!(second.text.as_deref(), Some("It is sunny."), "{ctx}");
        let sent = fake.requests()[1].request.clone().unwrap();
        match sent.messages.last() {
            Some(Message::ToolResult(r)) => {
                assert_eq!(r.call_id, wire_id(p, "call_1"), "{ctx}");
                assert_eq!(r.name, "get_weather", "{ctx}");
                assert_eq!(r.content, "{\"sky\":\"sunny\"}", "{ctx}");
            }
            other => panic!("{ctx}: last message {other:?}"),
        }
        assert_eq!(fake.remaining_turns(), 0, "{ctx}");
    }
}

#[tokio::test]
async fn arguments_split_into_one_character_events() {
    let args = json!({"query": "a fairly long argument string", "limit": 25, "tags": ["x", "y"]});
    for p in Protocol::ALL {
        let reply = Reply {
            tool_calls: vec![ScriptedCall {
                id: Some("call_split".into()),
                name: "search".into(),
                arguments: args.clone(),
            }],
            chunk_chars: Some(1),
            ..Reply::default()
        };
        // The fake really splits the arguments into one event per character
        // (Gemini sends whole calls, as the real API does).
        let frames = verdict_providers::wire::render_stream(p, &reply.to_response(0), "m", 1);
        let fragments = frames
            .iter()
            .filter(|f| {
                f.data.contains("\"search\"")
                    || f.data.contains("arguments")
                    || f.data.contains("partial_json")
            })
            .count();
        if p != Protocol::Gemini {
            assert!(
                fragments > args.to_string().len(),
                "{p:?}: {fragments} frames"
            );
        }
        let fake = FakeProvider::start(Script::new(vec![ScriptedTurn::reply(reply)]))
            .await
            .unwrap();
        let (r, events) = call(&connector(&fake, p), &request(), true).await.unwrap();
        assert_eq!(r.tool_calls[0].arguments, args, "{p:?}");
        assert_eq!(
            calls_of(&events)[0].id,
            expected_id(p, "call_split", 0),
            "{p:?}"
        );
    }
}

#[tokio::test]
async fn every_finish_reason_is_mapped() {
    use FinishReason::*;
    let table: Vec<(Protocol, Vec<(FinishReason, FinishReason)>)> = vec![
        (
            Protocol::OpenAiChat,
            vec![
                (Stop, Stop),
                (MaxTokens, MaxTokens),
                (ContentFilter, ContentFilter),
                (Refusal, Refusal),
                (Other("weird".into()), Other("weird".into())),
            ],
        ),
        (
            Protocol::OpenAiResponses,
            vec![
                (Stop, Stop),
                (MaxTokens, MaxTokens),
                (ContentFilter, ContentFilter),
                (Refusal, Refusal),
            ],
        ),
        (
            Protocol::Anthropic,
            vec![
                (Stop, Stop),
                (MaxTokens, MaxTokens),
                (StopSequence, StopSequence),
                (Refusal, Refusal),
                (Paused, Paused),
                (Other("model_context_window_exceeded".into()), MaxTokens),
                (Other("weird".into()), Other("weird".into())),
            ],
        ),
        (
            Protocol::Gemini,
            vec![
                (Stop, Stop),
                (MaxTokens, MaxTokens),
                (ContentFilter, ContentFilter),
                (Other("RECITATION".into()), ContentFilter),
                (
                    Other("MALFORMED_FUNCTION_CALL".into()),
                    Other("MALFORMED_FUNCTION_CALL".into()),
                ),
            ],
        ),
    ];
    for (p, cases) in table {
        for stream in [false, true] {
            for (scripted, expected) in &cases {
                let fake = FakeProvider::start(Script::new(vec![ScriptedTurn::reply(Reply {
                    text: Some("partial".into()),
                    finish_reason: Some(scripted.clone()),
                    ..Reply::default()
                })]))
                .await
                .unwrap();
                let (r, _) = call(&connector(&fake, p), &request(), stream)
                    .await
                    .unwrap();
                assert_eq!(
                    &r.finish_reason, expected,
                    "{p:?} stream={stream} {scripted:?}"
                );
            }
            // Tool calls: every protocol reports them as ToolCalls.
            let fake = FakeProvider::start(Script::new(vec![ScriptedTurn::tool_call(
                "c",
                "get_weather",
                json!({}),
            )]))
            .await
            .unwrap();
            let (r, _) = call(&connector(&fake, p), &request(), stream)
                .await
                .unwrap();
            assert_eq!(r.finish_reason, ToolCalls, "{p:?} stream={stream}");
        }
    }
}

#[tokio::test]
async fn tool_calls_cut_by_max_tokens_are_never_yielded() {
    for (p, stream) in modes() {
        let ctx = format!("{p:?} stream={stream}");
        let fake = FakeProvider::start(Script::new(vec![ScriptedTurn::reply(Reply {
            tool_calls: vec![ScriptedCall {
                id: Some("call_cut".into()),
                name: "delete_everything".into(),
                arguments: json!({"path": "/"}),
            }],
            finish_reason: Some(FinishReason::MaxTokens),
            ..Reply::default()
        })]))
        .await
        .unwrap();
        let (r, events) = call(&connector(&fake, p), &request(), stream)
            .await
            .unwrap();
        assert_eq!(r.finish_reason, FinishReason::MaxTokens, "{ctx}");
        assert!(r.tool_calls.is_empty(), "{ctx}");
        assert_eq!(r.dropped_tool_calls, 1, "{ctx}");
        assert!(calls_of(&events).is_empty(), "{ctx}");
    }
}
