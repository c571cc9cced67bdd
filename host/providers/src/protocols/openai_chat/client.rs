//! The connector's side of Chat Completions ([`ClientProtocol`]): endpoint,
//! request encoding, response and `chat.completion.chunk` stream decoding.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::errors::ProviderError;
use crate::model::{
    FinishReason, Message, ModelRequest, ModelResponse, StreamEvent, ToolChoice, Usage,
};
use crate::protocols::assemble::{RawArgs, RawCall, ResponseBuilder, assemble};
use crate::protocols::client::{ClientProtocol, Endpoint};
use crate::protocols::openai;
use crate::protocols::shared::error_from_event;
use crate::sse::StreamDecoder;

/// Chat Completions.
pub(crate) struct OpenAiChat;

impl ClientProtocol for OpenAiChat {
    fn endpoint(&self) -> Endpoint {
        openai::ENDPOINT
    }

    fn url(&self, base: &str, _model: &str, _stream: bool) -> String {
        format!("{base}/chat/completions")
    }

    /// The request body for `request`.
    fn encode_request(&self, request: &ModelRequest, stream: bool) -> Value {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if let Some(instructions) = &request.instructions {
            messages.push(json!({"role": "system", "content": instructions}));
        }
        for message in &request.messages {
            messages.push(match message {
                Message::User { text } => json!({"role": "user", "content": text}),
                Message::Assistant { text, tool_calls } => {
                    let mut m = json!({"role": "assistant", "content": text});
                    if !tool_calls.is_empty() {
                        m["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| {
                            json!({
                                "id": c.id,
                                "type": "function",
                                "function": {"name": c.name, "arguments": c.arguments.to_string()},
                            })
                        })
                        .collect();
                    }
                    m
                }
                Message::ToolResult(r) => {
                    json!({"role": "tool", "tool_call_id": r.call_id, "content": r.content})
                }
            });
        }
        let mut body = json!({"model": request.model, "messages": messages});
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| {
                    let mut function = json!({"name": t.name, "parameters": t.parameters});
                    if let Some(d) = &t.description {
                        function["description"] = json!(d);
                    }
                    json!({"type": "function", "function": function})
                })
                .collect();
            body["tool_choice"] = match &request.tool_choice {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::None => json!("none"),
                ToolChoice::Required => json!("required"),
                ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
            };
        }
        if let Some(schema) = &request.output_schema {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": schema.name, "schema": schema.schema, "strict": true},
            });
        }
        if let Some(max) = request.max_tokens {
            body["max_completion_tokens"] = json!(max);
        }
        if stream {
            body["stream"] = json!(true);
            body["stream_options"] = json!({"include_usage": true});
        }
        body
    }

    /// Decode a non-streaming response body.
    fn decode_response(&self, body: &[u8]) -> Result<ModelResponse, ProviderError> {
        let completion: Completion = serde_json::from_slice(body)
            .map_err(|e| ProviderError::malformed(format!("chat completion: {e}")))?;
        let choice = completion
            .choices
            .into_iter()
            .find(|c| c.index == 0)
            .ok_or_else(|| ProviderError::malformed("chat completion has no choice 0"))?;
        let reason = choice
            .finish_reason
            .as_deref()
            .map(finish_reason)
            .ok_or_else(|| ProviderError::malformed("choice has no finish_reason"))?;
        let message = choice.message.unwrap_or_default();
        let (text, reason) = match message.refusal {
            Some(refusal) => (Some(refusal), FinishReason::Refusal),
            None => (message.content.filter(|t| !t.is_empty()), reason),
        };
        let calls = message
            .tool_calls
            .unwrap_or_default()
            .into_iter()
            .map(|c| {
                let function = c.function.unwrap_or(WireFunction {
                    name: None,
                    arguments: None,
                });
                RawCall {
                    id: c.id.unwrap_or_default(),
                    name: function.name.unwrap_or_default(),
                    args: RawArgs::Text(function.arguments.unwrap_or_default()),
                    signature: None,
                }
            })
            .collect();
        let usage = completion.usage.map(Usage::from).unwrap_or_default();
        assemble(completion.id, completion.model, text, calls, reason, usage)
    }

    fn stream_decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(ChatStreamDecoder::new())
    }
}

/// Map `finish_reason`.
fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "length" => FinishReason::MaxTokens,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

