//! Google Gemini (`models/{model}:generateContent` and
//! `:streamGenerateContent?alt=sse`).
//!
//! Tools are `functionDeclarations`; calls are `functionCall` parts with an
//! object `args` (and a `thoughtSignature` that must be echoed back); results
//! are `functionResponse` parts. Every SSE `data:` is a whole response chunk;
//! the stream has no end marker, so the last chunk must carry `finishReason`.

pub(crate) mod server;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::errors::ProviderError;
use crate::model::{
    FinishReason, Message, ModelRequest, ModelResponse, StreamEvent, ToolChoice, Usage,
};
use crate::protocol::error_from_event;
use crate::sse::StreamDecoder;
use crate::turn::{RawArgs, RawCall, TurnBuilder};

/// Prefix of the call ids this connector invents (Gemini sends none); such
/// ids are not sent back to the provider.
pub const SYNTHETIC_ID_PREFIX: &str = "gemini_call_";

/// The request body for `request` (the stream flag is in the URL).
pub fn encode_request(request: &ModelRequest) -> Value {
    let mut contents: Vec<Value> = Vec::with_capacity(request.messages.len());
    let real_id = |id: &str| (!id.starts_with(SYNTHETIC_ID_PREFIX)).then(|| id.to_owned());
    for message in &request.messages {
        let (role, part) = match message {
            Message::User { text } => ("user", vec![json!({"text": text})]),
            Message::Assistant { text, tool_calls } => {
                let mut parts = Vec::new();
                if let Some(text) = text.as_ref().filter(|t| !t.is_empty()) {
                    parts.push(json!({"text": text}));
                }
                for c in tool_calls {
                    let mut call = json!({"name": c.name, "args": c.arguments});
                    if let Some(id) = real_id(&c.id) {
                        call["id"] = json!(id);
                    }
                    let mut part = json!({"functionCall": call});
                    if let Some(sig) = &c.signature {
                        part["thoughtSignature"] = json!(sig);
                    }
                    parts.push(part);
                }
                ("model", parts)
            }
            Message::ToolResult(r) => {
                let key = if r.is_error { "error" } else { "result" };
                let mut response = json!({"name": r.name, "response": {key: r.content}});
                if let Some(id) = real_id(&r.call_id) {
                    response["id"] = json!(id);
                }
                ("user", vec![json!({"functionResponse": response})])
            }
        };
        // Consecutive entries of one role share one content (parallel
        // function responses go back together).
        match contents.last_mut() {
            Some(last) if last["role"] == role => {
                if let Some(parts) = last["parts"].as_array_mut() {
                    parts.extend(part);
                }
            }
            _ => contents.push(json!({"role": role, "parts": part})),
        }
    }
    let mut body = json!({"contents": contents});
    if let Some(instructions) = &request.instructions {
        body["systemInstruction"] = json!({"parts": [{"text": instructions}]});
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                let mut d = json!({"name": t.name, "parametersJsonSchema": t.parameters});
                if let Some(desc) = &t.description {
                    d["description"] = json!(desc);
                }
                d
            })
            .collect();
        body["tools"] = json!([{"functionDeclarations": declarations}]);
        body["toolConfig"] = json!({"functionCallingConfig": match &request.tool_choice {
            ToolChoice::Auto => json!({"mode": "AUTO"}),
            ToolChoice::None => json!({"mode": "NONE"}),
            ToolChoice::Required => json!({"mode": "ANY"}),
            ToolChoice::Tool(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
        }});
    }
    let mut generation = serde_json::Map::new();
    if let Some(max) = request.max_tokens {
        generation.insert("maxOutputTokens".into(), json!(max));
    }
    if let Some(schema) = &request.output_schema {
        generation.insert("responseMimeType".into(), json!("application/json"));
        generation.insert("responseJsonSchema".into(), schema.schema.clone());
    }
    if !generation.is_empty() {
        body["generationConfig"] = Value::Object(generation);
    }
    body
}

