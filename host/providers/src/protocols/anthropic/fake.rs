//! The fake provider's side of Messages ([`FakeProtocol`]): reading a
//! request back into the neutral form and writing messages, stream events
//! and Anthropic's error object.

use serde_json::{Value, json};

use super::Anthropic;
use crate::errors::ProviderError;
use crate::model::{
    FinishReason, Message, ModelRequest, ModelResponse, OutputSchema, ToolCall, ToolChoice,
    ToolDefinition, ToolResult,
};
use crate::protocols::fake::FakeProtocol;
use crate::protocols::shared::{split_chunks, str_of};
use crate::sse::SseFrame;

fn blocks(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::String(s)) => vec![json!({"type": "text", "text": s})],
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    }
}

fn result_text(content: Option<&Value>) -> String {
    blocks(content)
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect()
}

impl FakeProtocol for Anthropic {
    fn routes(&self) -> &'static [&'static str] {
        &["/v1/messages"]
    }

    /// Read a request body back into a [`ModelRequest`].
    fn decode_request(&self, body: &Value, _model: &str) -> Result<ModelRequest, ProviderError> {
        let bad = |what: &str| ProviderError::malformed(format!("messages request: {what}"));
        let mut request = ModelRequest {
            model: str_of(body, "model").ok_or_else(|| bad("no model"))?,
            instructions: match body.get("system") {
                Some(Value::String(s)) => Some(s.clone()),
                Some(v @ Value::Array(_)) => Some(result_text(Some(v))),
                _ => None,
            },
            messages: Vec::new(),
            tools: Vec::new(),
            tool_choice: ToolChoice::Auto,
            output_schema: None,
            max_tokens: body
                .get("max_tokens")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok()),
        };
        let mut names = std::collections::HashMap::new();
        let messages = body
            .get("messages")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("no messages"))?;
        for m in messages {
            let content = blocks(m.get("content"));
            if m.get("role").and_then(Value::as_str) == Some("assistant") {
                let mut text: Option<String> = None;
                let mut tool_calls = Vec::new();
                for b in &content {
                    match b.get("type").and_then(Value::as_str) {
                        Some("text") => text
                            .get_or_insert_with(String::new)
                            .push_str(b.get("text").and_then(Value::as_str).unwrap_or("")),
                        Some("tool_use") => {
                            let call = ToolCall {
                                id: str_of(b, "id").unwrap_or_default(),
                                name: str_of(b, "name").unwrap_or_default(),
                                arguments: b.get("input").cloned().unwrap_or(json!({})),
                                signature: None,
                            };
                            names.insert(call.id.clone(), call.name.clone());
                            tool_calls.push(call);
                        }
                        _ => {}
                    }
                }
                request
                    .messages
                    .push(Message::Assistant { text, tool_calls });
                continue;
            }
            for b in &content {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => request
                        .messages
                        .push(Message::user(str_of(b, "text").unwrap_or_default())),
                    Some("tool_result") => {
                        let call_id = str_of(b, "tool_use_id").ok_or_else(|| bad("tool_use_id"))?;
                        request.messages.push(Message::ToolResult(ToolResult {
                            name: names.get(&call_id).cloned().unwrap_or_default(),
                            call_id,
                            content: match b.get("content") {
                                Some(Value::String(s)) => s.clone(),
                                other => result_text(other),
                            },
                            is_error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                        }));
                    }
                    _ => {}
                }
            }
        }
        for t in body
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            request.tools.push(ToolDefinition {
                name: str_of(t, "name").ok_or_else(|| bad("tool name"))?,
                description: str_of(t, "description"),
                parameters: t.get("input_schema").cloned().unwrap_or(json!({})),
            });
        }
        if let Some(choice) = body.get("tool_choice") {
            request.tool_choice = match choice.get("type").and_then(Value::as_str) {
                Some("none") => ToolChoice::None,
                Some("any") => ToolChoice::Required,
                Some("tool") => ToolChoice::Tool(str_of(choice, "name").unwrap_or_default()),
                _ => ToolChoice::Auto,
            };
        }
        if let Some(format) = body.get("output_config").and_then(|c| c.get("format")) {
            request.output_schema = Some(OutputSchema {
                name: String::new(),
                schema: format.get("schema").cloned().unwrap_or(Value::Null),
            });
        }
        Ok(request)
    }

    /// A message body for `r`.
    fn render_response(&self, r: &ModelResponse, model: &str) -> Value {
        json!({
            "id": r.id.as_deref().unwrap_or("msg_fake"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content_blocks(r),
            "stop_reason": wire_stop(&r.finish_reason),
            "stop_sequence": null,
            "usage": {"input_tokens": r.usage.input_tokens, "output_tokens": r.usage.output_tokens,
                      "cache_read_input_tokens": r.usage.cached_input_tokens,
                      "cache_creation_input_tokens": 0},
        })
    }

    /// The events of a stream for `r`.
    fn render_stream(&self, r: &ModelResponse, model: &str, chunk: usize) -> Vec<SseFrame> {
        let ev = |kind: &str, mut data: Value| {
            data["type"] = json!(kind);
            SseFrame::named(kind, data.to_string())
        };
        let mut start = self.render_response(r, model);
        start["content"] = json!([]);
        start["stop_reason"] = Value::Null;
        start["usage"]["output_tokens"] = json!(1);
        let mut frames = vec![ev("message_start", json!({"message": start}))];
        // The real API pings right after the first block starts.
        let ping = |frames: &mut Vec<SseFrame>| {
            if !frames.iter().any(|f| f.event.as_deref() == Some("ping")) {
                frames.push(ev("ping", json!({})));
            }
        };
        let mut index = 0usize;
        if let Some(text) = &r.text {
            frames.push(ev(
                "content_block_start",
                json!({"index": index, "content_block": {"type": "text", "text": ""}}),
            ));
            ping(&mut frames);
            for piece in split_chunks(text, chunk) {
                frames.push(ev(
                    "content_block_delta",
                    json!({"index": index, "delta": {"type": "text_delta", "text": piece}}),
                ));
            }
            frames.push(ev("content_block_stop", json!({"index": index})));
            index += 1;
        }
        for c in &r.tool_calls {
            frames.push(ev(
                "content_block_start",
                json!({"index": index,
            "content_block": {"type": "tool_use", "id": c.id, "name": c.name, "input": {}}}),
            ));
            ping(&mut frames);
            for piece in split_chunks(&c.arguments.to_string(), chunk) {
                frames.push(ev("content_block_delta",
                json!({"index": index, "delta": {"type": "input_json_delta", "partial_json": piece}})));
            }
            frames.push(ev("content_block_stop", json!({"index": index})));
            index += 1;
        }
        ping(&mut frames);
        frames.push(ev(
            "message_delta",
            json!({
                "delta": {"stop_reason": wire_stop(&r.finish_reason), "stop_sequence": null},
                "usage": {"output_tokens": r.usage.output_tokens},
            }),
        ));
        frames.push(ev("message_stop", json!({})));
        frames
    }

    fn render_error(&self, status: u16, message: &str) -> Value {
        json!({"type": "error", "error": {"type": error_kind(status), "message": message}})
    }

    /// An `error` stream event (the same object as the HTTP body).
    fn render_error_event(&self, status: u16, message: &str) -> SseFrame {
        SseFrame::named("error", self.render_error(status, message).to_string())
    }
}

/// Anthropic's error `type` for an HTTP status.
fn error_kind(status: u16) -> &'static str {
    match status {
        429 => "rate_limit_error",
        529 => "overloaded_error",
        401 => "authentication_error",
        500..=599 => "api_error",
        _ => "invalid_request_error",
    }
}

fn wire_stop(reason: &FinishReason) -> &str {
    match reason {
        FinishReason::Stop | FinishReason::ContentFilter => "end_turn",
        FinishReason::ToolCalls => "tool_use",
        FinishReason::MaxTokens => "max_tokens",
        FinishReason::StopSequence => "stop_sequence",
        FinishReason::Refusal => "refusal",
        FinishReason::Paused => "pause_turn",
        FinishReason::Other(s) => s,
    }
}

fn content_blocks(r: &ModelResponse) -> Vec<Value> {
    let mut content = Vec::new();
    if let Some(text) = &r.text {
        content.push(json!({"type": "text", "text": text}));
    }
    for c in &r.tool_calls {
        content.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}));
    }
    content
}
