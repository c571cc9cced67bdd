#![doc = include_str!("../README.md")]
// The README shows a whole verifier crate, tests included; the doctest only
// compiles it (the same logic is tested in sample-verifiers/artifact-ready).
#![allow(clippy::test_attr_in_doctest)]

mod artifacts;
mod memory;
// Used by the component glue (wasm only); tested natively.
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
mod lean;
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
mod packed;
mod packet;
mod verdict;
mod verifier;
#[cfg(target_arch = "wasm32")]
mod wasm;

pub use artifacts::{Artifact, ArtifactError, Artifacts, JsonReadError};
pub use memory::MemoryArtifacts;
pub use packet::{
    Effect, FailureKind, MAX_OBSERVATIONS, MAX_OUTPUT_CHARS, MAX_PACKET_BYTES, Observation,
    Outcome, OutcomeStatus, Packet, TaskState,
};
pub use serde_json;
pub use verdict::{
    MAX_FEEDBACK_CHARS, MAX_PROGRESS_KEY_CHARS, MAX_REASON_CHARS, MAX_VERDICT_BYTES, Verdict,
};
pub use verifier::{ProgressKey, Verifier};

/// Macro support; not part of the public API.
#[doc(hidden)]
pub mod __private {
    #[cfg(target_arch = "wasm32")]
    pub use crate::wasm::*;

    /// Compile-time check that a type can be exported as a completion checker.
    pub fn assert_completion<T: crate::Verifier + Default>() {}

    /// Compile-time check that a type can be exported as a progress checker.
    pub fn assert_progress<T: crate::ProgressKey + Default>() {}
}

/// Exports a verifier's roles from this crate's component.
///
/// ```text
/// verdict_guest::export!(completion: MyChecker);
/// verdict_guest::export!(progress: MyProgress);
/// verdict_guest::export!(completion: MyChecker, progress: MyProgress);
/// ```
///
/// Each type must implement `Default` and the role's trait ([`Verifier`],
/// [`ProgressKey`]); a fresh value is made per call. Call it once per crate.
/// Each role is exported twice: as `verdict:verifier/<role>` and as its
/// packed twin `verdict:packed/<role>` (the same packet, passed in fewer
/// pieces; the verdict host prefers it), both calling your type.
/// On non-wasm targets it only checks those bounds.
#[macro_export]
macro_rules! export {
    (completion: $checker:ty $(,)?) => {
        $crate::__export_completion!($checker);
    };
    (progress: $progress:ty $(,)?) => {
        $crate::__export_progress!($progress);
    };
    (completion: $checker:ty, progress: $progress:ty $(,)?) => {
        $crate::__export_completion!($checker);
        $crate::__export_progress!($progress);
    };
    (progress: $progress:ty, completion: $checker:ty $(,)?) => {
        $crate::__export_completion!($checker);
        $crate::__export_progress!($progress);
    };
}

/// Wires a [`Verifier`] to the `completion` export.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_completion {
    ($checker:ty) => {
        const _: fn() = $crate::__private::assert_completion::<$checker>;

        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct VerdictCompletionExport;

            impl $crate::__private::CompletionGuest for VerdictCompletionExport {
                fn check(packet: $crate::__private::WitPacket) -> $crate::__private::WitVerdict {
                    $crate::__private::run_check::<$checker>(packet)
                }
            }

            $crate::__private::completion_bindings::export_completion!(
                VerdictCompletionExport with_types_in $crate::__private::completion_bindings
            );

            impl $crate::__private::PackedCompletionGuest for VerdictCompletionExport {
                fn check(
                    packet: $crate::__private::PackedPacket,
                ) -> $crate::__private::PackedVerdict {
                    $crate::__private::run_check_packed::<$checker>(packet)
                }
            }

            $crate::__private::packed_completion_bindings::export_packed_completion!(
                VerdictCompletionExport with_types_in $crate::__private::packed_completion_bindings
            );
        };
    };
}

/// Wires a [`ProgressKey`] to the `progress` export.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_progress {
    ($progress:ty) => {
        const _: fn() = $crate::__private::assert_progress::<$progress>;

        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct VerdictProgressExport;

            impl $crate::__private::ProgressGuest for VerdictProgressExport {
                fn progress_key(packet: $crate::__private::WitPacket) -> ::std::string::String {
                    $crate::__private::run_progress_key::<$progress>(packet)
                }
            }

            $crate::__private::progress_bindings::export_progress!(
                VerdictProgressExport with_types_in $crate::__private::progress_bindings
            );

            impl $crate::__private::PackedProgressGuest for VerdictProgressExport {
                fn progress_key(
                    packet: $crate::__private::PackedProgressPacket,
                ) -> ::std::string::String {
                    $crate::__private::run_progress_key_packed::<$progress>(packet)
                }
            }

            $crate::__private::packed_progress_bindings::export_packed_progress!(
                VerdictProgressExport with_types_in $crate::__private::packed_progress_bindings
            );
        };
    };
}
