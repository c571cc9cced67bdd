//! The fake provider's side of Responses ([`FakeProtocol`]): reading a
//! request back into the neutral form and writing response objects, stream
//! events and errors (OpenAI's error object; in a stream, an `error` event).

use serde_json::{Value, json};

use super::OpenAiResponses;
use crate::errors::ProviderError;
use crate::model::{
    FinishReason, Message, ModelRequest, ModelResponse, OutputSchema, ToolCall, ToolChoice,
    ToolDefinition, ToolResult,
};
use crate::protocols::fake::FakeProtocol;
use crate::protocols::openai::{self, error_kind};
use crate::protocols::shared::{arguments_of, split_chunks, str_of};
use crate::sse::SseFrame;

/// Text of an input message's `content` (a string or `input_text` parts).
fn content_text(m: &Value) -> String {
    match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

impl FakeProtocol for OpenAiResponses {
    fn routes(&self) -> &'static [&'static str] {
        &["/v1/responses"]
    }

    /// Read a request body back into a [`ModelRequest`].
    fn decode_request(&self, body: &Value, _model: &str) -> Result<ModelRequest, ProviderError> {
        let bad = |what: &str| ProviderError::malformed(format!("responses request: {what}"));
        let mut request = ModelRequest {
            model: str_of(body, "model").ok_or_else(|| bad("no model"))?,
            instructions: str_of(body, "instructions"),
            messages: Vec::new(),
            tools: Vec::new(),
            tool_choice: ToolChoice::Auto,
            output_schema: None,
            max_tokens: body
                .get("max_output_tokens")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok()),
        };
        let mut names = std::collections::HashMap::new();
        let input = match body.get("input") {
            Some(Value::String(s)) => vec![json!({"role": "user", "content": s})],
            Some(Value::Array(items)) => items.clone(),
            _ => return Err(bad("no input")),
        };
        for item in &input {
            let kind = item
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("message");
            match (kind, item.get("role").and_then(Value::as_str)) {
                ("message", Some("user")) => {
                    request.messages.push(Message::user(content_text(item)))
                }
                ("message", Some("system" | "developer")) => {
                    request.instructions = Some(content_text(item));
                }
                ("message", Some("assistant")) => request.messages.push(Message::Assistant {
                    text: Some(content_text(item)),
                    tool_calls: Vec::new(),
                }),
                ("function_call", _) => {
                    let call = ToolCall {
                        id: str_of(item, "call_id").ok_or_else(|| bad("call_id"))?,
                        name: str_of(item, "name").unwrap_or_default(),
                        arguments: arguments_of(item.get("arguments"))?,
                        signature: None,
                    };
                    names.insert(call.id.clone(), call.name.clone());
                    // Consecutive calls (and a preceding text) form one turn.
                    match request.messages.last_mut() {
                        Some(Message::Assistant { tool_calls, .. }) => tool_calls.push(call),
                        _ => request.messages.push(Message::Assistant {
                            text: None,
                            tool_calls: vec![call],
                        }),
                    }
                }
                ("function_call_output", _) => {
                    let call_id = str_of(item, "call_id").ok_or_else(|| bad("call_id"))?;
                    request.messages.push(Message::ToolResult(ToolResult {
                        name: names.get(&call_id).cloned().unwrap_or_default(),
                        call_id,
                        content: str_of(item, "output").unwrap_or_default(),
                        is_error: false,
                    }));
                }
                _ => {}
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
                parameters: t.get("parameters").cloned().unwrap_or(json!({})),
            });
        }
        request.tool_choice = match body.get("tool_choice") {
            Some(Value::String(s)) if s == "none" => ToolChoice::None,
            Some(Value::String(s)) if s == "required" => ToolChoice::Required,
            Some(Value::Object(o)) => ToolChoice::Tool(
                o.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            ),
            _ => ToolChoice::Auto,
        };
        if let Some(format) = body.get("text").and_then(|t| t.get("format"))
            && format.get("type").and_then(Value::as_str) == Some("json_schema")
        {
            request.output_schema = Some(OutputSchema {
                name: str_of(format, "name").unwrap_or_default(),
                schema: format.get("schema").cloned().unwrap_or(Value::Null),
            });
        }
        Ok(request)
    }

    /// A response object for `r`.
    fn render_response(&self, r: &ModelResponse, model: &str) -> Value {
        response_object(r, model, final_status(r), output_items(r))
    }

    /// The events of a stream for `r`, in the order the real API sends them:
    /// `response.created`, `response.in_progress`; per message item
    /// `output_item.added`, `content_part.added`, the text (or refusal) deltas,
    /// `output_text.done` (`refusal.done`), `content_part.done`,
    /// `output_item.done`; per function call `output_item.added`, the argument
    /// deltas, `function_call_arguments.done`, `output_item.done`; then
    /// `response.completed` (or `response.incomplete`). Every event carries its
    /// `sequence_number`.
    fn render_stream(&self, r: &ModelResponse, model: &str, chunk: usize) -> Vec<SseFrame> {
        let mut frames = Vec::new();
        let mut ev = |kind: &str, mut data: Value| {
            data["type"] = json!(kind);
            data["sequence_number"] = json!(frames.len());
            frames.push(SseFrame::named(kind, data.to_string()));
        };
        let started = response_object(r, model, "in_progress", vec![]);
        ev("response.created", json!({"response": started}));
        ev("response.in_progress", json!({"response": started}));
        let mut index = 0usize;
        if let Some(text) = &r.text {
            let refusal = r.finish_reason == FinishReason::Refusal;
            let (part_kind, field, delta_kind, done_kind) = if refusal {
                (
                    "refusal",
                    "refusal",
                    "response.refusal.delta",
                    "response.refusal.done",
                )
            } else {
                (
                    "output_text",
                    "text",
                    "response.output_text.delta",
                    "response.output_text.done",
                )
            };
            let part = |content: &str| {
                let mut part = json!({"type": part_kind, field: content});
                if !refusal {
                    part["annotations"] = json!([]);
                }
                part
            };
            let empty = json!({"type": "message", "id": "msg_fake", "status": "in_progress",
                           "role": "assistant", "content": []});
            let at = json!({"item_id": "msg_fake", "output_index": index, "content_index": 0});
            let with = |mut base: Value, key: &str, value: Value| {
                base[key] = value;
                base
            };
            ev(
                "response.output_item.added",
                json!({"output_index": index, "item": empty}),
            );
            ev(
                "response.content_part.added",
                with(at.clone(), "part", part("")),
            );
            for piece in split_chunks(text, chunk) {
                ev(delta_kind, with(at.clone(), "delta", json!(piece)));
            }
            ev(done_kind, with(at.clone(), field, json!(text)));
            ev("response.content_part.done", with(at, "part", part(text)));
            ev(
                "response.output_item.done",
                json!({"output_index": index, "item": message_item(r, text)}),
            );
            index += 1;
        }
        for (i, c) in r.tool_calls.iter().enumerate() {
            let mut added = call_item(i, c);
            added["arguments"] = json!("");
            added["status"] = json!("in_progress");
            ev(
                "response.output_item.added",
                json!({"output_index": index, "item": added}),
            );
            let args = c.arguments.to_string();
            for piece in split_chunks(&args, chunk) {
                ev(
                    "response.function_call_arguments.delta",
                    json!({"item_id": format!("fc_{i}"), "output_index": index, "delta": piece}),
                );
            }
            ev(
                "response.function_call_arguments.done",
                json!({"item_id": format!("fc_{i}"), "output_index": index, "arguments": args}),
            );
            ev(
                "response.output_item.done",
                json!({"output_index": index, "item": call_item(i, c)}),
            );
            index += 1;
        }
        let status = final_status(r);
        ev(
            &format!("response.{status}"),
            json!({"response": response_object(r, model, status, output_items(r))}),
        );
        frames
    }

    fn render_error(&self, status: u16, message: &str) -> Value {
        openai::render_error(status, message)
    }

    /// An `error` stream event.
    fn render_error_event(&self, status: u16, message: &str) -> SseFrame {
        SseFrame::named(
            "error",
            json!({"type": "error", "code": error_kind(status), "message": message, "param": null})
                .to_string(),
        )
    }
}

