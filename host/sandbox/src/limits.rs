//! Per-call limits for a verifier, with documented defaults.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Resource limits for one checker call. Every limit has a default chosen so
/// that a typical verifier (a few artifact reads, JSON parsing, ~15k fuel per
/// small check) has ample room while a hostile one is stopped quickly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Fuel budget (about one unit per wasm instruction). Default
    /// 1,000,000,000: a small check uses ~10k, a spinning guest burns it in
    /// tens of milliseconds to a second, depending on its loop.
    pub fuel: u64,
    /// Wall-clock deadline in milliseconds, enforced by epoch interruption
    /// (true preemption). Default 1,000 ms.
    pub timeout_ms: u64,
    /// Linear memory cap in bytes, per memory (an instance may have at most
    /// four memories; Rust verifiers have one).
    /// Default 64 MiB.
    pub memory_bytes: u64,
    /// Largest artifact one read may return, in bytes. Default 1 MiB.
    pub artifact_bytes_per_read: u64,
    /// Artifact operations (`read` and `list`) allowed per call. Default 64.
    pub artifact_reads_per_call: u32,
    /// Most ids one `list` returns. Default 1,000.
    pub list_max_entries: u32,
    /// Table elements cap. Default 20,000.
    pub table_elements: u32,
    /// Instances a component may create. Default 32.
    pub instances: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            fuel: 1_000_000_000,
            timeout_ms: 1_000,
            memory_bytes: 64 * 1024 * 1024,
            artifact_bytes_per_read: 1024 * 1024,
            artifact_reads_per_call: 64,
            list_max_entries: 1_000,
            table_elements: 20_000,
            instances: 32,
        }
    }
}

impl Limits {
    /// The wall-clock deadline as a [`Duration`].
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }
}

/// Bounds on what a host loads, checked on the bytes before anything is
/// compiled (so a hostile component costs a parse, not a compile). A
/// component over one is refused with [`LoadError::OverLimit`] naming it.
/// The defaults keep the worst admitted compile within about 5 s and
/// 256 MiB of host memory (measured by `cargo bench -p verdict-tests
/// --bench load_bounds`) while leaving room for Rust verifiers (about
/// 30-300 KB and a few hundred to a few thousand functions).
///
/// [`LoadError::OverLimit`]: crate::LoadError::OverLimit
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoadLimits {
    /// Largest `.wasm` file, in bytes. Default 8 MiB.
    pub max_component_bytes: u64,
    /// Most functions defined across all core modules of a component (each
    /// is compiled). Default 20,000.
    pub max_functions: u32,
    /// Largest single function body, in bytes. Default 512 KiB.
    pub max_function_bytes: u32,
    /// Most linear memories a core module defines, and a call's instances
    /// define in total. Default 4.
    pub max_memories: u32,
    /// Most tables a core module defines. Default 4.
    pub max_tables: u32,
    /// Largest initial table, in elements (also the largest any table can
    /// grow to, whatever a tenant's `table_elements`). Default 100,000.
    pub max_table_elements: u32,
}

impl Default for LoadLimits {
    fn default() -> Self {
        Self {
            max_component_bytes: 8 * 1024 * 1024,
            max_functions: 20_000,
            max_function_bytes: 512 * 1024,
            max_memories: 4,
            max_tables: 4,
            max_table_elements: 100_000,
        }
    }
}
