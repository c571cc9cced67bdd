//! The verifier host: one engine (fuel + epoch interruption), one epoch
//! ticker, one linker, and an optional compile cache, shared by every
//! verifier it loads.

use crate::cache::CompileCache;
use crate::census::{self, Footprint};
use crate::component::{self, WasmKind};
use crate::error::LoadError;
use crate::limits::LoadLimits;
use crate::linker;
use crate::shared::Shared;
use crate::ticker::Ticker;
use crate::timer::Timers;
use crate::verifier::LoadedVerifier;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime::component::Component;
use wasmtime::{Config, Engine};

/// How a host is set up.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// Where compiled components are cached (`None`: compile every load).
    pub cache_dir: Option<PathBuf>,
    /// Epoch tick period: the granularity of deadlines, cancellation and
    /// guest sleeps. Default 1 ms.
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
    /// What a component may be to be loaded at all.
    pub load: LoadLimits,
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
            load: LoadLimits::default(),
        }
    }
}

/// Loads verifier components and runs them in fresh, limited stores.
#[derive(Clone)]
pub struct VerifierHost {
    shared: Arc<Shared>,
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
pub enum LoadSource {
    /// Compiled now.
    Compiled,
    /// Deserialized from the compile cache.
    Cache,
}

impl VerifierHost {
    /// Creates a host: engine, ticker thread, linker and cache directory.
    pub fn new(config: HostConfig) -> Result<Self, LoadError> {
        let mut cfg = Config::new();
        cfg.wasm_component_model(true)
            .consume_fuel(true)
            .epoch_interruption(true);
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
                .max_memory_size(
                    usize::try_from(config.pool_max_memory_bytes).unwrap_or(usize::MAX),
                );
            cfg.allocation_strategy(pool);
        }
        let engine = Engine::new(&cfg).map_err(|e| LoadError::Link(e.to_string()))?;
        let linker = linker::build(&engine).map_err(|e| LoadError::Link(e.to_string()))?;
        let cache = match &config.cache_dir {
            Some(dir) => Some(CompileCache::open(dir, &engine).map_err(|e| {
                LoadError::Io(format!("cannot open the compile cache: {}", e.kind()))
            })?),
            None => None,
        };
        let timers = Arc::new(Timers::default());
        let ticker = Ticker::start(engine.weak(), config.epoch_tick, Arc::clone(&timers))
            .map_err(|e| LoadError::Io(format!("cannot start the epoch ticker: {}", e.kind())))?;
        Ok(Self {
            shared: Arc::new(Shared {
                engine,
                linker,
                epoch_tick: config.epoch_tick,
                fuel_yield_interval: config.fuel_yield_interval.max(1),
                load: config.load,
                timers,
                cache,
                _ticker: ticker,
            }),
        })
    }

    /// Loads a verifier from a `.wasm` file: a regular file no larger than
    /// [`LoadLimits::max_component_bytes`], opened without blocking (a FIFO
    /// or a device is refused, not waited on).
    pub fn load_file(&self, path: impl AsRef<Path>) -> Result<LoadedVerifier, LoadError> {
        let bytes = read_component(path.as_ref(), self.shared.load.max_component_bytes)?;
        self.load_bytes(&bytes).map(|(v, _)| v)
    }

    /// Loads a verifier from component bytes; says whether the compile cache
    /// was used. The component is checked (kind, [`LoadLimits`], imports,
    /// exports) and prepared once; every call then instantiates it in a
    /// fresh store.
    pub fn load_bytes(&self, bytes: &[u8]) -> Result<(LoadedVerifier, LoadSource), LoadError> {
        let footprint = admit(bytes, &self.shared.load)?;
        let digest = hex::encode(Sha256::digest(bytes));
        let (component, source) = self.compile(bytes, &digest)?;
        let verifier =
            LoadedVerifier::prepare(Arc::clone(&self.shared), component, digest, footprint)?;
        Ok((verifier, source))
    }

    pub(crate) fn compile(
        &self,
        bytes: &[u8],
        digest: &str,
    ) -> Result<(Component, LoadSource), LoadError> {
        let engine = &self.shared.engine;
        if let Some(cache) = &self.shared.cache
            && let Some(component) = cache.load(engine, digest)
        {
            return Ok((component, LoadSource::Cache));
        }
        census::check(bytes, &self.shared.load, census::Scope::CompileCost)?;
        let started = Instant::now();
        let component =
            Component::new(engine, bytes).map_err(|e| LoadError::Corrupt(e.to_string()))?;
        tracing::debug!(%digest, elapsed = ?started.elapsed(), "compiled verifier");
        if let Some(cache) = &self.shared.cache
            && let Err(err) = cache.store(digest, &component)
        {
            tracing::warn!(%digest, error = %err.kind(), "cannot write the compile cache");
        }
        Ok((component, LoadSource::Compiled))
    }

    /// The limits this host loads components under.
    pub fn load_limits(&self) -> &LoadLimits {
        &self.shared.load
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

/// Refuses bytes that are not a component, or are over a load limit; else
/// what instantiating them creates.
pub(crate) fn admit(bytes: &[u8], limits: &LoadLimits) -> Result<Footprint, LoadError> {
    match component::kind(bytes) {
        WasmKind::Component => census::check(bytes, limits, census::Scope::Structure),
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
