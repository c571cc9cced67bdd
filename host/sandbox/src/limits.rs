//! Per-call limits for a verifier, with documented defaults.

use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};
use verdict_policy::CheckContext;

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
    /// Core module instances a component may create (also bounds its
    /// tables, four per instance). Default 64: a componentize-py build
    /// needs 14 (38 with `--stub-wasi`), a componentize-js build 4, a Rust
    /// verifier 3. A component that needs more is refused at the call
    /// ([`LoadError::OverLimit`](crate::LoadError::OverLimit) naming
    /// `instances`, reported as `load_rejected`).
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
            instances: 64,
        }
    }
}

impl Limits {
    /// The wall-clock deadline as a [`Duration`].
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    /// Checks every limit against its range: each is at least 1 and at
    /// most its `MAX_*` constant ([`Limits::MAX_TIMEOUT_MS`], ...; fuel has
    /// no upper bound). The defaults pass. Checked in field order; the
    /// first limit out of range is the error.
    pub fn validate(&self) -> Result<(), LimitsError> {
        for (field, value, max) in [
            ("fuel", self.fuel, u64::MAX),
            ("timeout_ms", self.timeout_ms, Self::MAX_TIMEOUT_MS),
            ("memory_bytes", self.memory_bytes, Self::MAX_MEMORY_BYTES),
            (
                "instances",
                self.instances.into(),
                Self::MAX_INSTANCES.into(),
            ),
            (
                "table_elements",
                self.table_elements.into(),
                Self::MAX_TABLE_ELEMENTS.into(),
            ),
            (
                "artifact_reads_per_call",
                self.artifact_reads_per_call.into(),
                Self::MAX_ARTIFACT_OPS.into(),
            ),
            (
                "artifact_bytes_per_read",
                self.artifact_bytes_per_read,
                Self::MAX_ARTIFACT_BYTES,
            ),
            (
                "list_max_entries",
                self.list_max_entries.into(),
                Self::MAX_ARTIFACT_OPS.into(),
            ),
        ] {
            if !(1..=max).contains(&value) {
                return Err(LimitsError { field, value, max });
            }
        }
        Ok(())
    }

    /// Largest `timeout_ms` (a minute).
    pub const MAX_TIMEOUT_MS: u64 = 60_000;
    /// Largest `memory_bytes` (4 GiB, a 32-bit memory's size).
    pub const MAX_MEMORY_BYTES: u64 = 4_096 * 1024 * 1024;
    /// Largest `instances`.
    pub const MAX_INSTANCES: u32 = 1_024;
    /// Largest `table_elements` (the host's largest table).
    pub const MAX_TABLE_ELEMENTS: u32 = 100_000;
    /// Largest `artifact_reads_per_call` and `list_max_entries`.
    pub const MAX_ARTIFACT_OPS: u32 = 100_000;
    /// Largest `artifact_bytes_per_read` (64 MiB).
    pub const MAX_ARTIFACT_BYTES: u64 = 64 * 1024 * 1024;
}

/// A [`Limits`] field outside its range ([`Limits::validate`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} is {value}, outside 1..={max}")]
pub struct LimitsError {
    /// The field (`fuel`, `timeout_ms`, `memory_bytes`, ...).
    pub field: &'static str,
    /// The value given.
    pub value: u64,
    /// The largest value accepted.
    pub max: u64,
}

