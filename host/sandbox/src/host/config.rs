//! How a verifier host is set up: [`HostConfig`] and the compiler choice.

use crate::limits::LoadLimits;
use crate::load::compile_child::CompileIn;
use std::path::PathBuf;
use std::time::Duration;

/// Which compiler a host uses for the components it loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CompilerChoice {
    /// Cranelift up to [`LoadLimits::max_cranelift_code_bytes`] of code,
    /// Winch above (see the module docs). The default.
    #[default]
    Auto,
    /// Always Cranelift (optimizing; slow to compile a large component).
    Cranelift,
    /// Always Winch (baseline; fast to compile, slower code).
    Winch,
}

/// How a host is set up.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// Where compiled components are cached (`None`: compile every load).
    pub cache_dir: Option<PathBuf>,
    /// Epoch tick period: how often a running guest is interrupted to check
    /// its deadline and cancellation (guest sleeps and a waiting caller's
    /// deadline end at their instant, between ticks). Default 1 ms.
    pub epoch_tick: Duration,
    /// A running guest yields to its call's guard every this many fuel
    /// units, which then checks the deadline and cancellation on the
    /// calling thread (independently of the ticker) and makes the fuel
    /// count exact to within this many units when a call is stopped.
    /// Default 1,000,000 (well under a millisecond of a tight loop).
    pub fuel_yield_interval: u64,
    /// Use wasmtime's pooling allocator (faster fresh instances; reserves
    /// virtual memory up front). Default true.
    pub pooling: bool,
    /// Instances the pool holds at once (concurrent checks). Default 64.
    pub pool_instances: u32,
    /// Largest linear memory a pooled slot allows; per-tenant caps apply
    /// below it. Default 256 MiB.
    pub pool_max_memory_bytes: u64,
    /// Bytes of each pooled linear memory kept resident when its slot is
    /// handed back: the pages a call dirtied below this are reset in place
    /// (copied back from the memory's image, or zeroed) and the next call
    /// finds them mapped; those above are returned to the kernel and fault
    /// in again. With Linux's `PAGEMAP_SCAN` (6.7+) a reset costs only the
    /// pages a call touched; elsewhere the whole amount is reset. Default
    /// 256 KiB, ample for Rust verifiers. 16 MiB suits a host running
    /// JavaScript verifiers (page faults per check 84 → 49, check time −20%
    /// at p50 and −30% in CPU in one alternated run), at up to that much
    /// memory kept resident per pool slot such a check used. Python's ~167
    /// faults per check stay whatever this is: its dirty pages are scattered
    /// over more than the 32 regions wasmtime's `PAGEMAP_SCAN` reset handles,
    /// and everything past the 32nd is returned to the kernel.
    pub pool_keep_resident_bytes: u64,
    /// What a component may be to be loaded at all.
    pub load: LoadLimits,
    /// The compiler tier of each component. Default [`CompilerChoice::Auto`].
    pub compiler: CompilerChoice,
    /// Map compile-cache entries instead of reading them (a cached load of a
    /// 12–18 MB component in 1–5 ms instead of 75–230). An entry is mapped
    /// only once it was read back from disk and found intact, and only while
    /// its file is that one (same inode, size and times): a replaced or
    /// rewritten entry is read and checked again. What remains: a process
    /// dies of `SIGBUS` if someone who can write the private cache directory
    /// truncates an entry in place while it is loaded (this host only ever
    /// writes by rename), and damage that bypasses the file system (media,
    /// raw device writes) after that check goes unnoticed. Set false where
    /// the cache directory is shared with writers you do not trust to that
    /// degree. Default true.
    pub map_cache_entries: bool,
    /// Call a verifier's packed entry points (`verdict:packed@0.1.x`, which
    /// every verifier built with the guest SDK exports beside the standard
    /// ones) when it has them: the same check, with the packet's
    /// observations passed in a few large pieces instead of one guest
    /// allocation per string, which the guest SDK then borrows (a full
    /// packet's fresh check 43 → 27 µs).
    /// False calls the standard exports only, e.g. to compare the two.
    /// Either way a packed export with the wrong type is refused at load.
    /// Default true.
    pub packed_packets: bool,
    /// While a blocking check's caller sleeps waiting for a guest that moved
    /// to a worker, it asks the kernel for its shortest scheduler slice
    /// (0.1 ms; Linux 6.12+) and the smallest timer slack, gets its own back
    /// when the check returns, and wakes every millisecond to poll again
    /// instead of sleeping to the deadline in one go. None of it needs a
    /// privilege or changes the thread's share of the CPU; it lets the
    /// kernel run the caller at its deadline instead of a tick (4 ms) later
    /// when every core is busy: with the CPU 2x oversubscribed, the p99
    /// past a 10 ms deadline was 0.05–1.9 ms in eight runs (1 of 200 calls
    /// past 2 ms at most), against 0.3–3.7 ms with the slice alone and
    /// 2.1–5.3 ms with neither. The check-ins cost the waiting thread about
    /// 1% of a core (a 300 ms wait: 2.9–4.0 ms of CPU time, against
    /// 0.5–0.6 ms without). False leaves the caller's thread as it is and
    /// lets it sleep to the deadline. Default true.
    pub prompt_wakeups: bool,
    /// With a cache directory, bytes of the components a host loaded that
    /// it keeps copies of, at most: `load_bytes` of the same bytes again
    /// finds their content key by comparing them (126 KB: 7 µs) instead of
    /// hashing them with BLAKE3 (40 µs). Components larger than a quarter of
    /// this are not copied. Default 16 MiB; 0 keeps none.
    pub content_memo_bytes: u64,
    /// Where components are compiled: in this process (the default), or in
    /// a child process bounded in memory and time, whose output is
    /// deserialized here (and cached). A compile that overruns a bound is
    /// refused with [`LoadError::CompileBound`] naming it.
    pub compile_in: CompileIn,
    /// Under [`CompilerChoice::Auto`], a component loaded on Winch (too
    /// large for Cranelift at load) is compiled again with Cranelift in the
    /// background, one component at a time per host, within
    /// [`HostConfig::background_compile`]; checks starting once that code
    /// is ready run it (a Python or JavaScript check 2–3x faster), and the
    /// compile cache keeps it by digest, so the next load of the component
    /// (this process or another) gets the Cranelift code at once. A compile
    /// that fails leaves the verifier on Winch
    /// ([`TierStatus::OptimizeFailed`](crate::TierStatus::OptimizeFailed),
    /// and a warning in the log), never failing a check. Default true.
    pub optimize_in_background: bool,
    /// The bounds of a background Cranelift compile.
    pub background_compile: BackgroundCompile,
}

