//! Runs verdict verifier components in per-tenant wasmtime sandboxes.
//!
//! A [`VerifierHost`] owns one engine with fuel and epoch interruption, an
//! epoch ticker and an optional on-disk compile cache. [`VerifierHost::load_file`]
//! checks a component (deny-by-default imports, verifier exports) and prepares
//! it once; [`Verifier::check`] and [`Verifier::progress_key`] run it for a
//! [`Tenant`] in a fresh store with that tenant's [`Limits`], and return the
//! result with its [`CallMetrics`]. Failures are typed ([`CheckError`]).

pub mod artifacts;
mod bindings;
mod cache;
mod cancel;
mod checker;
mod convert;
mod error;
mod host;
mod imports;
pub mod inspect;
mod limiter;
mod limits;
mod linker;
mod state;
mod stderr;
mod tenant;
mod ticker;
mod verifier;

pub use artifacts::{ArtifactData, ArtifactError, ArtifactStore, DirStore, MemoryStore};
pub use cancel::CancelHandle;
pub use checker::{CheckerTotals, WasmChecker};
pub use error::{CheckError, LoadError, TrapKind};
pub use host::{HostConfig, LoadSource, VerifierHost};
pub use inspect::{Inspection, Role, WasmKind};
pub use limits::Limits;
pub use tenant::Tenant;
pub use verifier::{CallMetrics, CallOutcome, MAX_PROGRESS_KEY_CHARS, Verifier};
