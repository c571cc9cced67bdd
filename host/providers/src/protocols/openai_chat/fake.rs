//! The fake provider's side of Chat Completions ([`FakeProtocol`]): reading
//! a request back into the neutral form and writing responses, chunks and
//! errors (OpenAI's error object; in a stream, as a chunk).

use serde_json::{Value, json};

use super::OpenAiChat;
use crate::errors::ProviderError;
use crate::model::{
    FinishReason, Message, ModelRequest, ModelResponse, OutputSchema, ToolCall, ToolChoice,
    ToolDefinition, ToolResult,
};
use crate::protocols::fake::FakeProtocol;
use crate::protocols::openai::{self, error_kind};
use crate::protocols::shared::{arguments_of, split_chunks, str_of};
use crate::sse::SseFrame;

impl FakeProtocol for OpenAiChat {
    fn routes(&self) -> &'static [&'static str] {
        &["/v1/chat/completions"]
    }

    /// Read a request body back into a [`ModelRequest`].
    fn decode_request(&self, body: &Value, _model: &str) -> Result<ModelRequest, ProviderError> {
        let bad = |what: &str| ProviderError::malformed(format!("chat request: {what}"));
        let mut request = ModelRequest {
            model: str_of(body, "model").ok_or_else(|| bad("no model"))?,
            instructions: None,
            messages: Vec::new(),
            tools: Vec::new(),
            tool_choice: ToolChoice::Auto,
            output_schema: None,
            max_tokens: body
                .get("max_completion_tokens")
                .or_else(|| body.get("max_tokens"))
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok()),
        };
        let messages = body
            .get("messages")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("no messages"))?;
        // Tool results need the tool name, which the wire does not carry: find it
        // from the earlier assistant call with the same id.
        let mut names = std::collections::HashMap::new();
        for m in messages {
            let content = str_of(m, "content");
            match m.get("role").and_then(Value::as_str) {
                Some("system" | "developer") => request.instructions = content,
                Some("user") => request.messages.push(Message::User {
                    text: content.unwrap_or_default(),
                }),
                Some("assistant") => {
                    let mut tool_calls = Vec::new();
                    for c in m
                        .get("tool_calls")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let f = c
                            .get("function")
                            .ok_or_else(|| bad("tool call without function"))?;
                        let call = ToolCall {
                            id: str_of(c, "id").unwrap_or_default(),
                            name: str_of(f, "name").unwrap_or_default(),
                            arguments: arguments_of(f.get("arguments"))?,
                            signature: None,
                        };
                        names.insert(call.id.clone(), call.name.clone());
                        tool_calls.push(call);
                    }
                    request.messages.push(Message::Assistant {
                        text: content,
                        tool_calls,
                    });
                }
                Some("tool") => {
                    let call_id = str_of(m, "tool_call_id").ok_or_else(|| bad("tool_call_id"))?;
                    request.messages.push(Message::ToolResult(ToolResult {
                        name: names.get(&call_id).cloned().unwrap_or_default(),
                        call_id,
                        content: content.unwrap_or_default(),
                        is_error: false,
                    }));
                }
                _ => return Err(bad("unknown role")),
            }
        }
        for t in body
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let f = t
                .get("function")
                .ok_or_else(|| bad("tool without function"))?;
            request.tools.push(ToolDefinition {
                name: str_of(f, "name").ok_or_else(|| bad("tool name"))?,
                description: str_of(f, "description"),
                parameters: f.get("parameters").cloned().unwrap_or(json!({})),
            });
        }
        request.tool_choice = match body.get("tool_choice") {
            Some(Value::String(s)) if s == "none" => ToolChoice::None,
            Some(Value::String(s)) if s == "required" => ToolChoice::Required,
            Some(Value::Object(o)) => ToolChoice::Tool(
                o.get("function")
                    .and_then(|f| str_of(f, "name"))
                    .unwrap_or_default(),
            ),
            _ => ToolChoice::Auto,
        };
        if let Some(js) = body
            .get("response_format")
            .and_then(|f| f.get("json_schema"))
        {
            request.output_schema = Some(OutputSchema {
                name: str_of(js, "name").unwrap_or_default(),
                schema: js.get("schema").cloned().unwrap_or(Value::Null),
            });
        }
        Ok(request)
    }

    /// A `chat.completion` body for `r`.
    fn render_response(&self, r: &ModelResponse, model: &str) -> Value {
        let mut message = json!({"role": "assistant", "content": r.text, "refusal": null});
        if r.finish_reason == FinishReason::Refusal {
            message["content"] = Value::Null;
            message["refusal"] = json!(r.text);
        }
        if !r.tool_calls.is_empty() {
            message["tool_calls"] = r
                .tool_calls
                .iter()
                .map(|c| {
                    with_id(
                        json!({"type": "function",
                       "function": {"name": c.name, "arguments": c.arguments.to_string()}}),
                        &c.id,
                    )
                })
                .collect();
        }
        json!({
            "id": r.id.as_deref().unwrap_or("chatcmpl-fake"),
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": null,
                         "finish_reason": wire_finish(&r.finish_reason)}],
            "usage": wire_usage(r),
        })
    }

    /// The chunks of a stream for `r`: role, text pieces, tool-call fragments,
    /// finish reason, usage, `[DONE]`.
    fn render_stream(&self, r: &ModelResponse, model: &str, chunk: usize) -> Vec<SseFrame> {
        let id = r.id.as_deref().unwrap_or("chatcmpl-fake");
        let frame = |choices: Value| {
            SseFrame::data(
                json!({"id": id, "object": "chat.completion.chunk", "created": 0,
                   "model": model, "choices": choices})
                .to_string(),
            )
        };
        let delta = |d: Value| frame(json!([{"index": 0, "delta": d, "finish_reason": null}]));
        let mut frames = vec![delta(json!({"role": "assistant", "content": null}))];
        let text_key = if r.finish_reason == FinishReason::Refusal {
            "refusal"
        } else {
            "content"
        };
        for piece in split_chunks(r.text.as_deref().unwrap_or(""), chunk) {
            frames.push(delta(json!({ text_key: piece })));
        }
        for (index, c) in r.tool_calls.iter().enumerate() {
            let call = with_id(
                json!({"index": index, "type": "function",
                   "function": {"name": c.name, "arguments": ""}}),
                &c.id,
            );
            frames.push(delta(json!({ "tool_calls": [call] })));
            for piece in split_chunks(&c.arguments.to_string(), chunk) {
                frames.push(delta(
                    json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                ));
            }
        }
        frames.push(frame(json!([{"index": 0, "delta": {},
        "finish_reason": wire_finish(&r.finish_reason)}])));
        frames.push(SseFrame::data(
            json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": model,
               "choices": [], "usage": wire_usage(r)})
            .to_string(),
        ));
        frames.push(SseFrame::data("[DONE]"));
        frames
    }

    fn render_error(&self, status: u16, message: &str) -> Value {
        openai::render_error(status, message)
    }

    /// An in-stream error chunk.
    fn render_error_event(&self, status: u16, message: &str) -> SseFrame {
        SseFrame::data(
            json!({"error": {"message": message, "type": error_kind(status), "code": null}})
                .to_string(),
        )
    }
}

fn wire_finish(reason: &FinishReason) -> &str {
    match reason {
        FinishReason::Stop | FinishReason::StopSequence | FinishReason::Refusal => "stop",
        FinishReason::MaxTokens => "length",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::ContentFilter => "content_filter",
        FinishReason::Paused => "stop",
        FinishReason::Other(s) => s,
    }
}

fn wire_usage(r: &ModelResponse) -> Value {
    json!({
        "prompt_tokens": r.usage.input_tokens,
        "completion_tokens": r.usage.output_tokens,
        "total_tokens": r.usage.input_tokens + r.usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": r.usage.cached_input_tokens},
        "completion_tokens_details": {"reasoning_tokens": r.usage.reasoning_tokens},
    })
}

/// `call` with its `id`; an empty id is left out, as OpenAI-compatible
/// servers that do not number their calls send it.
fn with_id(mut call: Value, id: &str) -> Value {
    if !id.is_empty() {
        call["id"] = json!(id);
    }
    call
}
