//! OpenAI Responses parsers against real recorded bodies.

use crate::common;

use common::{calls_of, completed, decode_stream, sample, text_of};
use serde_json::json;
use verdict_providers::wire::classify_error;
use verdict_providers::wire::decode_response;
use verdict_providers::{FinishReason, Protocol, ProviderError};

const P: Protocol = Protocol::OpenAiResponses;

#[test]
fn nonstream_text() {
    let r = decode_response(P, &sample("openai-responses/nonstream-text.json")).unwrap();
    assert_eq!(r.finish_reason, FinishReason::Stop);
    assert!(
        r.text
            .as_deref()
            .unwrap()
            .starts_with("I can't provide real-time updates")
    );
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (14, 50));
    assert_eq!(r.model.as_deref(), Some("gpt-4o-mini-2024-07-18"));
}

#[test]
fn nonstream_function_call_after_reasoning_item() {
    let r = decode_response(P, &sample("openai-responses/nonstream-function-call.json")).unwrap();
    assert_eq!(r.finish_reason, FinishReason::ToolCalls);
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].id, "call_E4xGYcmG4CvUzTabsGjXo6ba");
    assert_eq!(r.tool_calls[0].name, "get_weather");
    assert_eq!(r.tool_calls[0].arguments, json!({"city": "Paris"}));
    assert!(r.text.is_none());
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (50, 81));
}

#[test]
fn nonstream_parallel_function_calls() {
    let r = decode_response(
        P,
        &sample("openai-responses/nonstream-function-calls-parallel.json"),
    )
    .unwrap();
    let ids: Vec<_> = r.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "call_LWVp74L5HaH2KNvgVz9PJsrj",
            "call_YnRAWeTyxI91m5uNa5bxXwVO"
        ]
    );
    assert_eq!(r.tool_calls[1].arguments, json!({"loc_name": "London"}));
    assert_eq!(r.finish_reason, FinishReason::ToolCalls);
}

#[test]
fn stream_text() {
    for (file, text, usage) in [
        ("openai-responses/stream-text.sse", "2 + 2 = 4.", (589, 9)),
        (
            "openai-responses/stream-text-2025-03.sse",
            "The capital of France is Paris.",
            (278, 9),
        ),
    ] {
        let events = decode_stream(P, file).unwrap();
        assert_eq!(text_of(&events), text, "{file}");
        let r = completed(&events);
        assert_eq!(r.text.as_deref(), Some(text));
        assert_eq!(r.finish_reason, FinishReason::Stop);
        assert_eq!(
            (r.usage.input_tokens, r.usage.output_tokens),
            usage,
            "{file}"
        );
    }
}

#[test]
fn stream_function_call_arguments_split_across_deltas() {
    let events = decode_stream(P, "openai-responses/stream-function-call.sse").unwrap();
    let calls = calls_of(&events);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "call_kL0PCQV7M2WMoVX8V8OtYSAL");
    assert_eq!(calls[0].arguments, json!({"country": "France"}));
    assert_eq!(completed(&events).finish_reason, FinishReason::ToolCalls);
    assert_eq!(completed(&events).usage.input_tokens, 255);

    let events = decode_stream(
        P,
        "openai-responses/stream-reasoning-function-call-usage.sse",
    )
    .unwrap();
    let calls = calls_of(&events);
    assert_eq!(calls[0].name, "final_result");
    assert_eq!(calls[0].arguments, json!({"result": 6666}));
    let usage = completed(&events).usage;
    assert_eq!((usage.output_tokens, usage.reasoning_tokens), (469, 448));
}

#[test]
fn stream_text_then_function_call() {
    let events = decode_stream(P, "openai-responses/stream-text-then-function-call.sse").unwrap();
    assert_eq!(
        text_of(&events),
        "I\u{2019}ll check the capital lookup tool for \u{201c}PotatoLand.\u{201d}"
    );
    let calls = calls_of(&events);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "call_LabG58Uhrq9kZvR52BYKjToD");
    assert_eq!(calls[0].arguments, json!({"country": "PotatoLand"}));
    assert_eq!(completed(&events).usage.reasoning_tokens, 26);
}

#[test]
fn error_bodies() {
    let err = classify_error(
        400,
        &Default::default(),
        &sample("openai-responses/error-400-model-not-found.json"),
    );
    assert!(
        matches!(&err, ProviderError::BadRequest { status: 400, message } if message.contains("gpt-5.2-proo")),
        "{err:?}"
    );
}

#[test]
fn stream_without_completed_event_is_truncated() {
    let body = sample("openai-responses/stream-function-call.sse");
    let text = String::from_utf8(body).unwrap();
    let cut = &text[..text.find("event: response.completed").unwrap()];
    let result = verdict_providers::wire::decode_stream(P, cut.as_bytes());
    assert!(
        matches!(result, Err(ProviderError::TruncatedStream { .. })),
        "{result:?}"
    );
}
