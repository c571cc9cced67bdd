//! Component glue (wasm only): the wit-bindgen bindings, conversions between
//! them and the SDK types, the host-backed [`Artifacts`], and the entry points
//! the [`crate::export!`] macro wires to the exports.
//!
//! Each world is generated in its own module with an exported macro, so a
//! component exports only the roles its author names: wit-component requires
//! an implementation for every export of every world linked into the binary.

use crate::artifacts::{Artifact, ArtifactError, Artifacts};
use crate::packed::{PackedEntry, PackedOutcome, unpack};
use crate::packet::{Effect, FailureKind, Observation, Outcome, OutcomeStatus, Packet, TaskState};
use crate::verdict::Verdict;
use crate::verifier::{ProgressKey, Verifier};

/// Bindings for the `completion-checker` world; also the home of the shared
/// `types` and `artifacts` interfaces.
#[allow(missing_docs, unsafe_code, clippy::all)]
pub mod completion_bindings {
    wit_bindgen::generate!({
        world: "completion-checker",
        path: "../wit/verdict-verifier@0.1.0",
        pub_export_macro: true,
        export_macro_name: "export_completion",
        default_bindings_module: "verdict_guest::__private::completion_bindings",
    });
}

/// Bindings for the `progress-checker` world, reusing the shared interfaces.
#[allow(missing_docs, unsafe_code, clippy::all)]
pub mod progress_bindings {
    wit_bindgen::generate!({
        world: "progress-checker",
        path: "../wit/verdict-verifier@0.1.0",
        pub_export_macro: true,
        export_macro_name: "export_progress",
        default_bindings_module: "verdict_guest::__private::progress_bindings",
        with: {
            "verdict:verifier/types@0.1.0": crate::wasm::completion_bindings::verdict::verifier::types,
            "verdict:verifier/artifacts@0.1.0": crate::wasm::completion_bindings::verdict::verifier::artifacts,
        },
    });
}

/// Bindings for the packed completion entry point
/// (`wit/verdict-packed@0.1.0`), exported beside the standard one.
#[allow(missing_docs, unsafe_code, clippy::all)]
pub mod packed_completion_bindings {
    wit_bindgen::generate!({
        world: "packed-completion-checker",
        path: "../wit/verdict-packed@0.1.0",
        pub_export_macro: true,
        export_macro_name: "export_packed_completion",
        default_bindings_module: "verdict_guest::__private::packed_completion_bindings",
    });
}

/// Bindings for the packed progress entry point (its types repeat the
/// packed completion's).
#[allow(missing_docs, unsafe_code, clippy::all)]
pub mod packed_progress_bindings {
    wit_bindgen::generate!({
        world: "packed-progress-checker",
        path: "../wit/verdict-packed@0.1.0",
        pub_export_macro: true,
        export_macro_name: "export_packed_progress",
        default_bindings_module: "verdict_guest::__private::packed_progress_bindings",
    });
}

use completion_bindings::verdict::verifier::{artifacts as wit_artifacts, types as wit};
use packed_completion_bindings::exports::verdict::packed::completion as packed;
use packed_progress_bindings::exports::verdict::packed::progress as packed_progress;

pub use completion_bindings::exports::verdict::verifier::completion::Guest as CompletionGuest;
pub use packed::{Packet as PackedPacket, Verdict as PackedVerdict};
pub use packed_completion_bindings::exports::verdict::packed::completion::Guest as PackedCompletionGuest;
pub use packed_progress::Packet as PackedProgressPacket;
pub use packed_progress_bindings::exports::verdict::packed::progress::Guest as PackedProgressGuest;
pub use progress_bindings::exports::verdict::verifier::progress::Guest as ProgressGuest;
pub use wit::{Packet as WitPacket, Verdict as WitVerdict};

/// What every entry point does first: on a lean build, install the panic
/// report (std's own panic output goes nowhere there).
fn enter() {
    #[cfg(target_os = "unknown")]
    crate::lean::report_panics();
}

/// Runs a completion verifier on a packet lowered by the host.
pub fn run_check<V: Verifier + Default>(packet: WitPacket) -> WitVerdict {
    enter();
    let verdict = V::default().check(&packet.into(), &HostArtifacts);
    verdict.into()
}

/// Runs a progress verifier on a packet lowered by the host.
pub fn run_progress_key<P: ProgressKey + Default>(packet: WitPacket) -> String {
    enter();
    P::default().progress_key(&packet.into(), &HostArtifacts)
}

/// Runs a completion verifier on a packed packet.
pub fn run_check_packed<V: Verifier + Default>(packet: PackedPacket) -> PackedVerdict {
    enter();
    let verdict = unpacked(packet, |packet| V::default().check(packet, &HostArtifacts));
    PackedVerdict {
        complete: verdict.complete,
        reason: verdict.reason,
        feedback: verdict.feedback,
    }
}

/// Runs a progress verifier on a packed packet.
pub fn run_progress_key_packed<P: ProgressKey + Default>(packet: PackedProgressPacket) -> String {
    enter();
    unpacked_for_progress(packet, |packet| {
        P::default().progress_key(packet, &HostArtifacts)
    })
}

