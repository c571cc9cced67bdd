// The README's examples use the facade: `tests/facade` compiles them.
#![cfg_attr(not(doctest), doc = include_str!("../README.md"))]
#![deny(missing_docs)]

// The map. A check goes through these stages, one folder each:
// - `host/`: the entry point, `VerifierHost` and its config; it loads and
//   returns verifiers, and describes files (`inspect`).
// - `load/`: from bytes to a prepared component — kind and roles, the
//   census against the load limits, allowed imports, the compiler tiers,
//   the compile child, the on-disk cache, the digest index, the content
//   memo, and `Shared` (engine, linker, timers per tier).
// - `verifier/`: a loaded verifier and one call into it (fresh store,
//   instantiate, warm up, lower, run, lift, report), its ready instances
//   (`ready.rs`) and the optional warm-up export (`warm.rs`); `checker.rs`
//   adapts it to the policy's checker roles for a tenant (`tenant.rs`).
// - `call/`: driving a call to its deadline whatever the guest does —
//   guard, handoff to workers, ticker, timers, wake-ups, signals, the
//   float environment, and the usage a running call publishes.
// - `store/`: what a call's store holds — state, limiter, deny-all WASI,
//   virtual clocks, stderr tail, and the tape of a recorded or replayed
//   call (`verifier/taped.rs` is its API).
// - `abi/`: both ends of the canonical ABI for every WIT version — the
//   packet argument, lowering helpers, reading answers and strings from
//   guest memory, and `shim.rs`, the one door to wasmtime's `__internal`.
// - `bindings/`: everything that knows a WIT version's types, one folder
//   per version (`v0_1/`, `packed_v0_1/`), each implementing `Version`;
//   `ApiVersion::with` picks a component's own.
// - `artifacts/`: the tenant's read-only artifact stores.
// - `error.rs` (every error type), `limits.rs`, `fsutil.rs` (reading files
//   that must not block).
// Dependencies point one way: host → load/verifier → bindings → abi →
// store → call; `scripts/sandbox-modules.sh` prints the graph and fails on
// a loop.
mod abi;
mod artifacts;
mod bindings;
mod call;
mod checker;
mod error;
mod fsutil;
mod host;
mod limits;
mod load;
mod store;
mod tenant;
mod verifier;

pub use artifacts::{
    ArtifactData, ArtifactError, ArtifactStore, DirStore, MAX_ARTIFACT_ID_BYTES, MemoryStore,
    validate_artifact_id,
};
pub use call::background::run_waiting_jobs;
pub use checker::{CheckerTotals, WasmChecker};
pub use error::{CheckError, LoadError, TrapKind};
pub use host::{BackgroundCompile, CompilerChoice, HostConfig, Inspection, VerifierHost};
pub use limits::{Limits, LimitsError, LoadLimits};
pub use load::census::Footprint;
pub use load::compile::{LoadSource, read_component};
pub use load::compile_child::{ChildCompiler, CompileIn, compile_child_main};
pub use load::component::{Role, WasmKind};
pub use load::imports::ALLOWED_IMPORTS;
pub use load::tier::Tier;
pub use store::clock::CLOCK_RESOLUTION;
pub use store::tape::{
    ArtifactOp, CallTrace, ClockRun, MAX_CLOCK_RUNS, MAX_TIMER_RUNS, SEED_BYTES, TapeMismatch,
    TimerOp, draw_seed,
};
pub use tenant::{DEFAULT_READY_INSTANCES, MAX_READY_INSTANCES, Tenant};
pub use verifier::LoadedVerifier;
pub use verifier::call::{CallMetrics, CallReport, CallStages};
pub use verifier::optimized::TierStatus;
pub use verifier::taped::{Tape, TapedReport};
