//! The fake provider's side of Gemini ([`FakeProtocol`]): reading a request
//! back into the neutral form and writing responses, stream chunks and
//! Google's error object (`google.rpc.Status`).

use serde_json::{Value, json};

use super::Gemini;
use crate::errors::ProviderError;
use crate::model::{
    FinishReason, Message, ModelRequest, ModelResponse, OutputSchema, ToolCall, ToolChoice,
    ToolDefinition, ToolResult,
};
use crate::protocols::fake::{FakeProtocol, FakeTarget};
use crate::protocols::shared::{split_chunks, str_of};
use crate::sse::SseFrame;

impl FakeProtocol for Gemini {
    /// google-genai defaults to `v1beta`; its `http_options` can pick `v1`.
    fn routes(&self) -> &'static [&'static str] {
        &["/v1beta/models/{target}", "/v1/models/{target}"]
    }

    /// The model and the method are the path's last segment,
    /// `{model}:generateContent` or `{model}:streamGenerateContent?alt=sse`.
    fn target(
        &self,
        target: Option<&str>,
        query: Option<&str>,
        _body: &Value,
    ) -> Result<FakeTarget, &'static str> {
        let Some((model, method)) = target.and_then(|t| t.split_once(':')) else {
            return Err("expected models/{model}:{method}");
        };
        let stream = match method {
            "generateContent" => false,
            "streamGenerateContent" if query == Some("alt=sse") => true,
            _ => return Err("unknown method"),
        };
        Ok(FakeTarget {
            model: model.to_owned(),
            stream,
        })
    }

    /// Read a request body back into a [`ModelRequest`]; the model comes from
    /// the URL.
    fn decode_request(&self, body: &Value, model: &str) -> Result<ModelRequest, ProviderError> {
        let bad = |what: &str| ProviderError::malformed(format!("gemini request: {what}"));
        let text_of = |v: Option<&Value>| -> String {
            v.and_then(|c| c.get("parts"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect()
        };
        let generation = body.get("generationConfig");
        let mut request = ModelRequest {
            model: model.to_owned(),
            instructions: body.get("systemInstruction").map(|s| text_of(Some(s))),
            messages: Vec::new(),
            tools: Vec::new(),
            tool_choice: ToolChoice::Auto,
            output_schema: generation
                .and_then(|g| {
                    g.get("responseJsonSchema")
                        .or_else(|| g.get("responseSchema"))
                })
                .map(|schema| OutputSchema {
                    name: String::new(),
                    schema: schema.clone(),
                }),
            max_tokens: generation
                .and_then(|g| g.get("maxOutputTokens"))
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok()),
        };
        let contents = body
            .get("contents")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("no contents"))?;
        for content in contents {
            let parts = content
                .get("parts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten();
            if content.get("role").and_then(Value::as_str) == Some("model") {
                let mut text: Option<String> = None;
                let mut tool_calls = Vec::new();
                for p in parts {
                    if let Some(call) = p.get("functionCall") {
                        tool_calls.push(ToolCall {
                            id: str_of(call, "id").unwrap_or_default(),
                            name: str_of(call, "name").unwrap_or_default(),
                            arguments: call.get("args").cloned().unwrap_or(json!({})),
                            signature: str_of(p, "thoughtSignature"),
                        });
                    } else if let Some(t) = p.get("text").and_then(Value::as_str) {
                        text.get_or_insert_with(String::new).push_str(t);
                    }
                }
                request
                    .messages
                    .push(Message::Assistant { text, tool_calls });
                continue;
            }
            for p in parts {
                if let Some(fr) = p.get("functionResponse") {
                    let response = fr.get("response").cloned().unwrap_or(Value::Null);
                    let (content, is_error) = match (response.get("result"), response.get("error"))
                    {
                        (_, Some(e)) => (
                            e.as_str().map_or_else(|| e.to_string(), str::to_owned),
                            true,
                        ),
                        (Some(r), _) => (
                            r.as_str().map_or_else(|| r.to_string(), str::to_owned),
                            false,
                        ),
                        _ => (response.to_string(), false),
                    };
                    request.messages.push(Message::ToolResult(ToolResult {
                        call_id: str_of(fr, "id").unwrap_or_default(),
                        name: str_of(fr, "name").unwrap_or_default(),
                        content,
                        is_error,
                    }));
                } else if let Some(t) = p.get("text").and_then(Value::as_str) {
                    request.messages.push(Message::user(t));
                }
            }
        }
        for tool in body
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let decls = tool.get("functionDeclarations").and_then(Value::as_array);
            for d in decls.into_iter().flatten() {
                request.tools.push(ToolDefinition {
                    name: str_of(d, "name").ok_or_else(|| bad("function name"))?,
                    description: str_of(d, "description"),
                    parameters: d
                        .get("parametersJsonSchema")
                        .or_else(|| d.get("parameters"))
                        .cloned()
                        .unwrap_or(json!({})),
                });
            }
        }
        if let Some(config) = body
            .get("toolConfig")
            .and_then(|c| c.get("functionCallingConfig"))
        {
            let allowed = config
                .get("allowedFunctionNames")
                .and_then(Value::as_array)
                .and_then(|a| a.first())
                .and_then(Value::as_str);
            request.tool_choice = match (config.get("mode").and_then(Value::as_str), allowed) {
                (Some("NONE"), _) => ToolChoice::None,
                (Some("ANY"), Some(name)) => ToolChoice::Tool(name.to_owned()),
                (Some("ANY"), None) => ToolChoice::Required,
                _ => ToolChoice::Auto,
            };
        }
        Ok(request)
    }

    /// A `GenerateContentResponse` body for `r`.
    fn render_response(&self, r: &ModelResponse, model: &str) -> Value {
        let mut parts = Vec::new();
        if let Some(text) = &r.text {
            parts.push(json!({"text": text}));
        }
        parts.extend(r.tool_calls.iter().map(call_part));
        chunk(r, model, parts, true)
    }

    /// The chunks of a stream for `r`: one per text piece, then the calls (Gemini
    /// sends each call whole) with the finish reason.
    fn render_stream(&self, r: &ModelResponse, model: &str, size: usize) -> Vec<SseFrame> {
        let mut frames: Vec<SseFrame> = split_chunks(r.text.as_deref().unwrap_or(""), size)
            .into_iter()
            .map(|piece| {
                SseFrame::data(chunk(r, model, vec![json!({"text": piece})], false).to_string())
            })
            .collect();
        let calls: Vec<Value> = r.tool_calls.iter().map(call_part).collect();
        let last = if calls.is_empty() {
            vec![json!({"text": ""})]
        } else {
            calls
        };
        frames.push(SseFrame::data(chunk(r, model, last, true).to_string()));
        frames
    }

    /// Google's error object (`google.rpc.Status`).
    fn render_error(&self, status: u16, message: &str) -> Value {
        json!({"error": {"code": status, "message": message, "status": error_kind(status)}})
    }

    /// A stream chunk carrying the error (the same object as the HTTP body).
    fn render_error_event(&self, status: u16, message: &str) -> SseFrame {
        SseFrame::data(self.render_error(status, message).to_string())
    }

    fn stream_uses_crlf(&self) -> bool {
        true
    }
}

