//! Outcome normalization: every call settles as succeeded, failed (with a
//! sanitized error), not started or unknown; only calls that actually ran
//! carry an execution receipt.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use verdict_policy::{Effect, FailureKind, Fingerprint, ObservedOutcome, OutcomeStatus};
use verdict_providers::{ToolCall, ToolResult};

/// A sanitized error is at most this many characters.
const MAX_ERROR_CHARS: usize = 500;

/// How a tool call settled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolOutcome {
    /// The tool ran and returned a value (whatever the value says: an
    /// application `{"success": false}` is a successful execution).
    Succeeded {
        /// The returned value.
        value: Value,
    },
    /// The call failed.
    Failed {
        /// Why, by class.
        kind: FailureKind,
        /// A sanitized message for the model.
        error: String,
    },
    /// The tool was not started (a hook or the policy skipped it, or the
    /// execution stopped first).
    NotStarted {
        /// The message sent to the model in the call's place.
        message: String,
    },
    /// The tool started but whether it took effect is not known (it
    /// panicked).
    Unknown {
        /// A sanitized message for the model.
        error: String,
    },
}

impl ToolOutcome {
    /// The framework outcome the policy observes; `executed` says whether
    /// the tool actually ran (it has a receipt).
    pub fn to_policy(&self, executed: bool) -> ObservedOutcome {
        let (status, failure) = match self {
            Self::Succeeded { .. } => (OutcomeStatus::Succeeded, None),
            Self::Failed { kind, .. } => (OutcomeStatus::Failed, Some(*kind)),
            Self::NotStarted { .. } => (OutcomeStatus::NotStarted, None),
            Self::Unknown { .. } => (OutcomeStatus::Unknown, None),
        };
        ObservedOutcome {
            status,
            failure,
            executed,
            result_fingerprint: None,
        }
    }

    /// The content and error flag of the result message for the model.
    pub(crate) fn content(&self) -> (String, bool) {
        match self {
            Self::Succeeded { value } => (
                match value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                },
                false,
            ),
            Self::Failed { error, .. } | Self::Unknown { error } => {
                (format!("error: {error}"), true)
            }
            Self::NotStarted { message } => (message.clone(), false),
        }
    }
}

/// Proof that a tool actually ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionReceipt {
    /// The provider's call id.
    pub call_id: String,
    /// The tool that ran.
    pub tool_name: String,
    /// Its declared effect.
    pub effect: Effect,
    /// Wall-clock milliseconds from dispatch to settlement.
    pub duration_ms: u64,
    /// Fingerprint of the result, when it succeeded and was fingerprintable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_fingerprint: Option<String>,
}

/// One settled tool call: the call as it ran (after hooks), its effect, its
/// outcome and, if it ran, its receipt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettledCall {
    /// The call, with the arguments that actually ran.
    pub call: ToolCall,
    /// The effect the tool declared (unknown for an unregistered tool).
    pub effect: Effect,
    /// How it settled.
    pub outcome: ToolOutcome,
    /// Present only when the tool actually ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<ExecutionReceipt>,
    /// True when the tool answered with a pending handle: the call started,
    /// its result arrives later (the outcome is then a placeholder).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
}

impl SettledCall {
    /// A call that never started.
    pub(crate) fn not_started(call: ToolCall, effect: Effect, message: impl Into<String>) -> Self {
        Self {
            call,
            effect,
            outcome: ToolOutcome::NotStarted {
                message: message.into(),
            },
            receipt: None,
            pending: false,
        }
    }

    /// The framework outcome the policy observes.
    pub fn policy_outcome(&self) -> ObservedOutcome {
        self.outcome.to_policy(self.receipt.is_some())
    }

    /// The returned value, when the call succeeded.
    pub fn value(&self) -> Option<&Value> {
        match &self.outcome {
            ToolOutcome::Succeeded { value } => Some(value),
            _ => None,
        }
    }

    /// The result message sent back to the model.
    pub fn to_result(&self) -> ToolResult {
        let (content, is_error) = match &self.outcome {
            _ if self.pending => (PENDING_RESULT.to_owned(), false),
            outcome => outcome.content(),
        };
        ToolResult {
            call_id: self.call.id.clone(),
            name: self.call.name.clone(),
            content,
            is_error,
        }
    }
}

/// The result text of a call whose tool answered with a pending handle.
pub(crate) const PENDING_RESULT: &str =
    "Pending: this call runs asynchronously; its result will be delivered later.";

/// The fingerprint of a result value, when it can be computed.
pub(crate) fn result_fingerprint(value: &Value) -> Option<String> {
    Fingerprint::of(value).ok().map(Fingerprint::into_string)
}

/// Makes an error message safe to show the model: control characters
/// become spaces, whitespace runs collapse, and the text is cut to 500
/// characters.
pub fn sanitize_error(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_ERROR_CHARS));
    let mut count = 0;
    let mut last_space = true;
    for c in text.chars() {
        let c = if c.is_control() || c.is_whitespace() {
            ' '
        } else {
            c
        };
        if c == ' ' && last_space {
            continue;
        }
        if count == MAX_ERROR_CHARS {
            out.push('…');
            break;
        }
        last_space = c == ' ';
        out.push(c);
        count += 1;
    }
    let trimmed = out.trim_end();
    if trimmed.is_empty() {
        "the tool failed".to_owned()
    } else {
        trimmed.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_strips_controls_and_bounds_length() {
        assert_eq!(sanitize_error("bad\n\tthing\u{7}"), "bad thing");
        assert_eq!(sanitize_error("  "), "the tool failed");
        let long = "x".repeat(2_000);
        let cut = sanitize_error(&long);
        assert_eq!(cut.chars().count(), MAX_ERROR_CHARS + 1);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn only_executed_calls_report_executed() {
        let call = ToolCall {
            id: "c".into(),
            name: "t".into(),
            arguments: Value::Null,
            signature: None,
        };
        let denied = SettledCall {
            call: call.clone(),
            effect: Effect::Write,
            outcome: ToolOutcome::Failed {
                kind: FailureKind::Permission,
                error: "denied".into(),
            },
            receipt: None,
            pending: false,
        };
        let outcome = denied.policy_outcome();
        assert_eq!(outcome.status, OutcomeStatus::Failed);
        assert_eq!(outcome.failure, Some(FailureKind::Permission));
        assert!(!outcome.executed);
        assert!(denied.to_result().is_error);
    }
}
