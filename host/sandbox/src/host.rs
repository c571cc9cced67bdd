//! The verifier host: an engine per compiler tier (fuel + epoch
//! interruption), each with its epoch ticker, linker and optional compile
//! cache, shared by every verifier it loads.
//!
//! # Compiler tiers
//!
//! Cranelift (optimizing) makes the fastest checks but compiles a 12–18 MB
//! component (the Python and JavaScript toolchains' output) in 15–20 s;
//! Winch (wasmtime's baseline compiler) compiles the same in about 2 s. So
//! by default a component with at most
//! [`LoadLimits::max_cranelift_code_bytes`] of code compiles with Cranelift
//! (every Rust verifier: today's latency), a larger one with Winch (a
//! bounded load). Both tiers meter fuel and stop at epochs the same way
//! (`tests/sandbox_tiers.rs` runs the hostile guests under each).

use crate::cache::CompileCache;
use crate::census::{self, Footprint};
use crate::compile_child::{self, CompileIn};
use crate::component::{self, WasmKind};
use crate::content::ContentKeys;
use crate::error::LoadError;
use crate::fsutil::FileIdentity;
use crate::index::{DigestIndex, IndexKey};
use crate::limits::LoadLimits;
use crate::linker;
use crate::memo::Remembered;
use crate::shared::Shared;
use crate::ticker::Ticker;
use crate::tier::Tier;
use crate::timer::Timers;
use crate::verifier::{LoadedVerifier, WeakVerifier};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Which compiler a host uses for the components it loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
        }
    }
}

/// Loads verifier components and runs them in fresh, limited stores.
#[derive(Clone)]
pub struct VerifierHost {
    /// The Cranelift tier, started with the host.
    shared: Arc<Shared>,
    /// The Winch tier, started with the first component that needs it.
    winch: Arc<Mutex<Option<Arc<Shared>>>>,
    /// Digests of component files already admitted (with a cache directory).
    index: Option<Arc<DigestIndex>>,
    /// The footprints of the components this host admitted, by digest (the
    /// load limits are the host's): the same bytes are not censused twice.
    admitted: Arc<Remembered<String, Footprint>>,
    /// The verifiers this host loaded, by digest, without keeping them
    /// loaded: loading a component while a verifier of it is live shares it.
    live: Arc<Remembered<String, WeakVerifier>>,
    /// Content keys of the bytes this host loaded, with copies of the bytes
    /// (used with the index).
    content: Arc<ContentKeys>,
    config: Arc<HostConfig>,
}

impl std::fmt::Debug for VerifierHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifierHost")
            .field("epoch_tick", &self.shared.epoch_tick)
            .field("cached", &self.shared.cache.is_some())
            .finish()
    }
}

/// How a [`VerifierHost::load_bytes`] call got its compiled code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadSource {
    /// Compiled now.
    Compiled,
    /// Deserialized from the compile cache.
    Cache,
    /// Shared with a verifier of the same component that this host loaded
    /// before and that is still live (a clone of it is held somewhere):
    /// nothing was compiled, deserialized or prepared.
    Live,
}

impl VerifierHost {
    /// Creates a host: the Cranelift engine, its ticker thread, linker and
    /// cache directory (the Winch tier starts when first needed).
    pub fn new(config: HostConfig) -> Result<Self, LoadError> {
        let first = match config.compiler {
            CompilerChoice::Winch => Tier::Winch,
            CompilerChoice::Auto | CompilerChoice::Cranelift => Tier::Cranelift,
        };
        let shared = Arc::new(start_tier(&config, first)?);
        let winch = (first == Tier::Winch).then(|| Arc::clone(&shared));
        let index = match &config.cache_dir {
            Some(dir) => Some(Arc::new(DigestIndex::open(dir, &config.load).map_err(
                |e| LoadError::Io(format!("cannot open the compile cache: {}", e.kind())),
            )?)),
            None => None,
        };
        Ok(Self {
            shared,
            winch: Arc::new(Mutex::new(winch)),
            index,
            admitted: Arc::default(),
            live: Arc::default(),
            content: Arc::new(ContentKeys::new(config.content_memo_bytes)),
            config: Arc::new(config),
        })
    }