/// Calls `f` with the SDK packet a packed one stands for (its observations
/// borrowing the packed text), for each packed interface's own (identical)
/// generated types. A host that breaks the packed format
/// (lengths that do not cut the text into its pieces) makes the call trap
/// with the reason on stderr: no verdict is made from a packet that is not
/// the host's.
macro_rules! unpacked_from {
    ($name:ident, $packed:ident) => {
        fn $name<R>(packet: $packed::Packet, f: impl FnOnce(&Packet<'_>) -> R) -> R {
            let entries = packet.observations.entries.iter().map(|e| PackedEntry {
                tool_name_len: e.tool_name_len,
                call_id_len: e.call_id_len,
                effect: match e.effect {
                    $packed::Effect::Read => Effect::Read,
                    $packed::Effect::Write => Effect::Write,
                    $packed::Effect::Unknown => Effect::Unknown,
                },
                outcome: e.outcome.map(|o| PackedOutcome {
                    status: match o.status {
                        $packed::OutcomeStatus::Succeeded => OutcomeStatus::Succeeded,
                        $packed::OutcomeStatus::Failed => OutcomeStatus::Failed,
                        $packed::OutcomeStatus::NotStarted => OutcomeStatus::NotStarted,
                        $packed::OutcomeStatus::Unknown => OutcomeStatus::Unknown,
                    },
                    failure: o.failure.map(|kind| match kind {
                        $packed::FailureKind::Permission => FailureKind::Permission,
                        $packed::FailureKind::Arguments => FailureKind::Arguments,
                        $packed::FailureKind::Execution => FailureKind::Execution,
                        $packed::FailureKind::Timeout => FailureKind::Timeout,
                        $packed::FailureKind::Cancelled => FailureKind::Cancelled,
                    }),
                    executed: o.executed,
                    result_fingerprint_len: o.result_fingerprint_len,
                }),
            });
            let observations = match unpack(&packet.observations.text, entries) {
                Ok(observations) => observations,
                Err(malformed) => panic!("the host sent a malformed packed packet: {malformed}"),
            };
            f(&Packet {
                execution_id: packet.execution_id,
                iteration: packet.iteration,
                output_text: packet.output_text,
                output_truncated: packet.output_truncated,
                observations,
                observed_tool_calls: packet.observed_tool_calls,
                observations_truncated: packet.observations_truncated,
                task_state: packet.task_state.map(|state| TaskState {
                    host_scope: state.host_scope,
                    revision: state.revision,
                    generation: state.generation,
                    payload_json: state.payload_json,
                }),
            })
        }
    };
}

unpacked_from!(unpacked, packed);
unpacked_from!(unpacked_for_progress, packed_progress);

/// The host's `artifacts` import.
struct HostArtifacts;

impl Artifacts for HostArtifacts {
    fn read(&self, id: &str) -> Result<Artifact, ArtifactError> {
        wit_artifacts::read(id)
            .map(|artifact| Artifact {
                id: artifact.id,
                revision: artifact.revision,
                size: artifact.size,
                bytes: artifact.bytes,
            })
            .map_err(ArtifactError::from)
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, ArtifactError> {
        wit_artifacts::list(prefix).map_err(ArtifactError::from)
    }
}

impl From<wit_artifacts::ArtifactError> for ArtifactError {
    fn from(error: wit_artifacts::ArtifactError) -> Self {
        match error {
            wit_artifacts::ArtifactError::NotFound => Self::NotFound,
            wit_artifacts::ArtifactError::Denied => Self::Denied,
            wit_artifacts::ArtifactError::TooLarge(size) => Self::TooLarge(size),
            wit_artifacts::ArtifactError::LimitReached => Self::LimitReached,
        }
    }
}

impl From<WitPacket> for Packet<'static> {
    fn from(packet: WitPacket) -> Self {
        Self {
            execution_id: packet.execution_id,
            iteration: packet.iteration,
            output_text: packet.output_text,
            output_truncated: packet.output_truncated,
            observations: packet.observations.into_iter().map(Into::into).collect(),
            observed_tool_calls: packet.observed_tool_calls,
            observations_truncated: packet.observations_truncated,
            task_state: packet.task_state.map(|state| TaskState {
                host_scope: state.host_scope,
                revision: state.revision,
                generation: state.generation,
                payload_json: state.payload_json,
            }),
        }
    }
}

impl From<wit::Observation> for Observation<'static> {
    fn from(observation: wit::Observation) -> Self {
        Self {
            tool_name: observation.tool_name.into(),
            call_id: observation.call_id.into(),
            effect: match observation.effect {
                wit::Effect::Read => Effect::Read,
                wit::Effect::Write => Effect::Write,
                wit::Effect::Unknown => Effect::Unknown,
            },
            outcome: observation.outcome.map(Into::into),
        }
    }
}

impl From<wit::Outcome> for Outcome<'static> {
    fn from(outcome: wit::Outcome) -> Self {
        Self {
            status: match outcome.status {
                wit::OutcomeStatus::Succeeded => OutcomeStatus::Succeeded,
                wit::OutcomeStatus::Failed => OutcomeStatus::Failed,
                wit::OutcomeStatus::NotStarted => OutcomeStatus::NotStarted,
                wit::OutcomeStatus::Unknown => OutcomeStatus::Unknown,
            },
            failure: outcome.failure.map(|kind| match kind {
                wit::FailureKind::Permission => FailureKind::Permission,
                wit::FailureKind::Arguments => FailureKind::Arguments,
                wit::FailureKind::Execution => FailureKind::Execution,
                wit::FailureKind::Timeout => FailureKind::Timeout,
                wit::FailureKind::Cancelled => FailureKind::Cancelled,
            }),
            executed: outcome.executed,
            result_fingerprint: outcome.result_fingerprint.map(Into::into),
        }
    }
}

impl From<Verdict> for WitVerdict {
    fn from(verdict: Verdict) -> Self {
        Self {
            complete: verdict.complete,
            reason: verdict.reason,
            feedback: verdict.feedback,
        }
    }
}
