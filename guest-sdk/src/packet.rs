//! The check packet a verifier receives: host-owned evidence about one
//! managed execution, mirroring `verdict:verifier/types` in
//! `wit/verdict-verifier@0.1.0/verifier.wit`, and the host's bounds on it.
//!
//! An observation's strings are [`Cow`]s: in a call through the packed
//! entry point (the default with a verdict host) they borrow the one
//! string the host passed all of them in, so a full packet costs the guest
//! no allocation per string (a third of a 100-observation check was the
//! guest's allocator). They compare with `&str` and `String` as they are,
//! and dereference to `&str` (`&*observation.call_id`).

use std::borrow::Cow;

/// The host cuts the candidate output to this many characters (Unicode
/// scalar values) and sets [`Packet::output_truncated`].
pub const MAX_OUTPUT_CHARS: usize = 32_768;
/// The host carries at most this many (most recent) observations and sets
/// [`Packet::observations_truncated`] when it omits older ones.
pub const MAX_OBSERVATIONS: usize = 100;
/// The whole packet is at most this many bytes serialized as JSON.
pub const MAX_PACKET_BYTES: usize = 1024 * 1024;

/// The effect a tool declared when it was registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Effect {
    /// The tool only reads.
    Read,
    /// The tool changes something outside the agent.
    Write,
    /// The tool declared no effect.
    Unknown,
}

/// The framework's authentic outcome status for one tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutcomeStatus {
    /// The call completed successfully.
    Succeeded,
    /// The call failed (see [`FailureKind`]).
    Failed,
    /// The call was never started.
    NotStarted,
    /// The outcome is not known.
    Unknown,
}

/// Why a failed call failed, without any error details.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// Denied by the host's permission policy (the tool never ran).
    Permission,
    /// Arguments were rejected before execution (the tool never ran).
    Arguments,
    /// The tool ran and reported an error.
    Execution,
    /// The tool exceeded its deadline.
    Timeout,
    /// The call was cancelled.
    Cancelled,
}

/// Outcome metadata: never error text, raw arguments or result bodies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome<'a> {
    /// The outcome status.
    pub status: OutcomeStatus,
    /// Set when `status` is [`OutcomeStatus::Failed`].
    pub failure: Option<FailureKind>,
    /// True when the tool actually ran (an execution receipt exists).
    pub executed: bool,
    /// Lowercase hex SHA-256 of the canonical JSON result, when known.
    pub result_fingerprint: Option<Cow<'a, str>>,
}

impl<'a> Outcome<'a> {
    /// A successful, executed call.
    pub fn succeeded() -> Self {
        Self {
            status: OutcomeStatus::Succeeded,
            failure: None,
            executed: true,
            result_fingerprint: None,
        }
    }

    /// A failed call; `executed` is true for the kinds where the tool ran
    /// (`Execution`, `Timeout`).
    pub fn failed(kind: FailureKind) -> Self {
        Self {
            status: OutcomeStatus::Failed,
            failure: Some(kind),
            executed: matches!(kind, FailureKind::Execution | FailureKind::Timeout),
            result_fingerprint: None,
        }
    }

    /// A call that never started.
    pub fn not_started() -> Self {
        Self {
            status: OutcomeStatus::NotStarted,
            failure: None,
            executed: false,
            result_fingerprint: None,
        }
    }

    /// Sets the result fingerprint.
    pub fn with_fingerprint(mut self, fingerprint: impl Into<Cow<'a, str>>) -> Self {
        self.result_fingerprint = Some(fingerprint.into());
        self
    }

    /// The same outcome owning its fingerprint.
    pub fn into_owned(self) -> Outcome<'static> {
        Outcome {
            status: self.status,
            failure: self.failure,
            executed: self.executed,
            result_fingerprint: self.result_fingerprint.map(owned),
        }
    }
}

/// One actual tool execution observed by the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation<'a> {
    /// The registered tool name.
    pub tool_name: Cow<'a, str>,
    /// The call id the model or framework assigned.
    pub call_id: Cow<'a, str>,
    /// The effect the tool declared.
    pub effect: Effect,
    /// Absent when no authentic outcome was recorded.
    pub outcome: Option<Outcome<'a>>,
}

impl<'a> Observation<'a> {
    /// An observation with no recorded outcome yet.
    pub fn new(
        tool_name: impl Into<Cow<'a, str>>,
        call_id: impl Into<Cow<'a, str>>,
        effect: Effect,
    ) -> Self {
        Self {
            tool_name: tool_name.into(),
            call_id: call_id.into(),
            effect,
            outcome: None,
        }
    }

