//! Anthropic Messages parsers against real recorded bodies.

use crate::common;

use common::{calls_of, completed, decode_stream, sample, text_of};
use serde_json::json;
use verdict_providers::wire::classify_error;
use verdict_providers::wire::decode_response;
use verdict_providers::{FinishReason, Protocol, ProviderError, StreamEvent};

const P: Protocol = Protocol::Anthropic;

#[test]
fn nonstream_text() {
    let r = decode_response(P, &sample("anthropic/nonstream-text.json")).unwrap();
    assert_eq!(r.finish_reason, FinishReason::Stop);
    assert_eq!(
        r.text.as_deref(),
        Some("The weather in SF is currently **20°C** (68°F) and **Sunny**!")
    );
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (705, 25));
}

#[test]
fn nonstream_tool_use() {
    let r = decode_response(P, &sample("anthropic/nonstream-tool-use.json")).unwrap();
    assert_eq!(r.finish_reason, FinishReason::ToolCalls);
    assert_eq!(r.tool_calls[0].id, "toolu_013DU6hV4C1M8dJ32ybQFAFi");
    assert_eq!(
        r.tool_calls[0].arguments,
        json!({"location": "SF", "units": "c"})
    );

    let r = decode_response(P, &sample("anthropic/nonstream-text-and-tool-use.json")).unwrap();
    assert!(
        r.text
            .as_deref()
            .unwrap()
            .starts_with("I'll get the weather")
    );
    assert_eq!(r.tool_calls.len(), 1);
}

#[test]
fn nonstream_parallel_tool_use() {
    let r = decode_response(P, &sample("anthropic/nonstream-tool-use-parallel.json")).unwrap();
    let names: Vec<_> = r
        .tool_calls
        .iter()
        .map(|c| c.arguments["name"].clone())
        .collect();
    assert_eq!(
        names,
        [
            json!("Alice"),
            json!("Bob"),
            json!("Charlie"),
            json!("Daisy")
        ]
    );
    assert_eq!(r.finish_reason, FinishReason::ToolCalls);
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (423, 202));
}

#[test]
fn stream_text_with_ping_and_usage() {
    let events = decode_stream(P, "anthropic/stream-text.sse").unwrap();
    let text = text_of(&events);
    assert!(text.starts_with("The weather in San Francisco, CA is currently:"));
    assert_eq!(text.chars().count(), 117);
    let r = completed(&events);
    assert_eq!(r.finish_reason, FinishReason::Stop);
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (770, 38));

    let events = decode_stream(P, "anthropic/stream-text-sonnet-4-5.sse").unwrap();
    assert_eq!(text_of(&events), "[12345,67890]");
}

#[test]
fn stream_tool_use_input_json_deltas() {
    for (file, id) in [
        (
            "anthropic/stream-tool-use.sse",
            "toolu_018acGYLtfR52q9yDbWaEdQZ",
        ),
        (
            "anthropic/stream-tool-use-2.sse",
            "toolu_01TJoxvFknVdnV9XpWFPaRmY",
        ),
    ] {
        let events = decode_stream(P, file).unwrap();
        let calls = calls_of(&events);
        assert_eq!(calls.len(), 1, "{file}");
        assert_eq!(calls[0].id, id);
        assert_eq!(calls[0].name, "get_weather");
        assert_eq!(
            calls[0].arguments,
            json!({"location": "San Francisco, CA", "units": "f"})
        );
        let r = completed(&events);
        assert_eq!(r.finish_reason, FinishReason::ToolCalls);
        assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (656, 74));
    }
}

#[test]
fn stream_parallel_tool_use_with_empty_arguments() {
    let events = decode_stream(P, "anthropic/stream-tool-use-parallel.sse").unwrap();
    let calls = calls_of(&events);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].id, "toolu_01LtHJmixrs9NcWQkK8hu8hj");
    assert_eq!(calls[1].id, "toolu_01N8a4jWyf116qKTMqKKmjyt");
    assert!(calls.iter().all(|c| c.arguments == json!({})));

    let events = decode_stream(
        P,
        "anthropic/stream-text-then-parallel-tool-use-2025-05.sse",
    )
    .unwrap();
    assert!(text_of(&events).starts_with("I'll help you generate two names for a pet pelican"));
    assert_eq!(calls_of(&events).len(), 2);
    // Text deltas come first, tool calls after, Completed last.
    let first_call = events
        .iter()
        .position(|e| matches!(e, StreamEvent::ToolCall(_)))
        .unwrap();
    assert!(
        events[..first_call]
            .iter()
            .all(|e| matches!(e, StreamEvent::TextDelta(_)))
    );
}

#[test]
fn error_bodies() {
    let err = classify_error(
        429,
        &Default::default(),
        &sample("anthropic/error-429-rate-limit.json"),
    );
    assert!(
        matches!(&err, ProviderError::RateLimited { message, .. } if message.contains("rate limit of 20,000,000")),
        "{err:?}"
    );
    let err = classify_error(
        400,
        &Default::default(),
        &sample("anthropic/error-400-invalid-request.json"),
    );
    assert!(
        matches!(&err, ProviderError::BadRequest { message, .. } if message.contains("tool_result")),
        "{err:?}"
    );
}

#[test]
fn stream_without_message_stop_is_truncated() {
    let text = String::from_utf8(sample("anthropic/stream-tool-use.sse")).unwrap();
    let cut = &text[..text.find("event: message_stop").unwrap()];
    let result = verdict_providers::wire::decode_stream(P, cut.as_bytes());
    assert!(
        matches!(result, Err(ProviderError::TruncatedStream { .. })),
        "{result:?}"
    );
}
