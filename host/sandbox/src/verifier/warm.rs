//! The optional `warm-up` export (WIT `0.1.1`): `warm`, called once on a
//! fresh instance before its one call, by the call itself
//! ([`super::call`]) or ahead of it on a ready instance ([`super::ready`]).

use crate::store::state::{CallPhase, StoreState};
use wasmtime::Store;
use wasmtime::component::{ComponentExportIndex, Instance};

/// Calls `warm` (the component's `warm-up` export, if it has one) on the
/// fresh `instance`, before its one call: right after instantiating, or
/// ahead of the check on a ready instance.
pub(crate) async fn warm(
    store: &mut Store<StoreState>,
    instance: &Instance,
    warm: Option<ComponentExportIndex>,
) -> wasmtime::Result<()> {
    let Some(index) = warm else {
        return Ok(());
    };
    store.data_mut().phase = CallPhase::Warming;
    let func = instance.get_typed_func::<(), ()>(&mut *store, index)?;
    func.call_async(&mut *store, ()).await
}
