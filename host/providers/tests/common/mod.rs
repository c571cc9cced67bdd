//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

use verdict_providers::sse::decode_sse_bytes;
use verdict_providers::{ModelResponse, Protocol, ProviderError, StreamEvent};

/// The recorded provider bodies in `shared/wire-samples`, beside the repo.
/// Panics (fails the test) when the folder is missing: these tests must
/// never pass without their data.
pub fn samples_dir() -> PathBuf {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/wire-samples"
    ));
    assert!(
        dir.join("README.md").is_file(),
        "wire samples not found at {}: clone the repo with shared/ beside it",
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
    decode_sse_bytes(&sample(name), protocol.stream_decoder())
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
