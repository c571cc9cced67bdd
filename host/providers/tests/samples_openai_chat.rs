//! OpenAI Chat Completions parsers against real recorded bodies.

use crate::common;

use common::{calls_of, completed, decode_stream, sample, text_of};
use serde_json::json;
use verdict_providers::wire::decode_response;
use verdict_providers::{FinishReason, Protocol, ProviderError, StreamEvent};

const P: Protocol = Protocol::OpenAiChat;

#[test]
fn nonstream_text() {
    let r = decode_response(P, &sample("openai-chat/nonstream-text.json")).unwrap();
    assert_eq!(
        r.id.as_deref(),
        Some("chatcmpl-ABfvaueLEMLNYbT8YzpJxsmiQ6HSY")
    );
    assert_eq!(r.finish_reason, FinishReason::Stop);
    assert!(
        r.text
            .as_deref()
            .unwrap()
            .starts_with("I'm unable to provide real-time weather")
    );
    assert!(r.tool_calls.is_empty());
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (14, 37));
}

#[test]
fn nonstream_single_tool_call() {
    let r = decode_response(P, &sample("openai-chat/nonstream-tool-call.json")).unwrap();
    assert_eq!(r.finish_reason, FinishReason::ToolCalls);
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].name, "GetWeatherArgs");
    assert!(r.tool_calls[0].id.starts_with("call_"));
    assert_eq!(r.tool_calls[0].arguments["city"], json!("Edinburgh"));
}

#[test]
fn nonstream_parallel_tool_calls() {
    let r = decode_response(P, &sample("openai-chat/nonstream-tool-calls-parallel.json")).unwrap();
    assert_eq!(r.finish_reason, FinishReason::ToolCalls);
    let names: Vec<_> = r.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["GetWeatherArgs", "get_stock_price"]);
    assert_eq!(r.tool_calls[0].id, "call_fdNz3vOBKYgOIpMdWotB9MjY");
    assert_eq!(
        r.tool_calls[1].arguments,
        json!({"ticker": "AAPL", "exchange": "NASDAQ"})
    );
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (149, 60));

    let r2 = decode_response(
        P,
        &sample("openai-chat/nonstream-tool-calls-parallel-2025.json"),
    )
    .unwrap();
    assert_eq!(r2.tool_calls.len(), 2);
    assert_eq!(r2.finish_reason, FinishReason::ToolCalls);
}

#[test]
fn nonstream_length_is_max_tokens() {
    let r = decode_response(P, &sample("openai-chat/nonstream-finish-length.json")).unwrap();
    assert_eq!(r.finish_reason, FinishReason::MaxTokens);
    assert_eq!(r.text.as_deref(), Some("{\""));
    assert_eq!(r.usage.output_tokens, 1);
}

#[test]
fn stream_text_with_usage_chunk() {
    let events = decode_stream(P, "openai-chat/stream-text.sse").unwrap();
    let text = text_of(&events);
    assert_eq!(text.chars().count(), 159);
    assert!(text.starts_with("I'm unable to provide real-time weather updates."));
    let r = completed(&events);
    assert_eq!(r.text.as_deref(), Some(text.as_str()));
    assert_eq!(r.finish_reason, FinishReason::Stop);
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (14, 30));
    assert!(
        events
            .iter()
            .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
            .count()
            > 10
    );

    let events = decode_stream(P, "openai-chat/stream-text-2025.sse").unwrap();
    assert_eq!(text_of(&events), "The capital of Mexico is Mexico City.");
    assert_eq!(completed(&events).usage.input_tokens, 14);
}

