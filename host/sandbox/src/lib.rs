//! Runs verdict verifier components in per-tenant wasmtime sandboxes.
//!
//! A [`VerifierHost`] owns one engine with fuel and epoch interruption, an
//! epoch ticker and an optional on-disk compile cache. [`VerifierHost::load_file`]
//! checks a component (its [`LoadLimits`] before compiling, deny-by-default
//! imports, verifier exports) and prepares it once as a [`LoadedVerifier`];
//! [`LoadedVerifier::check`] and [`LoadedVerifier::progress_key`] (or their
//! `_async` forms) run it for a [`Tenant`] in a fresh store with that
//! tenant's [`Limits`], within a [`verdict_policy::CheckContext`] (deadline
//! and cancellation), and return the result with its [`CallMetrics`] in a
//! [`CallReport`]. Every call ends by its deadline whatever the guest does
//! (computing, sleeping, waiting in a host import); the guest's clocks are
//! virtual (resolution [`CLOCK_RESOLUTION`]). Failures are typed
//! ([`CheckError`]). [`WasmChecker`] puts a loaded verifier in the loop's
//! checker roles.
//!
//! Every public item has one path: the crate root.
//!
//! The contract is the `verdict:verifier` WIT package, one frozen folder per
//! released version (`wit/verdict-verifier@0.1.0/`) with its own host
//! bindings; a component's version is read from the interfaces it exports
//! and it is prepared and called through that version's bindings. It may
//! import only [`ALLOWED_IMPORTS`], every one of them linked.

mod abi;
mod artifacts;
mod bindings;
mod cache;
mod census;
mod checker;
mod clock;
mod component;
mod convert;
mod deny;
mod error;
mod exec;
mod fsutil;
mod host;
mod imports;
mod inspect;
mod limiter;
mod limits;
mod linker;
mod shared;
mod state;
mod stderr;
mod tenant;
mod ticker;
mod timer;
mod verifier;

pub use artifacts::{
    ArtifactData, ArtifactError, ArtifactStore, DirStore, MAX_ARTIFACT_ID_BYTES, MemoryStore,
    validate_artifact_id,
};
pub use census::Footprint;
pub use checker::{CheckerTotals, WasmChecker};
pub use clock::CLOCK_RESOLUTION;
pub use component::{Role, WasmKind};
pub use error::{CheckError, LoadError, TrapKind};
pub use host::{CompilerChoice, HostConfig, LoadSource, VerifierHost, read_component};
pub use imports::ALLOWED_IMPORTS;
pub use inspect::Inspection;
pub use limits::{Limits, LoadLimits};
pub use tenant::Tenant;
pub use verifier::{CallMetrics, CallReport, LoadedVerifier};