/// Map `finishReason`.
pub(crate) fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::MaxTokens,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => {
            FinishReason::ContentFilter
        }
        other => FinishReason::Other(other.to_owned()),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Chunk {
    #[serde(default)]
    candidates: Vec<Candidate>,
    usage_metadata: Option<WireUsage>,
    model_version: Option<String>,
    response_id: Option<String>,
    prompt_feedback: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    content: Option<Content>,
    finish_reason: Option<String>,
    #[serde(default)]
    index: u64,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    parts: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireUsage {
    #[serde(default)]
    prompt_token_count: u64,
    #[serde(default)]
    candidates_token_count: u64,
    #[serde(default)]
    cached_content_token_count: u64,
    #[serde(default)]
    thoughts_token_count: u64,
}

impl From<WireUsage> for Usage {
    fn from(u: WireUsage) -> Self {
        Usage {
            input_tokens: u.prompt_token_count,
            output_tokens: u.candidates_token_count + u.thoughts_token_count,
            cached_input_tokens: u.cached_content_token_count,
            reasoning_tokens: u.thoughts_token_count,
        }
    }
}

/// Applies chunks to a turn; shared by the buffered and streamed forms.
fn apply_chunk(turn: &mut TurnBuilder, chunk: Chunk, out: &mut Vec<StreamEvent>) {
    if turn.id.is_none() {
        turn.id = chunk.response_id;
        turn.model = chunk.model_version;
    }
    if let Some(u) = chunk.usage_metadata {
        turn.usage = u.into();
    }
    if chunk.candidates.is_empty() && chunk.prompt_feedback.is_some() {
        turn.finish = Some(FinishReason::ContentFilter);
    }
    for candidate in chunk.candidates.into_iter().filter(|c| c.index == 0) {
        for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
            if let Some(call) = part.get("functionCall") {
                let n = turn.calls.len() as u64;
                let s = |k: &str| call.get(k).and_then(Value::as_str).map(str::to_owned);
                turn.calls.insert(
                    n,
                    RawCall {
                        id: s("id").unwrap_or_else(|| format!("{SYNTHETIC_ID_PREFIX}{n}")),
                        name: s("name").unwrap_or_default(),
                        args: RawArgs::Json(call.get("args").cloned().unwrap_or(json!({}))),
                        signature: part
                            .get("thoughtSignature")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                    },
                );
            } else if let Some(text) = part.get("text").and_then(Value::as_str) {
                let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
                if !thought && !text.is_empty() {
                    turn.push_text(text);
                    out.push(StreamEvent::TextDelta(text.to_owned()));
                }
            }
        }
        if let Some(reason) = candidate.finish_reason {
            turn.finish = Some(finish_reason(&reason));
        }
    }
}

fn parse_chunk(data: &[u8]) -> Result<Chunk, ProviderError> {
    let value: Value = serde_json::from_slice(data)
        .map_err(|e| ProviderError::malformed(format!("gemini response: {e}")))?;
    if let Some(error) = value.get("error") {
        return Err(error_from_event(error));
    }
    serde_json::from_value(value)
        .map_err(|e| ProviderError::malformed(format!("gemini response: {e}")))
}

/// Decode a non-streaming response body.
pub fn decode_response(body: &[u8]) -> Result<ModelResponse, ProviderError> {
    let mut turn = TurnBuilder::default();
    apply_chunk(&mut turn, parse_chunk(body)?, &mut Vec::new());
    if turn.finish.is_none() {
        return Err(ProviderError::malformed("candidate has no finishReason"));
    }
    turn.build()
}

/// Streaming decoder for `streamGenerateContent?alt=sse`.
#[derive(Default)]
pub struct GeminiStreamDecoder {
    turn: TurnBuilder,
}

impl GeminiStreamDecoder {
    /// A fresh decoder.
    pub fn new() -> Self {
        Self::default()
    }
}

impl StreamDecoder for GeminiStreamDecoder {
    fn event(
        &mut self,
        _name: &str,
        data: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<bool, ProviderError> {
        apply_chunk(&mut self.turn, parse_chunk(data.as_bytes())?, out);
        Ok(false)
    }

    fn finish(self: Box<Self>) -> Result<ModelResponse, ProviderError> {
        self.turn.build()
    }
}
