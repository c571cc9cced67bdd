//! The detached check packet a completion or progress checker receives.
//!
//! Field names follow the spec (`outputText`, `observedToolCalls`, ...) when
//! serialized as JSON. Bounds are constants here; the engine enforces them
//! when it builds a packet, and [`CheckPacket::bounded`] re-applies them to a
//! packet that came from outside (a file, a test).

use serde::{Deserialize, Serialize};

/// Candidate output is cut to this many characters (Unicode scalar values).
pub const MAX_OUTPUT_CHARS: usize = 32_768;
/// At most this many (most recent) observations are carried.
pub const MAX_OBSERVATIONS: usize = 100;
/// The whole packet serializes to at most this many bytes of JSON.
pub const MAX_PACKET_BYTES: usize = 1024 * 1024;

/// The effect a tool declared when it was registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// An actual read with no external effect.
    Read,
    /// A write or other external effect.
    Write,
    /// Not declared: treated conservatively like a write.
    #[default]
    Unknown,
}

/// The framework's authentic outcome status for a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeStatus {
    /// The tool ran and the framework reported success.
    Succeeded,
    /// The call failed (see [`FailureKind`]).
    Failed,
    /// The tool was not started; its admission may be released.
    NotStarted,
    /// Whether the tool took effect is not known.
    Unknown,
}

/// Why a failed call failed, without error details.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// Denied by permissions; the tool never ran.
    Permission,
    /// Arguments rejected before execution; the tool never ran.
    Arguments,
    /// The tool ran and reported an error.
    Execution,
    /// The tool exceeded its deadline.
    Timeout,
    /// The call was cancelled.
    Cancelled,
}

/// Outcome metadata: never error text, raw arguments or result bodies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Outcome {
    /// The framework's status.
    pub status: OutcomeStatus,
    /// Set when `status` is `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureKind>,
    /// True when the tool actually ran (an execution receipt exists).
    #[serde(default)]
    pub executed: bool,
    /// Lowercase hex SHA-256 of the canonical JSON result, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_fingerprint: Option<String>,
}

/// One actual tool execution observed by the policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Observation {
    /// The tool's registered name.
    pub tool_name: String,
    /// The provider's call id.
    pub call_id: String,
    /// The effect declared at admission.
    pub effect: Effect,
    /// Absent when no authentic outcome was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
}

/// The bounded built-in task-state snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskStateSnapshot {
    /// The host scope the state belongs to.
    pub host_scope: String,
    /// The state's revision.
    pub revision: u64,
    /// Bumped by a same-revision restore.
    #[serde(default)]
    pub generation: u64,
    /// The state document.
    pub payload: serde_json::Value,
}

/// The detached packet handed to completion and progress checkers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckPacket {
    /// The policy execution this check belongs to.
    pub execution_id: String,
    /// Main-loop iteration count at the check.
    pub iteration: u32,
    /// Candidate final output, at most [`MAX_OUTPUT_CHARS`] characters.
    pub output_text: String,
    /// True when `output_text` was cut.
    #[serde(default)]
    pub output_truncated: bool,
    /// The last (at most [`MAX_OBSERVATIONS`]) observations, oldest first.
    #[serde(default)]
    pub observations: Vec<Observation>,
    /// Every observation in this execution, including omitted ones.
    #[serde(default)]
    pub observed_tool_calls: u32,
    /// True when older observations were omitted.
    #[serde(default)]
    pub observations_truncated: bool,
    /// The task-state snapshot, when the built-in store is enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_state: Option<TaskStateSnapshot>,
}

/// Returns `text` cut to at most `max_chars` characters, and whether it was cut.
pub fn truncate_chars(text: &str, max_chars: usize) -> (&str, bool) {
    match text.char_indices().nth(max_chars) {
        Some((byte, _)) => (&text[..byte], true),
        None => (text, false),
    }
}

impl CheckPacket {
    /// Applies the output and observation bounds to a packet built elsewhere,
    /// setting the truncation flags and keeping `observed_tool_calls` at least
    /// the number of observations carried.
    pub fn bounded(mut self) -> Self {
        let (text, cut) = truncate_chars(&self.output_text, MAX_OUTPUT_CHARS);
        if cut {
            self.output_text = text.to_owned();
            self.output_truncated = true;
        }
        let carried = u32::try_from(self.observations.len()).unwrap_or(u32::MAX);
        self.observed_tool_calls = self.observed_tool_calls.max(carried);
        if self.observations.len() > MAX_OBSERVATIONS {
            let drop = self.observations.len() - MAX_OBSERVATIONS;
            self.observations.drain(..drop);
            self.observations_truncated = true;
        }
        self
    }
}
