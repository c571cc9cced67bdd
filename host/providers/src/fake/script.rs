//! The script a fake model follows: conversations of ordered turns, each a
//! reply or a fault, optionally checked against the request.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::fake::error::FakeServerError;
use crate::model::{FinishReason, Message, ModelRequest, ModelResponse, ToolCall, Usage};

/// A whole script. Loadable from JSON (`Script::from_json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Conversations, tried in order for each request.
    pub conversations: Vec<Conversation>,
}

/// The turns of one conversation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conversation {
    /// A request belongs here when its first user message contains this text;
    /// `None` takes any request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_user_contains: Option<String>,
    /// Turns served in order, one per request.
    pub turns: Vec<ScriptedTurn>,
}

/// One scripted turn: the reply or fault that answers one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedTurn {
    /// When set, the request must satisfy this or the fake answers HTTP 400.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Matcher>,
    /// Wait this long before the response headers (a slow first byte).
    #[serde(default)]
    pub first_byte_delay_ms: u64,
    /// What to answer.
    pub action: Action,
}

/// What a turn answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A model turn.
    Reply(Reply),
    /// A failure.
    Fault(Fault),
}

/// A model turn to serve.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    /// Answer text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Tool calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ScriptedCall>,
    /// Finish reason; default `tool_calls` when there are calls, else `stop`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<FinishReason>,
    /// Usage to report.
    #[serde(default)]
    pub usage: Usage,
    /// Characters per streamed text or argument fragment (default 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_chars: Option<usize>,
}

/// A scripted tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// Call id; default `call_<turn>_<n>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Arguments object.
    #[serde(default)]
    pub arguments: Value,
}

/// A failure to inject.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Fault {
    /// An HTTP error status with the vendor's error body (500, 429, 401...).
    Status {
        /// HTTP status.
        status: u16,
        /// Error message.
        #[serde(default)]
        message: String,
        /// `retry-after` seconds header.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_secs: Option<u64>,
    },
    /// Send `after_frames` whole SSE frames of `reply`, then half of the next
    /// one, then drop the connection (non-streaming: half the body).
    CutStream {
        /// Whole frames sent before the cut.
        after_frames: usize,
        /// The turn being cut.
        reply: Reply,
    },
    /// Send `after_frames` whole frames of `reply`, pause `stall_ms`, then
    /// send the rest (a stream that goes quiet mid-way).
    StallStream {
        /// Frames sent before the pause.
        after_frames: usize,
        /// Pause length.
        stall_ms: u64,
        /// The turn being served.
        reply: Reply,
    },
    /// A body (or, streaming, an event after the first frame) that is not JSON.
    MalformedJson,
    /// Streaming: after `after_frames` frames, the vendor's error event.
    /// Non-streaming: the same error as an HTTP status.
    ErrorEvent {
        /// Frames sent before the error.
        #[serde(default)]
        after_frames: usize,
        /// The error's HTTP-equivalent status (429, 500, 529...).
        status: u16,
        /// Error message.
        message: String,
    },
}

/// A check on the request a turn answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Matcher {
    /// The last message is the result of this tool call.
    LastIsToolResult {
        /// The call id.
        call_id: String,
    },
    /// The last user message contains this text.
    LastUserContains {
        /// The text.
        text: String,
    },
    /// The request offers this tool.
    ToolOffered {
        /// The tool name.
        name: String,
    },
}

impl Matcher {
    /// Whether `request` satisfies the check.
    pub fn matches(&self, request: &ModelRequest) -> bool {
        match self {
            Self::LastIsToolResult { call_id } => matches!(
                request.messages.last(),
                Some(Message::ToolResult(r)) if &r.call_id == call_id
            ),
            Self::LastUserContains { text } => request
                .messages
                .iter()
                .rev()
                .find_map(|m| match m {
                    Message::User { text } => Some(text),
                    _ => None,
                })
                .is_some_and(|t| t.contains(text.as_str())),
            Self::ToolOffered { name } => request.tools.iter().any(|t| &t.name == name),
        }
    }
}

