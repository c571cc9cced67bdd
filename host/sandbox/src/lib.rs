// The README's examples use the facade: `tests/facade` compiles them.
#![cfg_attr(not(doctest), doc = include_str!("../README.md"))]
#![deny(missing_docs)]

mod abi;
mod artifacts;
mod bindings;
mod cache;
mod call;
mod census;
mod checker;
mod clock;
mod compile_child;
mod component;
mod content;
mod convert;
mod deny;
mod error;
mod exec;
mod fpenv;
mod fsutil;
mod handoff;
mod host;
mod imports;
mod index;
mod inspect;
mod limiter;
mod limits;
mod linker;
mod lower;
mod memo;
mod progress;
mod shared;
mod signals;
mod state;
mod stderr;
mod tenant;
mod ticker;
mod tier;
mod timer;
mod verifier;
mod wakeup;
mod workers;

pub use artifacts::{
    ArtifactData, ArtifactError, ArtifactStore, DirStore, MAX_ARTIFACT_ID_BYTES, MemoryStore,
    validate_artifact_id,
};
pub use call::{CallMetrics, CallReport, CallStages};
pub use census::Footprint;
pub use checker::{CheckerTotals, WasmChecker};
pub use clock::CLOCK_RESOLUTION;
pub use compile_child::{ChildCompiler, CompileIn, compile_child_main};
pub use component::{Role, WasmKind};
pub use error::{CheckError, LoadError, TrapKind};
pub use host::{CompilerChoice, HostConfig, LoadSource, VerifierHost, read_component};
pub use imports::ALLOWED_IMPORTS;
pub use inspect::Inspection;
pub use limits::{Limits, LimitsError, LoadLimits};
pub use tenant::Tenant;
pub use verifier::LoadedVerifier;