/// The bounds of a background Cranelift compile
/// ([`HostConfig::optimize_in_background`]). The compile runs where the
/// host compiles ([`HostConfig::compile_in`]):
///
/// - in a compile child, under that child's memory limit
///   ([`ChildCompiler::memory_bytes`](crate::ChildCompiler::memory_bytes)),
///   with [`BackgroundCompile::timeout`] and [`BackgroundCompile::threads`]
///   in place of the child's own, and the census bound
///   [`BackgroundCompile::max_compile_cost`]: the host process only maps
///   the result;
/// - in the host process, under the same census bound as a load
///   ([`LoadLimits::max_compile_cost`]) and nothing else, so a component
///   larger than that is not compiled in the background
///   (the Python and JavaScript samples are not: use a compile child).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackgroundCompile {
    /// Largest estimated Cranelift compile cost (the census's units, see
    /// [`LoadLimits`]) compiled in the background in a compile child.
    /// Default 60,000,000 (the componentize-py and componentize-js samples
    /// cost under 30 M).
    pub max_compile_cost: u64,
    /// Wall-clock deadline of a background compile in a child. Default
    /// 120 s (the samples take 15–20 s with two threads in a release build).
    pub timeout: Duration,
    /// Compile threads of a background compile in a child (`None`: one
    /// per core). Default 1: it competes with checks for the cores.
    pub threads: Option<usize>,
}

impl Default for BackgroundCompile {
    fn default() -> Self {
        Self {
            max_compile_cost: 60_000_000,
            timeout: Duration::from_secs(120),
            threads: Some(1),
        }
    }
}

impl Default for HostConfig {
    fn default() -> Self {
        Self {
            cache_dir: None,
            epoch_tick: Duration::from_millis(1),
            fuel_yield_interval: 1_000_000,
            pooling: true,
            pool_instances: 64,
            pool_max_memory_bytes: 256 * 1024 * 1024,
            pool_keep_resident_bytes: 256 * 1024,
            load: LoadLimits::default(),
            compiler: CompilerChoice::Auto,
            map_cache_entries: true,
            packed_packets: true,
            prompt_wakeups: true,
            content_memo_bytes: 16 * 1024 * 1024,
            compile_in: CompileIn::Process,
            optimize_in_background: true,
            background_compile: BackgroundCompile::default(),
        }
    }
}
