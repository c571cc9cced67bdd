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
//!
//! A component loaded on Winch is then compiled with Cranelift in the
//! background ([`HostConfig::optimize_in_background`], on by default), one
//! at a time per host, within its own bounds ([`BackgroundCompile`]: in the
//! compile child, under its memory limit and the background deadline).
//! Its verifier switches to that code when it is whole: checks starting
//! then run it, checks in flight finish on the code they started with
//! ([`TierStatus`](crate::TierStatus), [`CallMetrics::tier`](crate::CallMetrics::tier)).
//! The compile cache keeps the Cranelift code by digest, so the next load
//! of the component, in this host or the next, gets it at once. A failed
//! background compile leaves the verifier on Winch (a warning and
//! [`TierStatus::OptimizeFailed`](crate::TierStatus::OptimizeFailed)),
//! never a failed check.
//!
//! # Fuel per tier
//!
//! Both compilers charge fuel per WebAssembly operator, so a check gives
//! the same verdict and nearly the same fuel on either, but the counts are
//! not identical: wasmtime's two code generators place their fuel checks a
//! little differently, and Cranelift's counts came out higher in every
//! case measured. The Rust sample's checks take exactly 10 units more on
//! Cranelift (9,857 → 9,867 for a complete verdict, 10,569 → 10,579 for an
//! incomplete one, with or without ready instances;
//! `tests/sandbox_tier_switch.rs` pins a constant offset within 1%); a
//! ready check of the componentize-py sample 342,879 → 348,305 (+1.6%), of
//! the componentize-js one 1,775,880 → 1,778,952 (+0.2%) (the sandbox
//! bench's `tier` section). Each tier's count is deterministic for a
//! given check. A fuel budget set within 2% of a check's use may stop it on
//! one tier and not the other; each call reports the tier it ran on.
//!
//! The host is where loading starts and what it returns: the stages of
//! loading are in [`crate::load`], the verifier and its calls in
//! [`crate::verifier`].

mod config;
mod inspect;
mod optimize;

pub use config::{BackgroundCompile, CompilerChoice, HostConfig};
pub use inspect::Inspection;

use crate::call::ticker::Ticker;
use crate::call::timer::Timers;
use crate::error::LoadError;
use crate::fsutil::FileIdentity;
use crate::limits::LoadLimits;
use crate::load::cache::CompileCache;
use crate::load::census::{self, Footprint};
use crate::load::compile::{LoadSource, admit, compile, precheck, read_component};
use crate::load::content::ContentKeys;
use crate::load::index::{DigestIndex, IndexKey};
use crate::load::linker;
use crate::load::memo::Remembered;
use crate::load::shared::Shared;
use crate::load::tier::Tier;
use crate::verifier::optimized::TierStatus;
use crate::verifier::{LoadedVerifier, WeakVerifier};
use optimize::{Job, JobBytes, Optimizer};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use wasmtime::Engine;
use wasmtime::component::Component;

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
    /// The background Cranelift compiles of components loaded on Winch.
    optimizer: Arc<Optimizer>,
    config: Arc<HostConfig>,
}

/// Where a load got its bytes: what a background compile reads.
#[derive(Clone, Copy)]
enum Origin<'a> {
    File(&'a Path),
    Bytes(&'a [u8]),
}

impl std::fmt::Debug for VerifierHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifierHost")
            .field("epoch_tick", &self.shared.epoch_tick)
            .field("cached", &self.shared.cache.is_some())
            .finish()
    }
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
            optimizer: Arc::default(),
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

    /// True when a component with `footprint` loads on Winch and is then
    /// compiled with Cranelift in the background.
    fn optimizes(&self, footprint: &Footprint) -> bool {
        self.config.optimize_in_background
            && self.config.compiler == CompilerChoice::Auto
            && self.tier_for(footprint) == Tier::Winch
    }

    /// The Cranelift code of `digest` in the compile cache, for a component
    /// that loads on Winch but was optimized before: a background compile's
    /// result, used at once.
    fn optimized_in_cache(&self, footprint: &Footprint, digest: &str) -> Option<Component> {
        if !self.optimizes(footprint) {
            return None;
        }
        self.shared
            .cache
            .as_ref()?
            .load(&self.shared.engine, digest)
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
        let known =
            identity.and_then(|id| self.load_known(&IndexKey::File(id), Origin::File(path)));
        if let Some((verifier, ..)) = known {
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
    fn load_known(
        &self,
        key: &IndexKey,
        origin: Origin<'_>,
    ) -> Option<(LoadedVerifier, LoadSource, Footprint)> {
        let (digest, footprint) = self.index.as_ref()?.get(key)?;
        if let Some(verifier) = self.live(&digest) {
            return Some((verifier, LoadSource::Live, footprint));
        }
        if let Some(component) = self.optimized_in_cache(&footprint, &digest) {
            let shared = Arc::clone(&self.shared);
            let verifier = self
                .prepare(shared, component, digest, footprint, origin)
                .ok()?;
            return Some((verifier, LoadSource::Cache, footprint));
        }
        let shared = self.shared_for(&footprint).ok()?;
        let component = shared.cache.as_ref()?.load(&shared.engine, &digest)?;
        let verifier = self
            .prepare(shared, component, digest, footprint, origin)
            .ok()?;
        Some((verifier, LoadSource::Cache, footprint))
    }

    /// The verifier this host loaded with `digest`, if a clone of it is
    /// still live: loading it again shares it.
    fn live(&self, digest: &str) -> Option<LoadedVerifier> {
        self.live.get(digest)?.upgrade()
    }

    /// Prepares the verifier of `component`, remembering it while it lives;
    /// one on Winch that this host optimizes is queued for its background
    /// compile (its bytes read again from `origin`).
    fn prepare(
        &self,
        shared: Arc<Shared>,
        component: Component,
        digest: String,
        footprint: Footprint,
        origin: Origin<'_>,
    ) -> Result<LoadedVerifier, LoadError> {
        let optimize = shared.tier == Tier::Winch && self.optimizes(&footprint);
        let status = if optimize {
            TierStatus::Optimizing
        } else {
            TierStatus::settled(shared.tier)
        };
        let verifier =
            LoadedVerifier::prepare(shared, component, digest.clone(), footprint, status)?;
        self.live.put(digest.clone(), verifier.downgrade());
        if optimize {
            let bytes = match origin {
                Origin::File(path) => JobBytes::File(path.to_owned()),
                Origin::Bytes(bytes) => JobBytes::Held(bytes.to_vec()),
            };
            let job = Job {
                verifier: verifier.downgrade(),
                digest,
                bytes,
            };
            self.optimizer.submit(&self.shared, &self.config, job);
        }
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
        if let Some(known) = self.load_known(&key, Origin::Bytes(bytes)) {
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
        let origin = Origin::Bytes(bytes);
        if let Some(component) = self.optimized_in_cache(&footprint, &digest) {
            let shared = Arc::clone(&self.shared);
            let verifier = self.prepare(shared, component, digest, footprint, origin)?;
            return Ok((verifier, LoadSource::Cache, footprint));
        }
        let shared = self.shared_for(&footprint)?;
        let (component, source) = compile(&shared, bytes, &digest)?;
        let verifier = self.prepare(shared, component, digest, footprint, origin)?;
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
        if self.optimizes(&footprint)
            && let Some(cache) = &self.shared.cache
            && cache.contains(&digest)
        {
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
        ready_budget: if config.pooling {
            (config.pool_instances / 2) as usize
        } else {
            usize::MAX
        },
        ready_held: AtomicUsize::new(0),
        _ticker: ticker,
    })
}