    /// The tier a component with `footprint` compiles with.
    fn tier_for(&self, footprint: &Footprint) -> Tier {
        match self.config.compiler {
            CompilerChoice::Cranelift => Tier::Cranelift,
            CompilerChoice::Winch => Tier::Winch,
            CompilerChoice::Auto
                if footprint.code_bytes > self.config.load.max_cranelift_code_bytes =>
            {
                Tier::Winch
            }
            CompilerChoice::Auto => Tier::Cranelift,
        }
    }

    /// The engine, linker, ticker and cache of the tier `footprint` needs.
    pub(crate) fn shared_for(&self, footprint: &Footprint) -> Result<Arc<Shared>, LoadError> {
        match self.tier_for(footprint) {
            Tier::Cranelift if self.config.compiler != CompilerChoice::Winch => {
                Ok(Arc::clone(&self.shared))
            }
            _ => {
                let mut winch = self
                    .winch
                    .lock()
                    .map_err(|_| LoadError::Link("the Winch tier failed to start".into()))?;
                if let Some(shared) = winch.as_ref() {
                    return Ok(Arc::clone(shared));
                }
                let shared = Arc::new(start_tier(&self.config, Tier::Winch)?);
                *winch = Some(Arc::clone(&shared));
                Ok(shared)
            }
        }
    }

    /// Loads a verifier from a `.wasm` file: a regular file no larger than
    /// [`LoadLimits::max_component_bytes`], opened without blocking (a FIFO
    /// or a device is refused, not waited on).
    ///
    /// With a cache directory, a file loaded before and unchanged since
    /// (same device, inode, size, modification and status-change times)
    /// is neither read nor hashed again: its digest and census come from
    /// the cache's index, its code from the compile cache. Other files are
    /// read and loaded as [`VerifierHost::load_bytes`] loads their bytes.
    /// A component this host loaded and still has a live verifier of (any
    /// clone held anywhere) is shared with it, as with `load_bytes`.
    pub fn load_file(&self, path: impl AsRef<Path>) -> Result<LoadedVerifier, LoadError> {
        let path = path.as_ref();
        let identity = self.index.as_ref().and(FileIdentity::of(path));
        if let Some((verifier, ..)) = identity.and_then(|id| self.load_known(&IndexKey::File(id))) {
            return Ok(verifier);
        }
        let bytes = read_component(path, self.shared.load.max_component_bytes)?;
        let (verifier, _, footprint) = self.load_indexed(&bytes)?;
        // Recorded only when the file did not change while it was read.
        if let Some(id) = identity
            && FileIdentity::of(path) == Some(id)
        {
            self.record(&IndexKey::File(id), &verifier, &footprint);
        }
        Ok(verifier)
    }

    /// The verifier (and its footprint) for a component already admitted
    /// under these load limits and recorded under `key`, if its compiled
    /// code is in the cache.
    fn load_known(&self, key: &IndexKey) -> Option<(LoadedVerifier, LoadSource, Footprint)> {
        let (digest, footprint) = self.index.as_ref()?.get(key)?;
        if let Some(verifier) = self.live(&digest) {
            return Some((verifier, LoadSource::Live, footprint));
        }
        let shared = self.shared_for(&footprint).ok()?;
        let component = shared.cache.as_ref()?.load(&shared.engine, &digest)?;
        let verifier = self.prepare(shared, component, digest, footprint).ok()?;
        Some((verifier, LoadSource::Cache, footprint))
    }

    /// The verifier this host loaded with `digest`, if a clone of it is
    /// still live: loading it again shares it.
    fn live(&self, digest: &str) -> Option<LoadedVerifier> {
        self.live.get(digest)?.upgrade()
    }

    /// Prepares the verifier of `component`, remembering it while it lives.
    fn prepare(
        &self,
        shared: Arc<Shared>,
        component: Component,
        digest: String,
        footprint: Footprint,
    ) -> Result<LoadedVerifier, LoadError> {
        let verifier = LoadedVerifier::prepare(shared, component, digest.clone(), footprint)?;
        self.live.put(digest, verifier.downgrade());
        Ok(verifier)
    }

    /// Records in the index (if any) what admitting `verifier` found.
    fn record(&self, key: &IndexKey, verifier: &LoadedVerifier, footprint: &Footprint) {
        if let Some(index) = &self.index
            && let Err(err) = index.put(key, verifier.digest(), footprint)
        {
            tracing::warn!(error = %err.kind(), "cannot write the compile cache index");
        }
    }

