//! The connector's side of Messages ([`ClientProtocol`]): endpoint, request
//! encoding, message and event stream decoding.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::errors::ProviderError;
use crate::model::{
    FinishReason, Message, ModelRequest, ModelResponse, StreamEvent, ToolChoice, Usage,
};
use crate::protocols::assemble::{RawArgs, RawCall, ResponseBuilder, assemble};
use crate::protocols::client::{ClientProtocol, Endpoint, KeyHeader};
use crate::protocols::shared::error_from_event;
use crate::sse::StreamDecoder;

/// `max_tokens` is required by this API; used when the request sets none.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// Messages.
pub(crate) struct Anthropic;

impl ClientProtocol for Anthropic {
    fn endpoint(&self) -> Endpoint {
        Endpoint {
            fixed_headers: &[("anthropic-version", "2023-06-01")],
            ..Endpoint::new(
                "https://api.anthropic.com/v1",
                "ANTHROPIC_API_KEY",
                KeyHeader::Plain("x-api-key"),
            )
        }
    }

    fn url(&self, base: &str, _model: &str, _stream: bool) -> String {
        format!("{base}/messages")
    }

    /// The request body for `request`.
    fn encode_request(&self, request: &ModelRequest, stream: bool) -> Value {
        // Consecutive user-side entries (tool results, then text) form one user
        // message, tool results first, as the API requires.
        let mut messages: Vec<Value> = Vec::with_capacity(request.messages.len());
        let mut user_blocks: Vec<Value> = Vec::new();
        let flush = |blocks: &mut Vec<Value>, messages: &mut Vec<Value>| {
            if !blocks.is_empty() {
                messages.push(json!({"role": "user", "content": std::mem::take(blocks)}));
            }
        };
        for message in &request.messages {
            match message {
                Message::User { text } => user_blocks.push(json!({"type": "text", "text": text})),
                Message::ToolResult(r) => {
                    let mut block = json!({"type": "tool_result", "tool_use_id": r.call_id, "content": r.content});
                    if r.is_error {
                        block["is_error"] = json!(true);
                    }
                    user_blocks.push(block);
                }
                Message::Assistant { text, tool_calls } => {
                    flush(&mut user_blocks, &mut messages);
                    let mut content = Vec::with_capacity(tool_calls.len() + 1);
                    if let Some(text) = text.as_ref().filter(|t| !t.is_empty()) {
                        content.push(json!({"type": "text", "text": text}));
                    }
                    for c in tool_calls {
                        content.push(json!({"type": "tool_use", "id": c.id, "name": c.name,
                        "input": c.arguments}));
                    }
                    messages.push(json!({"role": "assistant", "content": content}));
                }
            }
        }
        flush(&mut user_blocks, &mut messages);
        let mut body = json!({
            "model": request.model,
            "max_tokens": request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            "messages": messages,
        });
        if let Some(instructions) = &request.instructions {
            body["system"] = json!(instructions);
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| {
                    let mut tool = json!({"name": t.name, "input_schema": t.parameters});
                    if let Some(d) = &t.description {
                        tool["description"] = json!(d);
                    }
                    tool
                })
                .collect();
            body["tool_choice"] = match &request.tool_choice {
                ToolChoice::Auto => json!({"type": "auto"}),
                ToolChoice::None => json!({"type": "none"}),
                ToolChoice::Required => json!({"type": "any"}),
                ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
            };
        }
        if let Some(schema) = &request.output_schema {
            body["output_config"] =
                json!({"format": {"type": "json_schema", "schema": schema.schema}});
        }
        if stream {
            body["stream"] = json!(true);
        }
        body
    }

    /// Decode a non-streaming response body.
    fn decode_response(&self, body: &[u8]) -> Result<ModelResponse, ProviderError> {
        let m: WireMessage = serde_json::from_slice(body)
            .map_err(|e| ProviderError::malformed(format!("message: {e}")))?;
        let finish = m
            .stop_reason
            .as_deref()
            .map(finish_reason)
            .ok_or_else(|| ProviderError::malformed("message has no stop_reason"))?;
        let mut text: Option<String> = None;
        let mut calls = Vec::new();
        for block in &m.content {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let piece = block.get("text").and_then(Value::as_str).unwrap_or("");
                    text.get_or_insert_with(String::new).push_str(piece);
                }
                Some("tool_use") => calls.push(RawCall {
                    id: block
                        .get("id")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    name: block
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    args: RawArgs::Json(block.get("input").cloned().unwrap_or(json!({}))),
                    signature: None,
                }),
                _ => {}
            }
        }
        let mut usage = Usage::default();
        m.usage.apply(&mut usage);
        assemble(m.id, m.model, text, calls, finish, usage)
    }

    fn stream_decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(MessagesStreamDecoder::new())
    }
}