    /// Sets the recorded outcome.
    pub fn with_outcome(mut self, outcome: Outcome<'a>) -> Self {
        self.outcome = Some(outcome);
        self
    }

    /// The outcome status, or `None` when no outcome was recorded.
    pub fn status(&self) -> Option<OutcomeStatus> {
        self.outcome.as_ref().map(|outcome| outcome.status)
    }

    /// True when the call has an authentic `succeeded` outcome.
    pub fn succeeded(&self) -> bool {
        self.status() == Some(OutcomeStatus::Succeeded)
    }

    /// True when the tool actually ran (an execution receipt exists).
    pub fn executed(&self) -> bool {
        self.outcome
            .as_ref()
            .is_some_and(|outcome| outcome.executed)
    }

    /// The same observation owning its strings (to keep it past the call).
    pub fn into_owned(self) -> Observation<'static> {
        Observation {
            tool_name: owned(self.tool_name),
            call_id: owned(self.call_id),
            effect: self.effect,
            outcome: self.outcome.map(Outcome::into_owned),
        }
    }
}

fn owned(text: Cow<'_, str>) -> Cow<'static, str> {
    Cow::Owned(text.into_owned())
}

/// The bounded built-in task-state snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskState {
    /// The host scope the state belongs to.
    pub host_scope: String,
    /// The state revision.
    pub revision: u64,
    /// Bumped by a same-revision restore.
    pub generation: u64,
    /// The state document as JSON text.
    pub payload_json: String,
}

impl TaskState {
    /// The payload parsed as JSON.
    pub fn payload(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_str(&self.payload_json)
    }
}

/// The detached check packet (at most [`MAX_PACKET_BYTES`] serialized).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Packet<'a> {
    /// The managed execution this check belongs to.
    pub execution_id: String,
    /// Main-loop iteration count at the check.
    pub iteration: u32,
    /// Candidate final output, at most [`MAX_OUTPUT_CHARS`] characters
    /// (Unicode scalar values); empty in a progress packet.
    pub output_text: String,
    /// True when the host cut `output_text` to its bound.
    pub output_truncated: bool,
    /// The last (at most [`MAX_OBSERVATIONS`]) observations, oldest first.
    pub observations: Vec<Observation<'a>>,
    /// All observations in this execution, including omitted ones.
    pub observed_tool_calls: u32,
    /// True when older observations were omitted.
    pub observations_truncated: bool,
    /// The task-state snapshot, when the host enabled it.
    pub task_state: Option<TaskState>,
}

impl<'a> Packet<'a> {
    /// An empty packet for `execution_id` (useful in tests).
    pub fn new(execution_id: impl Into<String>) -> Self {
        Self {
            execution_id: execution_id.into(),
            ..Self::default()
        }
    }

    /// Sets the candidate output text.
    pub fn with_output(mut self, text: impl Into<String>) -> Self {
        self.output_text = text.into();
        self
    }

    /// Appends an observation and counts it in `observed_tool_calls`.
    pub fn with_observation(mut self, observation: Observation<'a>) -> Self {
        self.observations.push(observation);
        self.observed_tool_calls = self.observed_tool_calls.saturating_add(1);
        self
    }

    /// Sets the task-state snapshot.
    pub fn with_task_state(mut self, state: TaskState) -> Self {
        self.task_state = Some(state);
        self
    }