#[test]
fn stream_tool_call_arguments_split_across_chunks() {
    for (file, id, name, args) in [
        (
            "openai-chat/stream-tool-call.sse",
            "call_c91SqDXlYFuETYv8mUHzz6pp",
            "GetWeatherArgs",
            json!({"city": "Edinburgh", "country": "UK", "units": "c"}),
        ),
        (
            "openai-chat/stream-tool-call-strict.sse",
            "call_CTf1nWJLqSeRgDqaCG27xZ74",
            "get_weather",
            json!({"city": "San Francisco", "state": "CA"}),
        ),
        (
            "openai-chat/stream-tool-call-2026.sse",
            "call_ZR5UUuTt3pf61kjwAJIYdVMj",
            "get_capital",
            json!({"country": "UK"}),
        ),
    ] {
        let events = decode_stream(P, file).unwrap();
        let calls = calls_of(&events);
        assert_eq!(calls.len(), 1, "{file}");
        assert_eq!(
            (calls[0].id.as_str(), calls[0].name.as_str()),
            (id, name),
            "{file}"
        );
        assert_eq!(calls[0].arguments, args, "{file}");
        let r = completed(&events);
        assert_eq!(r.finish_reason, FinishReason::ToolCalls, "{file}");
        assert_eq!(r.tool_calls, calls, "{file}");
        assert!(r.text.is_none(), "{file}");
    }
}

#[test]
fn stream_parallel_tool_calls_accumulate_by_index() {
    let events = decode_stream(P, "openai-chat/stream-tool-calls-parallel.sse").unwrap();
    let calls = calls_of(&events);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].id, "call_JMW1whyEaYG438VE1OIflxA2");
    assert_eq!(
        calls[0].arguments,
        json!({"city": "Edinburgh", "country": "GB", "units": "c"})
    );
    assert_eq!(calls[1].id, "call_DNYTawLBoN8fj3KN6qU9N1Ou");
    assert_eq!(
        calls[1].arguments,
        json!({"ticker": "AAPL", "exchange": "NASDAQ"})
    );
    assert_eq!(completed(&events).usage.output_tokens, 60);

    let events = decode_stream(P, "openai-chat/stream-tool-calls-parallel-2025.sse").unwrap();
    let names: Vec<_> = calls_of(&events).into_iter().map(|c| c.name).collect();
    assert_eq!(names, ["get_country", "get_product_name"]);
    assert_eq!(completed(&events).usage.input_tokens, 364);
}

#[test]
fn stream_length_refusal_and_multiple_choices() {
    let events = decode_stream(P, "openai-chat/stream-finish-length.sse").unwrap();
    assert_eq!(completed(&events).finish_reason, FinishReason::MaxTokens);

    let events = decode_stream(P, "openai-chat/stream-refusal.sse").unwrap();
    let r = completed(&events);
    assert_eq!(r.finish_reason, FinishReason::Refusal);
    assert_eq!(
        r.text.as_deref(),
        Some("I'm sorry, I can't assist with that request.")
    );

    // n=3: only choice 0 is the turn.
    let events = decode_stream(P, "openai-chat/stream-multiple-choices-n3.sse").unwrap();
    assert_eq!(
        completed(&events).text.as_deref(),
        Some(r#"{"city":"San Francisco","temperature":65,"units":"f"}"#)
    );
}

#[test]
fn error_bodies_keep_the_provider_message() {
    for (file, needle) in [
        (
            "openai-chat/error-400-invalid-request.json",
            "does not support 'system'",
        ),
        (
            "openai-chat/error-404-model-not-found.json",
            "does not exist",
        ),
    ] {
        let body = sample(file);
        let status = if file.contains("404") { 404 } else { 400 };
        let err = verdict_providers::wire::classify_error(status, &Default::default(), &body);
        match err {
            ProviderError::BadRequest { status: s, message } => {
                assert_eq!(s, status);
                assert!(message.contains(needle), "{message}");
            }
            other => panic!("{file}: {other:?}"),
        }
    }
}

#[test]
fn cut_sample_is_truncated_not_a_success() {
    let body = sample("openai-chat/stream-tool-call.sse");
    let cut = &body[..body.len() * 2 / 3];
    let result = verdict_providers::wire::decode_stream(P, cut);
    assert!(
        matches!(result, Err(ProviderError::TruncatedStream { .. })),
        "{result:?}"
    );
}