    /// Loads a verifier from component bytes; says whether the compile cache
    /// was used. The component is checked (kind, [`LoadLimits`], imports,
    /// exports) and prepared once; every call then instantiates it in a
    /// fresh store.
    ///
    /// With a cache directory, bytes loaded before (by this process or
    /// another) are found by their BLAKE3 hash in the cache's index: their
    /// SHA-256 digest and census are not computed again; bytes this host
    /// loaded before are not even hashed again, but found by comparison
    /// (see [`HostConfig::content_memo_bytes`]).
    ///
    /// A component this host loaded before and of which a verifier is still
    /// live is shared with it ([`LoadSource::Live`]): the same prepared
    /// code, no load (calls still get fresh stores; clones of a verifier
    /// share it the same way). The host keeps no verifier loaded itself:
    /// once every clone is dropped, the next load loads the code again.
    pub fn load_bytes(&self, bytes: &[u8]) -> Result<(LoadedVerifier, LoadSource), LoadError> {
        self.load_indexed(bytes).map(|(v, source, _)| (v, source))
    }

    /// [`VerifierHost::load_bytes`], with the footprint.
    fn load_indexed(
        &self,
        bytes: &[u8],
    ) -> Result<(LoadedVerifier, LoadSource, Footprint), LoadError> {
        // Refused before hashing: whatever needs no census.
        precheck(bytes, &self.shared.load)?;
        if self.index.is_none() {
            return self.load_admitted(bytes);
        }
        let keyed = self.content.key(bytes);
        let key = IndexKey::Content(keyed.hash);
        if let Some(known) = self.load_known(&key) {
            self.content.remember(bytes, &keyed);
            return Ok(known);
        }
        let (verifier, source, footprint) = self.load_admitted(bytes)?;
        self.record(&key, &verifier, &footprint);
        self.content.remember(bytes, &keyed);
        Ok((verifier, source, footprint))
    }

    /// Loads prechecked `bytes`: digest, census (once per digest), code,
    /// preparation.
    fn load_admitted(
        &self,
        bytes: &[u8],
    ) -> Result<(LoadedVerifier, LoadSource, Footprint), LoadError> {
        let digest = hex::encode(Sha256::digest(bytes));
        let footprint = match self.admitted.get(&digest) {
            Some(footprint) => footprint,
            None => {
                let footprint = admit(bytes, &self.shared.load)?;
                self.admitted.put(digest.clone(), footprint);
                footprint
            }
        };
        if let Some(verifier) = self.live(&digest) {
            return Ok((verifier, LoadSource::Live, footprint));
        }
        let shared = self.shared_for(&footprint)?;
        let (component, source) = compile(&shared, bytes, &digest)?;
        let verifier = self.prepare(shared, component, digest, footprint)?;
        Ok((verifier, source, footprint))
    }

    /// True when loading `bytes` would compile them now: a component within
    /// this host's load limits that neither a live verifier of this host nor
    /// the compile cache of the tier it compiles with holds. For a caller
    /// that wants to say so before a load that may take seconds (a Python or
    /// JavaScript verifier); it costs a SHA-256 and a census of the bytes.
    pub fn would_compile(&self, bytes: &[u8]) -> bool {
        let Ok(footprint) = admit(bytes, &self.shared.load) else {
            return false;
        };
        let digest = hex::encode(Sha256::digest(bytes));
        if self.live(&digest).is_some() {
            return false;
        }
        let Ok(shared) = self.shared_for(&footprint) else {
            return false;
        };
        if shared.cache.as_ref().is_some_and(|c| c.contains(&digest)) {
            return false;
        }
        census::check(bytes, &shared.load, census::Scope::CompileCost(shared.tier)).is_ok()
    }

    /// The limits this host loads components under.
    pub fn load_limits(&self) -> &LoadLimits {
        &self.shared.load
    }
}

