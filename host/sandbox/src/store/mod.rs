//! A call's store: its [`state`] (the data every host import sees), the
//! memory and table [`limiter`], the deny-all WASI context ([`deny`]), the
//! virtual [`clock`]s, the bounded [`stderr`] capture, the [`tape`] of
//! what a recorded or replayed call sees from outside, and the taped
//! readiness of its timers ([`poll`]).

pub(crate) mod clock;
pub(crate) mod deny;
pub(crate) mod limiter;
pub(crate) mod poll;
pub(crate) mod state;
pub(crate) mod stderr;
pub(crate) mod tape;

use state::StoreState;
use wasmtime::{Engine, Store};

/// A store for `state`: its memory limiter, `fuel`, and a fuel yield every
/// `yield_interval` units.
pub(crate) fn new_store(
    engine: &Engine,
    state: StoreState,
    fuel: u64,
    yield_interval: u64,
) -> Result<Store<StoreState>, crate::CheckError> {
    let mut store = Store::new(engine, state);
    store.limiter(|s| &mut s.limiter);
    store
        .set_fuel(fuel)
        .and_then(|()| store.fuel_async_yield_interval(Some(yield_interval)))
        .map_err(|e| crate::CheckError::Host(e.to_string()))?;
    Ok(store)
}