    /// Observations of the tool named `tool`, oldest first.
    pub fn observations_of<'s>(
        &'s self,
        tool: &'s str,
    ) -> impl Iterator<Item = &'s Observation<'a>> {
        self.observations
            .iter()
            .filter(move |observation| observation.tool_name == tool)
    }

    /// The most recent observation of `tool`.
    pub fn last_of(&self, tool: &str) -> Option<&Observation<'a>> {
        self.observations
            .iter()
            .rev()
            .find(|observation| observation.tool_name == tool)
    }

    /// True when at least one call of `tool` has an authentic `succeeded` outcome.
    pub fn succeeded(&self, tool: &str) -> bool {
        self.observations_of(tool).any(Observation::succeeded)
    }

    /// Calls with the given declared effect, oldest first.
    pub fn with_effect(&self, effect: Effect) -> impl Iterator<Item = &Observation<'a>> {
        self.observations
            .iter()
            .filter(move |observation| observation.effect == effect)
    }

    /// Write-effect calls that succeeded and actually executed, oldest first.
    pub fn executed_writes(&self) -> impl Iterator<Item = &Observation<'a>> {
        self.with_effect(Effect::Write)
            .filter(|observation| observation.succeeded() && observation.executed())
    }

    /// The observation with call id `call_id`.
    pub fn call(&self, call_id: &str) -> Option<&Observation<'a>> {
        self.observations
            .iter()
            .find(|observation| observation.call_id == call_id)
    }

    /// The same packet owning all of its strings (to keep it past the call).
    pub fn into_owned(self) -> Packet<'static> {
        Packet {
            execution_id: self.execution_id,
            iteration: self.iteration,
            output_text: self.output_text,
            output_truncated: self.output_truncated,
            observations: self
                .observations
                .into_iter()
                .map(Observation::into_owned)
                .collect(),
            observed_tool_calls: self.observed_tool_calls,
            observations_truncated: self.observations_truncated,
            task_state: self.task_state,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Packet<'static> {
        Packet::new("exec-1")
            .with_observation(
                Observation::new("read_artifact", "c1", Effect::Read)
                    .with_outcome(Outcome::failed(FailureKind::Execution)),
            )
            .with_observation(
                Observation::new("read_artifact", "c2", Effect::Read)
                    .with_outcome(Outcome::succeeded()),
            )
            .with_observation(Observation::new("write_file", "c3", Effect::Write))
            .with_observation(
                Observation::new("send_mail", "c4", Effect::Write)
                    .with_outcome(Outcome::succeeded()),
            )
    }

    #[test]
    fn succeeded_looks_for_any_successful_call_of_the_tool() {
        let packet = sample();
        assert!(packet.succeeded("read_artifact"));
        assert!(!packet.succeeded("write_file"));
        assert!(!packet.succeeded("missing_tool"));
    }

    #[test]
    fn last_of_and_call_find_observations() {
        let packet = sample();
        assert_eq!(
            packet.last_of("read_artifact").map(|o| &*o.call_id),
            Some("c2")
        );
        assert_eq!(packet.call("c3").map(|o| &*o.tool_name), Some("write_file"));
        assert!(packet.call("c9").is_none());
        assert_eq!(packet.observed_tool_calls, 4);
    }

    #[test]
    fn executed_writes_skip_calls_without_success() {
        let packet = sample();
        let ids: Vec<_> = packet.executed_writes().map(|o| &*o.call_id).collect();
        assert_eq!(ids, ["c4"]);
        assert_eq!(packet.with_effect(Effect::Write).count(), 2);
    }

    #[test]
    fn a_borrowing_packet_outlives_its_text_once_owned() {
        let owned = {
            let text = String::from("read_artifactc1");
            let packet = Packet::new("exec").with_observation(
                Observation::new(&text[..13], &text[13..], Effect::Read)
                    .with_outcome(Outcome::succeeded().with_fingerprint(&text[13..])),
            );
            assert!(matches!(packet.observations[0].tool_name, Cow::Borrowed(_)));
            packet.into_owned()
        };
        assert!(owned.succeeded("read_artifact"));
        assert_eq!(owned.call("c1").map(|o| o.executed()), Some(true));
        assert!(matches!(owned.observations[0].call_id, Cow::Owned(_)));
        let fingerprint = owned.observations[0]
            .outcome
            .as_ref()
            .and_then(|o| o.result_fingerprint.as_deref());
        assert_eq!(fingerprint, Some("c1"));
    }

    #[test]
    fn failure_kinds_say_whether_the_tool_ran() {
        assert!(Outcome::failed(FailureKind::Execution).executed);
        assert!(Outcome::failed(FailureKind::Timeout).executed);
        assert!(!Outcome::failed(FailureKind::Permission).executed);
        assert!(!Outcome::failed(FailureKind::Arguments).executed);
        assert!(!Outcome::not_started().executed);
    }

    #[test]
    fn task_state_payload_parses_json() {
        let state = TaskState {
            host_scope: "tenant-a".into(),
            revision: 3,
            generation: 0,
            payload_json: r#"{"step":2}"#.into(),
        };
        assert_eq!(
            state.payload().ok().and_then(|v| v["step"].as_u64()),
            Some(2)
        );
        let broken = TaskState {
            payload_json: "{".into(),
            ..state
        };
        assert!(broken.payload().is_err());
    }
}