/// Starts a tier: its engine, linker, epoch ticker and cache directory.
fn start_tier(config: &HostConfig, tier: Tier) -> Result<Shared, LoadError> {
    let mut cfg = tier.engine_config();
    if config.pooling {
        let load = &config.load;
        let mut pool = wasmtime::PoolingAllocationConfig::default();
        pool.total_component_instances(config.pool_instances)
            // A componentize-py verifier instantiates 14 core modules.
            .total_core_instances(config.pool_instances.saturating_mul(16))
            .total_memories(config.pool_instances.saturating_mul(2))
            .total_tables(config.pool_instances.saturating_mul(4))
            // Fiber stacks for the calls (one per running call).
            .total_stacks(config.pool_instances)
            .max_memories_per_module(load.max_memories)
            .max_tables_per_module(load.max_tables)
            .table_elements(load.max_table_elements as usize)
            .max_memory_size(usize::try_from(config.pool_max_memory_bytes).unwrap_or(usize::MAX))
            // A slot handed back is reset in place: the pages the call
            // touched (found with Linux's PAGEMAP_SCAN where the kernel has
            // it) are zeroed up to this many bytes, rather than returned to
            // the kernel, which costs a TLB shootdown on every core and page
            // faults in the next call.
            .linear_memory_keep_resident(
                usize::try_from(config.pool_keep_resident_bytes).unwrap_or(usize::MAX),
            )
            .table_keep_resident(64 * 1024)
            .pagemap_scan(wasmtime::Enabled::Auto);
        cfg.allocation_strategy(pool);
    }
    let engine = Engine::new(&cfg).map_err(|e| LoadError::Link(e.to_string()))?;
    let linker = linker::build(&engine).map_err(|e| LoadError::Link(e.to_string()))?;
    let cache = match &config.cache_dir {
        Some(dir) => Some(
            CompileCache::open(dir, &engine, config.map_cache_entries).map_err(|e| {
                LoadError::Io(format!("cannot open the compile cache: {}", e.kind()))
            })?,
        ),
        None => None,
    };
    let timers = Arc::new(Timers::default());
    let ticker = Ticker::start(engine.weak(), config.epoch_tick, Arc::clone(&timers))
        .map_err(|e| LoadError::Io(format!("cannot start the epoch ticker: {}", e.kind())))?;
    // Each tier's compile cost is bounded by its own limit (the census
    // estimates Cranelift's work; Winch does a fraction of it).
    let mut load = config.load;
    if tier == Tier::Winch {
        load.max_compile_cost = load.max_winch_compile_cost;
    }
    Ok(Shared {
        engine,
        linker,
        epoch_tick: config.epoch_tick,
        fuel_yield_interval: config.fuel_yield_interval.max(1),
        load,
        tier,
        compile_in: config.compile_in.clone(),
        timers,
        cache,
        packed_packets: config.packed_packets,
        prompt_wakeups: config.prompt_wakeups,
        _ticker: ticker,
    })
}

/// The component for `bytes` in `shared`'s engine: from its compile cache,
/// or compiled now (after the compile-cost census) and cached.
pub(crate) fn compile(
    shared: &Shared,
    bytes: &[u8],
    digest: &str,
) -> Result<(Component, LoadSource), LoadError> {
    {
        let engine = &shared.engine;
        if let Some(cache) = &shared.cache
            && let Some(component) = cache.load(engine, digest)
        {
            return Ok((component, LoadSource::Cache));
        }
        census::check(bytes, &shared.load, census::Scope::CompileCost(shared.tier))?;
        let started = Instant::now();
        let component = match &shared.compile_in {
            CompileIn::Process => {
                Component::new(engine, bytes).map_err(|e| LoadError::Corrupt(e.to_string()))?
            }
            CompileIn::Child(child) => {
                let component = compile_in_child(shared, child, bytes, digest)?;
                tracing::debug!(%digest, elapsed = ?started.elapsed(), "compiled verifier in a child");
                return Ok((component, LoadSource::Compiled));
            }
        };
        tracing::debug!(%digest, elapsed = ?started.elapsed(), "compiled verifier");
        if let Some(cache) = &shared.cache
            && let Err(err) = cache.store(digest, &component)
        {
            tracing::warn!(%digest, error = %err.kind(), "cannot write the compile cache");
        }
        Ok((component, LoadSource::Compiled))
    }
}

