//! Helpers the protocol folders share: reading vendor-neutral error bodies
//! and error events, JSON field access, and splitting text for the fake's
//! streams. Every vendor's shapes are read alike: nothing here dispatches on
//! a protocol.

use std::time::Duration;

#[cfg(feature = "http")]
use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::errors::ProviderError;
use crate::retry::parse_proto_duration;
#[cfg(feature = "http")]
use crate::retry::retry_after_from_headers;

/// Longest provider message kept in an error.
const MAX_ERROR_MESSAGE: usize = 2000;

/// Classify an HTTP error answer (status, headers, body), keeping the
/// provider's message and any retry-after hint.
#[cfg(feature = "http")]
pub(crate) fn classify_error(status: u16, headers: &HeaderMap, body: &[u8]) -> ProviderError {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let error = parsed.as_ref().and_then(|v| v.get("error"));
    let message = error
        .and_then(|e| e.get("message").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    let retry_after = retry_after_from_headers(headers).or_else(|| error.and_then(retry_delay));
    ProviderError::from_status(status, truncate(message), retry_after)
}

/// Gemini's `RetryInfo.retryDelay` inside `error.details`.
fn retry_delay(error: &Value) -> Option<Duration> {
    error
        .get("details")?
        .as_array()?
        .iter()
        .find_map(|d| d.get("retryDelay").and_then(Value::as_str))
        .and_then(parse_proto_duration)
}

/// Classify an `error` object received inside a stream.
pub(super) fn error_from_event(error: &Value) -> ProviderError {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("provider error event")
        .to_owned();
    let kind = ["type", "code", "status"]
        .iter()
        .find_map(|k| error.get(*k).and_then(Value::as_str))
        .unwrap_or("");
    let status = match kind {
        "rate_limit_error" | "rate_limit_exceeded" | "RESOURCE_EXHAUSTED" => 429,
        "overloaded_error" => 529,
        "authentication_error" | "invalid_api_key" | "PERMISSION_DENIED" => 401,
        "invalid_request_error" | "INVALID_ARGUMENT" => 400,
        _ => error
            .get("code")
            .and_then(Value::as_u64)
            .and_then(|c| u16::try_from(c).ok())
            .unwrap_or(500),
    };
    ProviderError::from_status(status, truncate(message), retry_delay(error))
}

fn truncate(mut message: String) -> String {
    if message.len() > MAX_ERROR_MESSAGE {
        let mut end = MAX_ERROR_MESSAGE;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    message
}

/// `value[key]` as an owned string.
#[cfg(feature = "fake")]
pub(super) fn str_of(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// Tool arguments sent as a JSON string or an object.
#[cfg(feature = "fake")]
pub(super) fn arguments_of(value: Option<&Value>) -> Result<Value, ProviderError> {
    match value {
        Some(Value::String(s)) if s.trim().is_empty() => Ok(Value::Object(Default::default())),
        Some(Value::String(s)) => serde_json::from_str(s)
            .map_err(|e| ProviderError::malformed(format!("tool arguments: {e}"))),
        Some(v) => Ok(v.clone()),
        None => Ok(Value::Object(Default::default())),
    }
}

/// Split `text` into pieces of at most `size` characters.
#[cfg(feature = "fake")]
pub(crate) fn split_chunks(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size.max(1))
        .map(|c| c.iter().collect())
        .collect()
}
