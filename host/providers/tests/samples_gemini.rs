//! Gemini parsers against real recorded bodies.

use crate::common;

use common::{calls_of, completed, decode_stream, sample, text_of};
use serde_json::json;
use verdict_providers::wire::{GEMINI_SYNTHETIC_ID_PREFIX, classify_error, decode_response};
use verdict_providers::{FinishReason, Protocol, ProviderError};

const P: Protocol = Protocol::Gemini;

#[test]
fn nonstream_text() {
    let r = decode_response(P, &sample("gemini/nonstream-text.json")).unwrap();
    assert_eq!(r.text.as_deref(), Some("Hello! How can I help you today?"));
    assert_eq!(r.finish_reason, FinishReason::Stop);
    assert_eq!(r.usage.input_tokens, 9);
    assert_eq!(
        (r.usage.output_tokens, r.usage.reasoning_tokens),
        (9 + 34, 34)
    );
}

#[test]
fn nonstream_function_call_keeps_its_thought_signature() {
    let r = decode_response(P, &sample("gemini/nonstream-function-call.json")).unwrap();
    assert_eq!(r.finish_reason, FinishReason::ToolCalls);
    let call = &r.tool_calls[0];
    assert_eq!(call.name, "get_weather");
    assert_eq!(call.arguments, json!({"city": "Paris"}));
    assert!(call.id.starts_with(GEMINI_SYNTHETIC_ID_PREFIX));
    assert!(
        call.signature
            .as_deref()
            .unwrap()
            .starts_with("CusBAXLI2nx")
    );
}

#[test]
fn nonstream_parallel_function_calls_get_distinct_ids() {
    let r = decode_response(P, &sample("gemini/nonstream-function-calls-parallel.json")).unwrap();
    assert_eq!(r.tool_calls.len(), 3);
    assert!(r.tool_calls.iter().all(|c| c.name == "generate_topic"));
    let mut ids: Vec<_> = r.tool_calls.iter().map(|c| c.id.clone()).collect();
    ids.dedup();
    assert_eq!(ids.len(), 3);
    assert!(r.tool_calls[0].signature.is_some());
    assert!(r.tool_calls[1].signature.is_none());
}

#[test]
fn stream_text_crlf_separated() {
    let events = decode_stream(P, "gemini/stream-text.sse").unwrap();
    assert_eq!(text_of(&events), "The capital of France is Paris.\n");
    let r = completed(&events);
    assert_eq!(r.finish_reason, FinishReason::Stop);
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (13, 8));

    let events = decode_stream(P, "gemini/stream-text-usage-2-5-flash.sse").unwrap();
    assert_eq!(text_of(&events).chars().count(), 80);
    let usage = completed(&events).usage;
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.reasoning_tokens
        ),
        (18, 115, 35)
    );
}

#[test]
fn stream_function_calls() {
    let events = decode_stream(P, "gemini/stream-function-call.sse").unwrap();
    let calls = calls_of(&events);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "get_capital");
    assert_eq!(calls[0].arguments, json!({"country": "France"}));
    assert_eq!(completed(&events).finish_reason, FinishReason::ToolCalls);

    let events = decode_stream(P, "gemini/stream-function-call-thought-signature.sse").unwrap();
    let calls = calls_of(&events);
    assert_eq!(calls[0].name, "get_country");
    assert!(
        calls[0]
            .signature
            .as_deref()
            .unwrap()
            .starts_with("EpwICpkI")
    );
    assert_eq!(completed(&events).usage.reasoning_tokens, 202);
}

#[test]
fn error_bodies() {
    let err = classify_error(
        404,
        &Default::default(),
        &sample("gemini/error-404-not-found.json"),
    );
    assert!(
        matches!(&err, ProviderError::BadRequest { status: 404, message } if message.contains("gemini-3.6-flahs")),
        "{err:?}"
    );
    let err = classify_error(
        400,
        &Default::default(),
        &sample("gemini/error-400-vertex-invalid-argument.json"),
    );
    assert!(matches!(err, ProviderError::BadRequest { status: 400, .. }));
}

#[test]
fn stream_without_finish_reason_is_truncated() {
    let text = String::from_utf8(sample("gemini/stream-text.sse")).unwrap();
    let cut = &text[..text.rfind("data:").unwrap()];
    let result = verdict_providers::wire::decode_stream(P, cut.as_bytes());
    assert!(
        matches!(result, Err(ProviderError::TruncatedStream { .. })),
        "{result:?}"
    );
}

#[test]
fn vertex_partial_args_parallel_calls() {
    // The file holds data payloads only (PROVENANCE.md): frame each as the
    // `data:` line of a CRLF-separated SSE event, as the API sends them.
    let payloads = String::from_utf8(sample(
        "gemini/stream-payloads-vertex-partial-args-parallel.jsonl",
    ))
    .unwrap();
    let body: String = payloads
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("data: {l}\r\n\r\n"))
        .collect();
    let events = verdict_providers::wire::decode_stream(P, body.as_bytes()).unwrap();
    let calls = calls_of(&events);
    assert_eq!(calls.len(), 2);
    assert!(calls.iter().all(|c| c.name == "getWeather"));
    assert_eq!(calls[0].arguments, json!({"location": "Boston"}));
    assert_eq!(calls[1].arguments, json!({"location": "San Francisco"}));
    assert!(calls[0].signature.is_some());
    assert_eq!(completed(&events).finish_reason, FinishReason::ToolCalls);

    // Cut before the call is closed: truncated, never a half-built call.
    let open: String = payloads
        .lines()
        .take(2)
        .map(|l| format!("data: {l}\r\n\r\n"))
        .collect();
    let mut with_stop = open.clone();
    with_stop.push_str("data: {\"candidates\": [{\"content\": {\"role\": \"model\", \"parts\": []}, \"finishReason\": \"STOP\"}]}\r\n\r\n");
    let result = verdict_providers::wire::decode_stream(P, with_stop.as_bytes());
    assert!(
        matches!(result, Err(ProviderError::TruncatedStream { .. })),
        "{result:?}"
    );
}