/// Compiles `bytes` in a compile child: with a compile cache, into a new
/// file of the cache's private directory that becomes the entry once
/// wasmtime loaded it (the host never holds the artifact in memory); else
/// through memory.
fn compile_in_child(
    shared: &Shared,
    child: &compile_child::ChildCompiler,
    bytes: &[u8],
    digest: &str,
) -> Result<Component, LoadError> {
    use compile_child::{Artifact, Sink};
    let refused = |e: wasmtime::Error| {
        LoadError::Link(format!("the compile child's output does not load: {e}"))
    };
    let engine = &shared.engine;
    let temp = shared.cache.as_ref().and_then(|cache| {
        cache
            .create_temp(digest)
            .inspect_err(|err| {
                tracing::warn!(%digest, error = %err.kind(), "cannot write the compile cache");
            })
            .ok()
            .map(|(path, file)| (cache, path, file))
    });
    let Some((cache, path, file)) = temp else {
        let Artifact::Memory(artifact) =
            compile_child::compile(child, shared.tier, bytes, Sink::Memory)?
        else {
            return Err(LoadError::Io("the compile child's output was lost".into()));
        };
        // SAFETY: `artifact` is what the compile child this call started
        // (and waited for) wrote on its own pipe for these very bytes:
        // wasmtime's serialization of a component it compiled, held in
        // memory since. wasmtime checks its header (version, engine
        // settings) and refuses one compiled with other settings.
        #[allow(unsafe_code)]
        let loaded = unsafe { Component::deserialize(engine, &artifact) };
        return loaded.map_err(refused);
    };
    let outcome =
        compile_child::compile(child, shared.tier, bytes, Sink::File(file)).and_then(|artifact| {
            let Artifact::File { sum } = artifact else {
                return Err(LoadError::Io("the compile child's output was lost".into()));
            };
            // SAFETY: the file at `path` was created new (never there
            // before) in the compile cache's private (0700) directory by
            // this call, and holds only what the compile child this call
            // started (and waited for) wrote on its own pipe for these very
            // bytes; nothing writes it after (it is renamed, never changed
            // in place). wasmtime checks its header (version, engine
            // settings) and refuses one compiled with other settings.
            #[allow(unsafe_code)]
            let loaded = unsafe { Component::deserialize_file(engine, &path) };
            Ok((loaded.map_err(refused)?, sum))
        });
    match outcome {
        Ok((component, sum)) => {
            if let Err(err) = cache.adopt(digest, &path, sum) {
                tracing::warn!(%digest, error = %err.kind(), "cannot write the compile cache");
                let _ = std::fs::remove_file(&path);
            }
            Ok(component)
        }
        Err(err) => {
            let _ = std::fs::remove_file(&path);
            Err(err)
        }
    }
}

/// Refuses bytes that are not a component, or are over a load limit; else
/// what instantiating them creates.
pub(crate) fn admit(bytes: &[u8], limits: &LoadLimits) -> Result<Footprint, LoadError> {
    precheck(bytes, limits)?;
    census::check(bytes, limits, census::Scope::Structure)
}

/// What is refused without reading the bytes through: not a component, or
/// more bytes than [`LoadLimits::max_component_bytes`].
fn precheck(bytes: &[u8], limits: &LoadLimits) -> Result<(), LoadError> {
    match component::kind(bytes) {
        WasmKind::Component => census::over(
            "max_component_bytes",
            bytes.len() as u64,
            limits.max_component_bytes,
        ),
        WasmKind::CoreModule => Err(LoadError::CoreModule),
        WasmKind::NotWasm => Err(LoadError::Corrupt(
            "missing the WebAssembly magic header".into(),
        )),
    }
}

/// Reads a component file: regular files only, opened without blocking,
/// at most `max_bytes`.
pub fn read_component(path: &Path, max_bytes: u64) -> Result<Vec<u8>, LoadError> {
    let io = |e: std::io::Error| LoadError::Io(format!("cannot read the file: {}", e.kind()));
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(crate::fsutil::nonblocking_flag());
    }
    let file = options.open(path).map_err(io)?;
    crate::fsutil::read_regular(file, max_bytes).map_err(|e| match e {
        crate::fsutil::ReadError::NotRegular => LoadError::Io("not a regular file".to_owned()),
        crate::fsutil::ReadError::TooLarge(found) => LoadError::OverLimit {
            limit: "max_component_bytes",
            found,
            max: max_bytes,
        },
        crate::fsutil::ReadError::Io(e) => io(e),
    })
}