/// Bounds on what a host loads, checked on the bytes before anything is
/// compiled (so a hostile component costs a parse, not a compile). A
/// component over one is refused with [`LoadError::OverLimit`] naming it.
///
/// Compile time is not proportional to size: fuel and epoch metering make
/// each loop, call and branch expensive, a function's branches cost more
/// the more of them it has, and some instructions expand into much more
/// code than their bytes. So besides plain counts the census estimates the
/// compile cost of every function, in units of about a microsecond of
/// Cranelift compiling on the reference machine (2 cores, release build):
///
/// `cost = 200 + body bytes + 100 × loops + 25 × calls + 10 × other
/// branches + branches² / 50 + 2 × br_table targets + locals / 10 +
/// 10 × conversions`
///
/// where branches are `block`, `loop`, `if`, `else`, `br`, `br_if` and
/// `br_table`, calls include the memory and table instructions compiled
/// as calls into the runtime (`memory.grow`, `memory.copy`, ...), locals
/// are the declared ones and conversions the float-to-integer ones
/// (`i64.trunc_f64_s`, ...). Winch, about ten times faster on ordinary code
/// (its limit is ten times higher), is not faster at what it expands: it
/// zeroes every declared local with a store of its own and inlines every
/// conversion's range checks, so for a component compiled with Winch
/// locals count `2 ×` and conversions `40 ×` (measured: 1,000 functions of
/// 50,000 locals took 3.1 s and 1 GiB, 16 MiB of conversions 5.6 s and
/// 1.1 GiB). Locals and calls are also bounded per function, and locals
/// over the component. The defaults keep the worst admitted input within
/// about 5 s and 256 MiB of host memory (measured by `cargo bench -p
/// verdict-tests --bench load_bounds`: 3.2 s, 216 MiB), with room for the
/// samples (the Python and JavaScript ones take 332–357 MiB to compile in
/// process, 19 MiB of the host's in a compile child):
///
/// | sample | functions | locals (most in one) | calls in one function | cost |
/// |---|---|---|---|---|
/// | Rust (`artifact-ready`, 116 KB) | 284 | 803 (25) | 78 | 0.23 M (Cranelift) |
/// | componentize-py (18.3 MB) | 13,355 | 47,738 (271) | 3,112 | 19.1 M (Winch) |
/// | componentize-js (12.0 MB) | 12,695 | 51,895 (118) | 2,064 | 26.9 M (Winch) |
///
/// A Rust verifier with debug info (3.6 MB) costs about 0.4 M.
///
/// An estimate misses some shape sooner or later: a host can also compile
/// in a child process bounded in memory and time (see
/// [`HostConfig::compile_in`](crate::HostConfig::compile_in)).
///
/// [`LoadError::OverLimit`]: crate::LoadError::OverLimit
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoadLimits {
    /// Largest `.wasm` file, in bytes (custom sections such as debug info
    /// included). Default 24 MiB (a componentize-py verifier is 18.3 MB).
    pub max_component_bytes: u64,
    /// Most functions defined over all core modules (each is compiled).
    /// Default 20,000 (a componentize-js verifier has 12,613).
    pub max_functions: u32,
    /// Most code (function body bytes, over all core modules). Default
    /// 16 MiB (a componentize-js verifier has 9.2 MB, componentize-py 6.5).
    pub max_code_bytes: u64,
    /// Largest single function body, in bytes. Default 512 KiB (CPython's
    /// interpreter loop in a componentize-py verifier is 417 KiB).
    pub max_function_bytes: u32,
    /// Largest estimated compile cost (see above), over all functions, of
    /// a component compiled with Cranelift; checked before compiling (a
    /// component already in the compile cache is not compiled again).
    /// Default 3,000,000.
    pub max_compile_cost: u64,
    /// Most code (function body bytes, over all core modules) a component
    /// may have to be compiled with Cranelift; one with more is compiled
    /// with Winch (see [`CompilerChoice`](crate::CompilerChoice)).
    /// Default 2 MiB (Rust verifiers have 0.1–1 MB).
    pub max_cranelift_code_bytes: u64,
    /// [`LoadLimits::max_compile_cost`] for a component compiled with
    /// Winch, in the same units (Winch compiles about ten times faster).
    /// Default 30,000,000 (the componentize-js sample costs 26.9 M, the
    /// componentize-py one 19.1 M).
    pub max_winch_compile_cost: u64,
    /// Most locals one function declares (each is zeroed at entry: Winch
    /// stores every one, so its memory grows with them; wasmparser allows
    /// 50,000). Default 10,000 (the samples declare at most 271).
    pub max_function_locals: u32,
    /// Most locals declared over all functions (14,000 functions of 50,000
    /// locals, 114 KB, took Cranelift 60 s). Default 1,000,000 (the samples
    /// declare at most 52,000): about 0.1 s and 20 MiB with either compiler.
    pub max_locals: u64,
    /// Most calls (and instructions compiled as calls) in one function:
    /// Cranelift holds a function's code and metadata in memory at once
    /// (one of 110,900 calls took 286 MiB). Default 20,000 (the samples
    /// have at most 3,112).
    pub max_function_calls: u32,
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
            max_component_bytes: 24 * 1024 * 1024,
            max_functions: 20_000,
            max_code_bytes: 16 * 1024 * 1024,
            max_function_bytes: 512 * 1024,
            max_compile_cost: 3_000_000,
            max_cranelift_code_bytes: 2 * 1024 * 1024,
            max_winch_compile_cost: 30_000_000,
            max_function_locals: 10_000,
            max_locals: 1_000_000,
            max_function_calls: 20_000,
            max_memories: 4,
            max_tables: 4,
            max_table_elements: 100_000,
        }
    }
}

impl Limits {
    /// The call's deadline: the earlier of the tenant's timeout from `started`
    /// and the context's deadline; with the limit that applied, in
    /// milliseconds from `started`.
    pub(crate) fn deadline(&self, started: Instant, ctx: &CheckContext) -> (Instant, u64) {
        // A tenant deadline too far to represent is no deadline (fuel still
        // ends the call).
        let tenant = started
            .checked_add(self.timeout())
            .or_else(|| started.checked_add(Duration::from_secs(365 * 24 * 3600)))
            .unwrap_or(started);
        match ctx.deadline() {
            Some(outer) if outer < tenant => {
                let ms = outer.saturating_duration_since(started).as_millis();
                (outer, u64::try_from(ms).unwrap_or(u64::MAX))
            }
            _ => (tenant, self.timeout_ms),
        }
    }
}
