//! Runs verdict verifier components in per-tenant wasmtime sandboxes.
//!
//! A [`VerifierHost`] owns one engine with fuel and epoch interruption, an
//! epoch ticker and an optional on-disk compile cache. [`VerifierHost::load_file`]
//! checks a component (its [`LoadLimits`] before compiling, deny-by-default
//! imports, verifier exports) and prepares it once; [`Verifier::check`] and
//! [`Verifier::progress_key`] (or their `_async` forms) run it for a
//! [`Tenant`] in a fresh store with that tenant's [`Limits`], and return the
//! result with its [`CallMetrics`]. Every call ends by its deadline whatever
//! the guest does (computing, sleeping, waiting in a host import); the
//! guest's clocks are virtual ([`clock`]). Failures are typed ([`CheckError`]).
//!
//! The contract is the `verdict:verifier` WIT package, one frozen folder per
//! released version (`wit/verdict-verifier@0.1.0/`) with its own host
//! bindings; a component's version is read from the interfaces it exports
//! and it is prepared and called through that version's bindings. It may
//! import only [`ALLOWED_IMPORTS`], every one of them linked.

mod abi;
pub mod artifacts;
mod bindings;
mod cache;
mod cancel;
mod census;
mod checker;
pub mod clock;
mod convert;
mod error;
mod exec;
mod fsutil;
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
mod timer;
mod verifier;

pub use artifacts::{ArtifactData, ArtifactError, ArtifactStore, DirStore, MemoryStore};
pub use cancel::CancelHandle;
pub use checker::{CheckerTotals, WasmChecker};
pub use error::{CheckError, LoadError, TrapKind};
pub use host::{HostConfig, LoadSource, VerifierHost, read_component};
pub use imports::ALLOWED_IMPORTS;
pub use inspect::{Inspection, Role, WasmKind};
pub use limits::{Limits, LoadLimits};
pub use tenant::Tenant;
pub use verifier::{CallMetrics, CallOutcome, MAX_PROGRESS_KEY_CHARS, Verifier};