#[derive(Deserialize)]
struct Completion {
    id: Option<String>,
    model: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: u64,
    message: Option<WireMessage>,
    delta: Option<WireMessage>,
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct WireMessage {
    content: Option<String>,
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireCall>>,
}

#[derive(Deserialize)]
struct WireCall {
    #[serde(default)]
    index: u64,
    id: Option<String>,
    function: Option<WireFunction>,
}

#[derive(Deserialize)]
struct WireFunction {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    prompt_tokens_details: Option<Details>,
    completion_tokens_details: Option<Details>,
}

#[derive(Deserialize)]
struct Details {
    #[serde(default)]
    cached_tokens: u64,
    #[serde(default)]
    reasoning_tokens: u64,
}

impl From<WireUsage> for Usage {
    fn from(u: WireUsage) -> Self {
        Usage {
            input_tokens: u.prompt_tokens,
            output_tokens: u.completion_tokens,
            cached_input_tokens: u.prompt_tokens_details.map_or(0, |d| d.cached_tokens),
            reasoning_tokens: u
                .completion_tokens_details
                .map_or(0, |d| d.reasoning_tokens),
        }
    }
}

/// Streaming decoder for `chat.completion.chunk` events.
#[derive(Default)]
pub(super) struct ChatStreamDecoder {
    turn: ResponseBuilder,
    refusal: Option<String>,
}

impl ChatStreamDecoder {
    /// A fresh decoder.
    pub(super) fn new() -> Self {
        Self::default()
    }
}

impl StreamDecoder for ChatStreamDecoder {
    fn event(
        &mut self,
        _name: &str,
        data: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<bool, ProviderError> {
        if data.trim() == "[DONE]" {
            return Ok(true);
        }
        let value: Value = serde_json::from_str(data)
            .map_err(|e| ProviderError::malformed(format!("chat chunk: {e}")))?;
        if let Some(error) = value.get("error") {
            return Err(error_from_event(error));
        }
        let chunk: Completion = serde_json::from_value(value)
            .map_err(|e| ProviderError::malformed(format!("chat chunk: {e}")))?;
        if self.turn.id.is_none() {
            self.turn.id = chunk.id;
            self.turn.model = chunk.model;
        }
        if let Some(usage) = chunk.usage {
            self.turn.usage = usage.into();
        }
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(delta) = choice.delta {
                if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                    self.turn.push_text(&text);
                    out.push(StreamEvent::TextDelta(text));
                }
                if let Some(refusal) = delta.refusal {
                    self.refusal
                        .get_or_insert_with(String::new)
                        .push_str(&refusal);
                }
                for call in delta.tool_calls.unwrap_or_default() {
                    let function = call.function.unwrap_or(WireFunction {
                        name: None,
                        arguments: None,
                    });
                    self.turn
                        .push_args(call.index, function.arguments.as_deref().unwrap_or(""));
                    if let Some(entry) = self.turn.calls.get_mut(&call.index) {
                        if let Some(id) = call.id {
                            entry.id = id;
                        }
                        // OpenAI sends the name once; some compatible
                        // servers repeat it in every fragment.
                        if let Some(name) = function.name
                            && entry.name != name
                        {
                            entry.name.push_str(&name);
                        }
                    }
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.turn.finish = Some(finish_reason(&reason));
            }
        }
        Ok(false)
    }

    fn finish(self: Box<Self>) -> Result<ModelResponse, ProviderError> {
        let mut turn = self.turn;
        if let Some(refusal) = self.refusal
            && turn.finish.is_some()
        {
            turn.text = refusal;
            turn.has_text = true;
            turn.finish = Some(FinishReason::Refusal);
        }
        turn.build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_empty_call_id_is_empty() {
        for call in [
            r#"{"type":"function","function":{"name":"f","arguments":"{}"}}"#,
            r#"{"id":"","type":"function","function":{"name":"f","arguments":"{}"}}"#,
        ] {
            let body = format!(
                r#"{{"choices":[{{"index":0,"message":{{"role":"assistant","content":null,"tool_calls":[{call}]}},"finish_reason":"tool_calls"}}]}}"#
            );
            let response = OpenAiChat.decode_response(body.as_bytes());
            let Ok(response) = response else {
                panic!("{call}: {response:?}")
            };
            assert_eq!(response.tool_calls[0].id, "", "{call}");
        }
    }

    #[test]
    fn a_repeated_tool_name_is_not_doubled() {
        let mut decoder = ChatStreamDecoder::new();
        let mut out = Vec::new();
        for data in [
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"get_weather","arguments":"{\"city\":"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"get_weather","arguments":"\"Oslo\"}"}}]},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ] {
            assert!(decoder.event("message", data, &mut out).is_ok(), "{data}");
        }
        let response = Box::new(decoder).finish();
        let Ok(response) = response else {
            panic!("{response:?}")
        };
        assert_eq!(response.tool_calls[0].name, "get_weather");
        assert_eq!(response.tool_calls[0].arguments, json!({"city": "Oslo"}));
    }
}