/// Map `stop_reason`.
fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::MaxTokens,
        "stop_sequence" => FinishReason::StopSequence,
        "pause_turn" => FinishReason::Paused,
        "refusal" => FinishReason::Refusal,
        other => FinishReason::Other(other.to_owned()),
    }
}

#[derive(Deserialize, Default)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

impl WireUsage {
    fn apply(&self, usage: &mut Usage) {
        if let Some(n) = self.input_tokens {
            usage.input_tokens = n;
        }
        if let Some(n) = self.output_tokens {
            usage.output_tokens = n;
        }
        if let Some(n) = self.cache_read_input_tokens {
            usage.cached_input_tokens = n;
        }
    }
}

#[derive(Deserialize)]
struct WireMessage {
    id: Option<String>,
    model: Option<String>,
    #[serde(default)]
    content: Vec<Value>,
    stop_reason: Option<String>,
    #[serde(default)]
    usage: WireUsage,
}

/// Streaming decoder for Messages events.
#[derive(Default)]
pub(super) struct MessagesStreamDecoder {
    turn: ResponseBuilder,
    stopped: bool,
}

impl MessagesStreamDecoder {
    /// A fresh decoder.
    pub(super) fn new() -> Self {
        Self::default()
    }
}

impl StreamDecoder for MessagesStreamDecoder {
    fn event(
        &mut self,
        _name: &str,
        data: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<bool, ProviderError> {
        let v: Value = serde_json::from_str(data)
            .map_err(|e| ProviderError::malformed(format!("messages event: {e}")))?;
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        match v.get("type").and_then(Value::as_str).unwrap_or("") {
            "message_start" => {
                let m: WireMessage =
                    serde_json::from_value(v.get("message").cloned().unwrap_or(Value::Null))
                        .map_err(|e| ProviderError::malformed(format!("message_start: {e}")))?;
                self.turn.id = m.id;
                self.turn.model = m.model;
                m.usage.apply(&mut self.turn.usage);
            }
            "content_block_start" => {
                let block = v.get("content_block").unwrap_or(&Value::Null);
                if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                    self.turn.push_args(index, "");
                    if let Some(call) = self.turn.calls.get_mut(&index) {
                        let s = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or("");
                        call.id = s("id").to_owned();
                        call.name = s("name").to_owned();
                    }
                }
            }
            "content_block_delta" => {
                let delta = v.get("delta").unwrap_or(&Value::Null);
                let s = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or("");
                match s("type") {
                    "text_delta" => {
                        self.turn.push_text(s("text"));
                        out.push(StreamEvent::TextDelta(s("text").to_owned()));
                    }
                    "input_json_delta" => self.turn.push_args(index, s("partial_json")),
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = v
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    self.turn.finish = Some(finish_reason(reason));
                }
                if let Some(u) = v.get("usage") {
                    let u: WireUsage = serde_json::from_value(u.clone()).unwrap_or_default();
                    u.apply(&mut self.turn.usage);
                }
            }
            "message_stop" => {
                self.stopped = true;
                return Ok(true);
            }
            "error" => {
                return Err(error_from_event(v.get("error").unwrap_or(&Value::Null)));
            }
            _ => {}
        }
        Ok(false)
    }

    fn finish(self: Box<Self>) -> Result<ModelResponse, ProviderError> {
        if !self.stopped {
            return Err(ProviderError::truncated("no message_stop event"));
        }
        self.turn.build()
    }
}
