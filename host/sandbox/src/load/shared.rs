//! What a verifier host and every verifier it loaded share: the engine,
//! the linker, the timers of the epoch ticker, the load limits and the
//! compile cache.

use crate::call::ticker::Ticker;
use crate::call::timer::Timers;
use crate::limits::LoadLimits;
use crate::load::cache::CompileCache;
use crate::load::compile_child::CompileIn;
use crate::load::tier::Tier;
use crate::store::state::StoreState;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;
use wasmtime::Engine;
use wasmtime::component::Linker;

/// State shared by a host and every verifier it loaded. Verifiers keep it
/// alive, so the ticker runs as long as any verifier can be called.
pub(crate) struct Shared {
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<StoreState>,
    pub(crate) epoch_tick: Duration,
    pub(crate) fuel_yield_interval: u64,
    pub(crate) load: LoadLimits,
    /// The compiler tier of this engine.
    pub(crate) tier: Tier,
    /// Where this tier compiles.
    pub(crate) compile_in: CompileIn,
    pub(crate) timers: Arc<Timers>,
    pub(crate) cache: Option<CompileCache>,
    /// Call packed entry points when a verifier exports them.
    pub(crate) packed_packets: bool,
    /// A blocking caller asks for prompt wake-ups while it waits.
    pub(crate) prompt_wakeups: bool,
    /// The most ready instances this tier's engine holds at once (half its
    /// pool's instance slots with the pooling allocator: the other half is
    /// for the calls themselves).
    pub(crate) ready_budget: usize,
    /// Ready instances held now.
    pub(crate) ready_held: AtomicUsize,
    /// Held for its drop: the ticker stops with the last verifier.
    pub(crate) _ticker: Ticker,
}
