//! Assembling a [`ModelResponse`] from decoded pieces, shared by every
//! protocol: argument parsing, the tool-calls finish reason, and the rule that
//! a turn cut by the token limit yields no tool call to execute.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::errors::ProviderError;
use crate::model::{FinishReason, ModelResponse, ToolCall, Usage};

/// Tool-call arguments as the provider sent them.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum RawArgs {
    /// A JSON text (OpenAI, Anthropic streaming fragments).
    Text(String),
    /// An already-parsed object (Anthropic `input`, Gemini `args`).
    Json(Value),
}

/// A tool call as decoded, arguments not yet parsed.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RawCall {
    pub id: String,
    pub name: String,
    pub args: RawArgs,
    pub signature: Option<String>,
}

/// A response under construction.
#[derive(Debug, Default)]
pub(super) struct ResponseBuilder {
    pub id: Option<String>,
    pub model: Option<String>,
    pub text: String,
    pub has_text: bool,
    /// Calls keyed by the provider's position index.
    pub calls: BTreeMap<u64, RawCall>,
    pub finish: Option<FinishReason>,
    pub usage: Usage,
}

impl ResponseBuilder {
    /// Append answer text.
    pub fn push_text(&mut self, text: &str) {
        self.has_text = true;
        self.text.push_str(text);
    }

    /// Append an argument fragment to the call at `index`, creating it.
    pub fn push_args(&mut self, index: u64, fragment: &str) {
        let call = self.calls.entry(index).or_insert_with(|| RawCall {
            id: String::new(),
            name: String::new(),
            args: RawArgs::Text(String::new()),
            signature: None,
        });
        match &mut call.args {
            RawArgs::Text(text) => text.push_str(fragment),
            RawArgs::Json(_) => call.args = RawArgs::Text(fragment.to_owned()),
        }
    }

    /// Finish the turn. `finish` must have been set by the decoder.
    pub fn build(self) -> Result<ModelResponse, ProviderError> {
        let finish = self
            .finish
            .ok_or_else(|| ProviderError::truncated("no finish reason before the end"))?;
        let text = self.has_text.then_some(self.text).filter(|t| !t.is_empty());
        assemble(
            self.id,
            self.model,
            text,
            self.calls.into_values().collect(),
            finish,
            self.usage,
        )
    }
}

/// Build the response: parse arguments, report `ToolCalls` when calls came
/// with a plain stop, and drop every call of a turn cut by the token limit.
pub(super) fn assemble(
    id: Option<String>,
    model: Option<String>,
    text: Option<String>,
    calls: Vec<RawCall>,
    finish: FinishReason,
    usage: Usage,
) -> Result<ModelResponse, ProviderError> {
    if finish == FinishReason::MaxTokens {
        return Ok(ModelResponse {
            id,
            model,
            text,
            tool_calls: Vec::new(),
            dropped_tool_calls: calls.len(),
            finish_reason: finish,
            usage,
            attempts: 0,
        });
    }
    let mut tool_calls = Vec::with_capacity(calls.len());
    for call in calls {
        if call.name.is_empty() {
            return Err(ProviderError::malformed("tool call without a name"));
        }
        let arguments = match call.args {
            RawArgs::Json(value) => value,
            RawArgs::Text(text) if text.trim().is_empty() => Value::Object(Default::default()),
            RawArgs::Text(text) => serde_json::from_str(&text).map_err(|e| {
                ProviderError::malformed(format!(
                    "arguments of tool call {} ({}) are not JSON: {e}",
                    call.id, call.name
                ))
            })?,
        };
        tool_calls.push(ToolCall {
            id: call.id,
            name: call.name,
            arguments,
            signature: call.signature,
        });
    }
    let finish_reason = if finish == FinishReason::Stop && !tool_calls.is_empty() {
        FinishReason::ToolCalls
    } else {
        finish
    };
    Ok(ModelResponse {
        id,
        model,
        text,
        tool_calls,
        dropped_tool_calls: 0,
        finish_reason,
        usage,
        attempts: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(args: &str) -> RawCall {
        RawCall {
            id: "c1".into(),
            name: "f".into(),
            args: RawArgs::Text(args.into()),
            signature: None,
        }
    }

    #[test]
    fn truncated_turn_drops_its_tool_calls() {
        let response = assemble(
            None,
            None,
            None,
            vec![call("{\"a\": 1")],
            FinishReason::MaxTokens,
            Usage::default(),
        );
        let response = response.ok();
        assert_eq!(response.as_ref().map(|r| r.tool_calls.len()), Some(0));
        assert_eq!(response.map(|r| r.dropped_tool_calls), Some(1));
    }

    #[test]
    fn empty_arguments_are_an_empty_object_and_stop_becomes_tool_calls() {
        let response = assemble(
            None,
            None,
            None,
            vec![call("")],
            FinishReason::Stop,
            Usage::default(),
        );
        let response = response.ok();
        assert_eq!(
            response.as_ref().map(|r| r.finish_reason.clone()),
            Some(FinishReason::ToolCalls)
        );
        assert_eq!(
            response.map(|r| r.tool_calls[0].arguments.clone()),
            Some(serde_json::json!({}))
        );
    }

    #[test]
    fn invalid_arguments_are_a_malformed_response() {
        let result = assemble(
            None,
            None,
            None,
            vec![call("{nope")],
            FinishReason::ToolCalls,
            Usage::default(),
        );
        assert!(matches!(
            result,
            Err(ProviderError::MalformedResponse { .. })
        ));
    }
}
