//! The provider-neutral model interface the agent loop calls.
//!
//! A [`ModelRequest`] goes in; a [`ModelResponse`] (or a stream of
//! [`StreamEvent`]s ending with one) comes out. Every connector maps these
//! types to and from its provider's wire protocol; nothing here is specific to
//! one vendor.

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use verdict_policy::CancelHandle;

use crate::errors::ProviderError;

/// One call to a model: everything the provider needs to produce a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// Provider model id, e.g. `gpt-4o-mini` or `claude-haiku-4-5`.
    pub model: String,
    /// System instructions, sent in the provider's system slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The conversation so far, oldest first.
    pub messages: Vec<Message>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDefinition>,
    /// How the model must use the tools.
    #[serde(default)]
    pub tool_choice: ToolChoice,
    /// Ask for a final answer that is JSON matching this schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<OutputSchema>,
    /// Upper bound on generated tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

impl ModelRequest {
    /// A request for `model` with a single user message.
    pub fn new(model: impl Into<String>, user_text: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            instructions: None,
            messages: vec![Message::user(user_text)],
            tools: Vec::new(),
            tool_choice: ToolChoice::Auto,
            output_schema: None,
            max_tokens: None,
        }
    }
}

/// One entry of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Message {
    /// Text from the user (or host feedback addressed to the model).
    User {
        /// The text.
        text: String,
    },
    /// A previous model turn: text and/or tool calls.
    Assistant {
        /// The text the model produced, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// The tool calls the model made, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of executing one tool call.
    ToolResult(ToolResult),
}

impl Message {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User { text: text.into() }
    }

    /// The assistant turn a response represents, to append to the history.
    pub fn from_response(response: &ModelResponse) -> Self {
        Self::Assistant {
            text: response.text.clone(),
            tool_calls: response.tool_calls.clone(),
        }
    }
}

/// The outcome of one tool call, sent back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the [`ToolCall`] this answers.
    pub call_id: String,
    /// The tool's name (Gemini matches results by name, not id).
    pub name: String,
    /// The result content as text (often JSON).
    pub content: String,
    /// True when the tool failed; the content then describes the failure.
    /// Anthropic (`is_error`) and Gemini (`response.error`) carry this flag;
    /// OpenAI has none, so the content itself must say that the tool failed.
    #[serde(default)]
    pub is_error: bool,
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider call id (synthesized as `call_<n>` for Gemini, which has none).
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Parsed JSON arguments (an empty argument string becomes `{}`).
    pub arguments: Value,
    /// Opaque provider state that must be echoed back with this call
    /// (Gemini's `thoughtSignature`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// Name the model uses to call it.
    pub name: String,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

/// How the model must use the tools.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type", content = "name")]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The model must not call tools.
    None,
    /// The model must call at least one tool.
    Required,
    /// The model must call this tool.
    Tool(String),
}

/// A JSON Schema the final answer must follow (structured output).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputSchema {
    /// Schema name (OpenAI requires one).
    pub name: String,
    /// The JSON Schema.
    pub schema: Value,
}

/// One completed model turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// Provider response id, when it sends one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The model that answered, as reported by the provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The concatenated text output, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Tool calls to execute. Always empty when `finish_reason` is
    /// [`FinishReason::MaxTokens`]: a call cut by the token limit is never run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Number of tool calls dropped because the turn was truncated.
    #[serde(default)]
    pub dropped_tool_calls: usize,
    /// Why the model stopped.
    pub finish_reason: FinishReason,
    /// Token usage, when reported.
    #[serde(default)]
    pub usage: Usage,
    /// HTTP attempts this call took (1 without retries).
    #[serde(default)]
    pub attempts: u32,
}

/// Why the model stopped generating.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FinishReason {
    /// A natural end of the answer (`stop`, `end_turn`, `STOP`, `completed`).
    #[default]
    Stop,
    /// The model wants tool calls executed.
    ToolCalls,
    /// The token limit cut the answer.
    MaxTokens,
    /// A stop sequence matched.
    StopSequence,
    /// A safety or content filter stopped the answer.
    ContentFilter,
    /// The model refused.
    Refusal,
    /// The provider paused a long turn (Anthropic `pause_turn`).
    Paused,
    /// Any other provider reason, verbatim.
    Other(String),
}

/// Token accounting for one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Generated tokens (including reasoning tokens where billed so).
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's cache.
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Hidden reasoning tokens, when reported.
    #[serde(default)]
    pub reasoning_tokens: u64,
}

/// One event of a streamed model call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// A piece of answer text, in order.
    TextDelta(String),
    /// A tool call whose arguments are complete. Emitted only once the
    /// provider has reported the stop reason, and never for a turn cut by the
    /// token limit.
    ToolCall(ToolCall),
    /// The final response; always the last event of a successful stream.
    Completed(ModelResponse),
}

/// A boxed stream of events; an `Err` item ends the stream.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ProviderError>> + Send>>;

/// Reported before every HTTP attempt of a model call, retries included.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// 1 for the first try, 2 for the first retry, ...
    pub number: u32,
    /// The error that caused this retry (`None` for the first try).
    pub retry_of: Option<ProviderError>,
}

/// Receives every attempt; returning an error refuses it (e.g. the loop's
/// call budget is spent), and the call fails with that error.
pub type AttemptHook = Arc<dyn Fn(&Attempt) -> Result<(), ProviderError> + Send + Sync>;

/// Per-call options: cancellation and attempt accounting.
#[derive(Clone, Default)]
pub struct CallContext {
    /// Cancelling this handle (or its parent, when it is a
    /// [`CancelHandle::child`]) ends the call with
    /// [`ProviderError::Cancelled`].
    pub cancel: CancelHandle,
    /// Called before each attempt so the loop can count (and cap) model calls.
    pub on_attempt: Option<AttemptHook>,
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("cancelled", &self.cancel.is_cancelled())
            .field("on_attempt", &self.on_attempt.is_some())
            .finish()
    }
}

impl CallContext {
    /// Report an attempt to the hook, if any.
    pub(crate) fn report(&self, attempt: &Attempt) -> Result<(), ProviderError> {
        match &self.on_attempt {
            Some(hook) => hook(attempt),
            None => Ok(()),
        }
    }
}

/// A model the agent loop can call: a real connector or a scripted fake.
pub trait Model: Send + Sync {
    /// Run one call and return the whole turn.
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ModelResponse, ProviderError>>;

    /// Run one call as a stream: text deltas and completed tool calls, then
    /// [`StreamEvent::Completed`]. Retries happen only before the first event.
    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<EventStream, ProviderError>>;
}
