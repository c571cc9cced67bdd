//! The cross-crate integration tests, as one test binary (linking one binary
//! per file dominated the build): `cargo test -p verdict-tests --test
//! integration`, one file's tests with `-- FILE::`. Each file is a module;
//! guests and fixtures come from `verdict-test-support`. One file is a
//! binary of its own: `sandbox_answer_copy.rs` counts the heap with a
//! global allocator, so no other test may run beside it (`cargo test -p
//! verdict-tests --test sandbox_answer_copy`).

mod contract;
mod guests_built;
mod guests_lean;
mod sandbox_cache_index;
mod sandbox_compile_child;
mod sandbox_hostile;
mod sandbox_hostile_abi;
mod sandbox_hostile_calls;
#[cfg(target_arch = "x86_64")]
mod sandbox_hostile_fpenv;
mod sandbox_hostile_packed;
mod sandbox_hostile_signals;
mod sandbox_hostile_start;
mod sandbox_load_shapes;
mod sandbox_ready;
mod sandbox_tier_switch;
mod sandbox_tiers;
mod sandbox_verifiers;
mod sandbox_warm;
mod sandbox_wasi_deny;
