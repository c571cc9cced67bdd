//! The connector's side of Gemini ([`ClientProtocol`]): endpoint, request
//! encoding, response and chunk stream decoding (with Vertex's streamed
//! arguments, `partial_args.rs`).

use serde::Deserialize;
use serde_json::{Value, json};

use super::partial_args;
use crate::errors::ProviderError;
use crate::model::{
    FinishReason, Message, ModelRequest, ModelResponse, StreamEvent, ToolChoice, Usage,
};
use crate::protocols::assemble::{RawArgs, RawCall, ResponseBuilder};
use crate::protocols::client::{ClientProtocol, Endpoint, KeyHeader};
use crate::protocols::shared::error_from_event;
use crate::sse::StreamDecoder;

/// Prefix of the call ids this connector invents (Gemini sends none); such
/// ids are not sent back to the provider.
pub const SYNTHETIC_ID_PREFIX: &str = "gemini_call_";

/// Gemini `generateContent`.
pub(crate) struct Gemini;

impl ClientProtocol for Gemini {
    fn endpoint(&self) -> Endpoint {
        Endpoint::new(
            "https://generativelanguage.googleapis.com/v1beta",
            "GEMINI_API_KEY",
            KeyHeader::Plain("x-goog-api-key"),
        )
    }

    fn url(&self, base: &str, model: &str, stream: bool) -> String {
        if stream {
            format!("{base}/models/{model}:streamGenerateContent?alt=sse")
        } else {
            format!("{base}/models/{model}:generateContent")
        }
    }

    /// The request body for `request` (the stream flag is in the URL).
    fn encode_request(&self, request: &ModelRequest, _stream: bool) -> Value {
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

    /// Decode a non-streaming response body.
    fn decode_response(&self, body: &[u8]) -> Result<ModelResponse, ProviderError> {
        let mut state = ResponseState::default();
        apply_chunk(&mut state, parse_chunk(body)?, &mut Vec::new())?;
        if state.turn.finish.is_none() {
            return Err(ProviderError::malformed("candidate has no finishReason"));
        }
        build(state)
    }

    fn stream_decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(GeminiStreamDecoder::new())
    }
}

/// Map `finishReason`.
fn finish_reason(reason: &str) -> FinishReason {
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

/// A response being decoded, with the call whose arguments are still streaming
/// (Vertex `partialArgs`), if any.
#[derive(Default)]
struct ResponseState {
    turn: ResponseBuilder,
    open_call: Option<u64>,
}

/// Handle one `functionCall` part.
fn apply_call(state: &mut ResponseState, part: &Value, call: &Value) -> Result<(), ProviderError> {
    let will_continue = call.get("willContinue").and_then(Value::as_bool) == Some(true);
    let s = |k: &str| call.get(k).and_then(Value::as_str).map(str::to_owned);
    if let Some(index) = state.open_call
        && s("name").is_none()
    {
        if let Some(partials) = call.get("partialArgs").and_then(Value::as_array)
            && let Some(RawCall {
                args: RawArgs::Json(args),
                ..
            }) = state.turn.calls.get_mut(&index)
        {
            for partial in partials {
                partial_args::apply(args, partial)?;
            }
        }
        if !will_continue {
            state.open_call = None;
        }
        return Ok(());
    }
    let n = state.turn.calls.len() as u64;
    state.turn.calls.insert(
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
    if will_continue {
        state.open_call = Some(n);
    }
    Ok(())
}

/// Applies chunks to a turn; shared by the buffered and streamed forms.
fn apply_chunk(
    state: &mut ResponseState,
    chunk: Chunk,
    out: &mut Vec<StreamEvent>,
) -> Result<(), ProviderError> {
    if state.turn.id.is_none() {
        state.turn.id = chunk.response_id;
        state.turn.model = chunk.model_version;
    }
    if let Some(u) = chunk.usage_metadata {
        state.turn.usage = u.into();
    }
    if chunk.candidates.is_empty() && chunk.prompt_feedback.is_some() {
        state.turn.finish = Some(FinishReason::ContentFilter);
    }
    for candidate in chunk.candidates.into_iter().filter(|c| c.index == 0) {
        for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
            if let Some(call) = part.get("functionCall") {
                apply_call(state, &part, call)?;
            } else if let Some(text) = part.get("text").and_then(Value::as_str) {
                let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
                if !thought && !text.is_empty() {
                    state.turn.push_text(text);
                    out.push(StreamEvent::TextDelta(text.to_owned()));
                }
            }
        }
        if let Some(reason) = candidate.finish_reason {
            state.turn.finish = Some(finish_reason(&reason));
        }
    }
    Ok(())
}

/// The finished turn; a call whose arguments never closed is a truncation.
fn build(state: ResponseState) -> Result<ModelResponse, ProviderError> {
    if state.open_call.is_some() && state.turn.finish != Some(FinishReason::MaxTokens) {
        return Err(ProviderError::truncated(
            "a streamed function call was never closed",
        ));
    }
    state.turn.build()
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

/// Streaming decoder for `streamGenerateContent?alt=sse`.
#[derive(Default)]
pub(super) struct GeminiStreamDecoder {
    state: ResponseState,
}

impl GeminiStreamDecoder {
    /// A fresh decoder.
    pub(super) fn new() -> Self {
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
        apply_chunk(&mut self.state, parse_chunk(data.as_bytes())?, out)?;
        Ok(false)
    }

    fn finish(self: Box<Self>) -> Result<ModelResponse, ProviderError> {
        build(self.state)
    }
}
