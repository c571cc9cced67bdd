//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

use verdict_providers::{ModelResponse, Protocol, ProviderError, StreamEvent};

/// The recorded provider bodies in `tests/wire-samples` (see its
/// PROVENANCE.md). Panics (fails the test) when the folder is missing: these
/// tests must never pass without their data.
pub fn samples_dir() -> PathBuf {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/wire-samples"));
    assert!(
        dir.join("README.md").is_file(),
        "wire samples not found at {}",
        dir.display()
    );
    dir
}

/// Bytes of one sample file, e.g. `sample("anthropic/stream-text.sse")`.
pub fn sample(name: &str) -> Vec<u8> {
    let path = samples_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Decode a recorded SSE body with the protocol's stream decoder.
pub fn decode_stream(protocol: Protocol, name: &str) -> Result<Vec<StreamEvent>, ProviderError> {
    verdict_providers::wire::decode_stream(protocol, &sample(name))
}

/// The final response of a decoded stream (the last event).
pub fn completed(events: &[StreamEvent]) -> &ModelResponse {
    match events.last() {
        Some(StreamEvent::Completed(r)) => r,
        other => panic!("stream did not end with Completed: {other:?}"),
    }
}

/// Concatenated text deltas.
pub fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

/// Tool-call events, in order.
pub fn calls_of(events: &[StreamEvent]) -> Vec<verdict_providers::ToolCall> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCall(c) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

/// Call `model` once, non-streaming or streaming; for a stream, also return
/// every event (the response is the `Completed` one).
pub async fn call(
    model: &dyn verdict_providers::Model,
    request: &verdict_providers::ModelRequest,
    stream: bool,
) -> Result<(ModelResponse, Vec<StreamEvent>), ProviderError> {
    use futures::StreamExt;
    let ctx = verdict_providers::CallContext::default();
    if !stream {
        return model.complete(request, &ctx).await.map(|r| (r, Vec::new()));
    }
    let mut events = Vec::new();
    let mut stream = model.stream(request, &ctx).await?;
    while let Some(event) = stream.next().await {
        events.push(event?);
    }
    let response = completed(&events).clone();
    Ok((response, events))
}

/// A connector for `protocol` pointed at `fake`.
pub fn connector(
    fake: &verdict_providers::fake::FakeProvider,
    protocol: Protocol,
) -> verdict_providers::Connector {
    verdict_providers::Connector::new(fake.connector_config(protocol))
        .unwrap_or_else(|e| panic!("connector: {e}"))
}

/// The id the connector gives the scripted call `id`, the `n`th of its
/// response: Gemini sends no ids, so its connector numbers the calls.
pub fn expected_id(p: Protocol, id: &str, n: usize) -> String {
    match p {
        Protocol::Gemini => format!("{}{n}", verdict_providers::wire::GEMINI_SYNTHETIC_ID_PREFIX),
        _ => id.to_owned(),
    }
}

/// The call id a tool result carries on `p`'s wire (none on Gemini's).
pub fn wire_id(p: Protocol, id: &str) -> &str {
    if p == Protocol::Gemini { "" } else { id }
}