impl Script {
    /// One conversation taking every request, with these turns.
    pub fn new(turns: Vec<ScriptedTurn>) -> Self {
        Self {
            conversations: vec![Conversation {
                first_user_contains: None,
                turns,
            }],
        }
    }

    /// Parse a JSON script.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Read a JSON script file (for `verdict fake-provider --script FILE`).
    pub fn from_file(path: &std::path::Path) -> Result<Self, FakeServerError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| FakeServerError::Script(format!("{}: {e}", path.display())))?;
        Self::from_json(&text)
            .map_err(|e| FakeServerError::Script(format!("{}: {e}", path.display())))
    }
}

impl ScriptedTurn {
    /// A text answer.
    pub fn text(text: impl Into<String>) -> Self {
        Self::reply(Reply {
            text: Some(text.into()),
            ..Reply::default()
        })
    }

    /// One tool call.
    pub fn tool_call(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self::reply(Reply {
            tool_calls: vec![ScriptedCall {
                id: Some(id.into()),
                name: name.into(),
                arguments,
            }],
            ..Reply::default()
        })
    }

    /// Any reply.
    pub fn reply(reply: Reply) -> Self {
        Self {
            when: None,
            first_byte_delay_ms: 0,
            action: Action::Reply(reply),
        }
    }

    /// A fault.
    pub fn fault(fault: Fault) -> Self {
        Self {
            when: None,
            first_byte_delay_ms: 0,
            action: Action::Fault(fault),
        }
    }

    /// Require `matcher` to hold for the request.
    pub fn when(mut self, matcher: Matcher) -> Self {
        self.when = Some(matcher);
        self
    }

    /// Delay the first byte.
    pub fn delayed(mut self, ms: u64) -> Self {
        self.first_byte_delay_ms = ms;
        self
    }
}

impl Reply {
    /// The neutral response this reply stands for; `turn` numbers the default
    /// call ids.
    pub fn to_response(&self, turn: usize) -> ModelResponse {
        let tool_calls: Vec<ToolCall> = self
            .tool_calls
            .iter()
            .enumerate()
            .map(|(n, c)| ToolCall {
                id: c.id.clone().unwrap_or_else(|| format!("call_{turn}_{n}")),
                name: c.name.clone(),
                arguments: if c.arguments.is_null() {
                    Value::Object(Default::default())
                } else {
                    c.arguments.clone()
                },
                signature: None,
            })
            .collect();
        let finish_reason = self
            .finish_reason
            .clone()
            .unwrap_or(if tool_calls.is_empty() {
                FinishReason::Stop
            } else {
                FinishReason::ToolCalls
            });
        ModelResponse {
            id: Some(format!("fake-{turn}")),
            model: None,
            text: self.text.clone(),
            tool_calls,
            dropped_tool_calls: 0,
            finish_reason,
            usage: self.usage,
            attempts: 1,
        }
    }

    /// Fragment size for streaming.
    pub fn chunk(&self) -> usize {
        self.chunk_chars.unwrap_or(4).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example in README.md parses into the script it describes.
    #[test]
    fn readme_example_parses() {
        let readme = include_str!("../../README.md");
        let start = readme.find("{\"conversations\"").unwrap_or(0);
        let end = readme[start..]
            .find("\n```")
            .map_or(readme.len(), |e| start + e);
        let script = Script::from_json(&readme[start..end]);
        let Ok(script) = script else {
            panic!("{script:?}");
        };
        let turns = &script.conversations[0].turns;
        assert_eq!(turns.len(), 4);
        assert_eq!(
            turns[1].when,
            Some(Matcher::LastIsToolResult {
                call_id: "call_1".into()
            })
        );
        assert!(matches!(
            turns[2].action,
            Action::Fault(Fault::Status {
                status: 429,
                retry_after_secs: Some(1),
                ..
            })
        ));
        assert_eq!(turns[3].first_byte_delay_ms, 5000);
    }
}