fn message_item(r: &ModelResponse, text: &str) -> Value {
    let part = if r.finish_reason == FinishReason::Refusal {
        json!({"type": "refusal", "refusal": text})
    } else {
        json!({"type": "output_text", "text": text, "annotations": []})
    };
    json!({"type": "message", "id": "msg_fake", "status": "completed", "role": "assistant",
           "content": [part]})
}

fn call_item(index: usize, c: &ToolCall) -> Value {
    json!({"type": "function_call", "id": format!("fc_{index}"), "call_id": c.id,
           "name": c.name, "arguments": c.arguments.to_string(), "status": "completed"})
}

fn response_object(r: &ModelResponse, model: &str, status: &str, output: Vec<Value>) -> Value {
    let incomplete = match r.finish_reason {
        FinishReason::MaxTokens => json!({"reason": "max_output_tokens"}),
        FinishReason::ContentFilter => json!({"reason": "content_filter"}),
        _ => Value::Null,
    };
    json!({
        "id": r.id.as_deref().unwrap_or("resp_fake"),
        "object": "response",
        "created_at": 0,
        "status": status,
        "error": null,
        "incomplete_details": incomplete,
        "model": model,
        "output": output,
        "usage": {
            "input_tokens": r.usage.input_tokens,
            "input_tokens_details": {"cached_tokens": r.usage.cached_input_tokens},
            "output_tokens": r.usage.output_tokens,
            "output_tokens_details": {"reasoning_tokens": r.usage.reasoning_tokens},
            "total_tokens": r.usage.input_tokens + r.usage.output_tokens,
        },
    })
}

fn final_status(r: &ModelResponse) -> &'static str {
    match r.finish_reason {
        FinishReason::MaxTokens | FinishReason::ContentFilter => "incomplete",
        _ => "completed",
    }
}

fn output_items(r: &ModelResponse) -> Vec<Value> {
    let mut output = Vec::new();
    if let Some(text) = &r.text {
        output.push(message_item(r, text));
    }
    output.extend(
        r.tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| call_item(i, c)),
    );
    output
}