/// Google's error `status` for an HTTP status.
fn error_kind(status: u16) -> &'static str {
    match status {
        429 => "RESOURCE_EXHAUSTED",
        401 | 403 => "PERMISSION_DENIED",
        500..=599 => "INTERNAL",
        _ => "INVALID_ARGUMENT",
    }
}

fn wire_finish(reason: &FinishReason) -> &str {
    match reason {
        FinishReason::MaxTokens => "MAX_TOKENS",
        FinishReason::ContentFilter | FinishReason::Refusal => "SAFETY",
        FinishReason::Other(s) => s,
        _ => "STOP",
    }
}

fn usage(r: &ModelResponse) -> Value {
    let candidates = r
        .usage
        .output_tokens
        .saturating_sub(r.usage.reasoning_tokens);
    json!({"promptTokenCount": r.usage.input_tokens, "candidatesTokenCount": candidates,
           "thoughtsTokenCount": r.usage.reasoning_tokens,
           "cachedContentTokenCount": r.usage.cached_input_tokens,
           "totalTokenCount": r.usage.input_tokens + r.usage.output_tokens})
}

/// A `functionCall` part. The Gemini API sends no call ids (see the
/// recorded samples), so neither does the fake, whatever the script says.
fn call_part(c: &ToolCall) -> Value {
    let call = json!({"name": c.name, "args": c.arguments});
    let mut part = json!({"functionCall": call});
    if let Some(sig) = &c.signature {
        part["thoughtSignature"] = json!(sig);
    }
    part
}

fn chunk(r: &ModelResponse, model: &str, parts: Vec<Value>, last: bool) -> Value {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    if last {
        candidate["finishReason"] = json!(wire_finish(&r.finish_reason));
    }
    json!({"candidates": [candidate], "usageMetadata": usage(r), "modelVersion": model,
           "responseId": r.id.as_deref().unwrap_or("fake-response")})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_call(id: &str) -> ModelResponse {
        ModelResponse {
            id: None,
            model: None,
            text: Some("Looking.".into()),
            tool_calls: vec![ToolCall {
                id: id.into(),
                name: "read_artifact".into(),
                arguments: json!({"id": "A42"}),
                signature: None,
            }],
            dropped_tool_calls: 0,
            finish_reason: FinishReason::ToolCalls,
            usage: Default::default(),
            attempts: 1,
        }
    }

    /// Every `functionCall` in `value`.
    fn calls(value: &Value, out: &mut Vec<Value>) {
        match value {
            Value::Object(map) => {
                if let Some(call) = map.get("functionCall") {
                    out.push(call.clone());
                }
                map.values().for_each(|v| calls(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| calls(v, out)),
            _ => {}
        }
    }

    #[test]
    fn the_fake_sends_no_call_ids_whatever_the_script_says() {
        for id in ["call_7", "", "gemini_call_0"] {
            let response = with_call(id);
            let mut found = Vec::new();
            calls(&Gemini.render_response(&response, "m"), &mut found);
            for frame in Gemini.render_stream(&response, "m", 3) {
                let data: Value = serde_json::from_str(&frame.data).unwrap_or(Value::Null);
                calls(&data, &mut found);
            }
            assert_eq!(found.len(), 2, "{id:?}: one call per form");
            for call in found {
                assert_eq!(
                    call,
                    json!({"name": "read_artifact", "args": {"id": "A42"}})
                );
            }
        }
    }
}
