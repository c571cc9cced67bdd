//! The packet argument: the packet lowered through a view of a version's
//! bindings ([`packet_arg!`]), recording in the store when lowering
//! finished, so that a failure before that point is charged to the guest's
//! allocator ([`TrapKind::BadAllocation`](crate::TrapKind::BadAllocation)).

use super::shim::LowerContext;
use crate::store::state::{CallPhase, StoreState};
use std::any::Any;
use std::time::Instant;

/// Declares a packet argument `$arg`: the packet lowered through the view
/// `$view` (a version's lowering of the WIT type `$wit`), marking in the
/// store when lowering finished.
macro_rules! packet_arg {
    ($(#[$doc:meta])* $arg:ident, $view:ident, $wit:ty) => {
        $(#[$doc])*
        pub(crate) struct $arg<'a>(pub(crate) &'a verdict_policy::CheckPacket);

        $crate::abi::lower::view_of!($arg, $wit);

        // SAFETY: delegates to the view, which writes the record's layout;
        // marking the phase touches only the host's own store data.
        #[allow(unsafe_code)]
        unsafe impl wasmtime::component::Lower for $arg<'_> {
            fn linear_lower_to_flat<T>(
                &self,
                cx: &mut $crate::abi::shim::LowerContext<'_, T>,
                ty: $crate::abi::shim::InterfaceType,
                dst: &mut std::mem::MaybeUninit<Self::Lower>,
            ) -> wasmtime::Result<()> {
                $view(self.0).linear_lower_to_flat(cx, ty, dst)?;
                $crate::abi::lowered(cx);
                Ok(())
            }

            fn linear_lower_to_memory<T>(
                &self,
                cx: &mut $crate::abi::shim::LowerContext<'_, T>,
                ty: $crate::abi::shim::InterfaceType,
                offset: usize,
            ) -> wasmtime::Result<()> {
                $view(self.0).linear_lower_to_memory(cx, ty, offset)?;
                $crate::abi::lowered(cx);
                Ok(())
            }
        }
    };
}

pub(crate) use packet_arg;

/// Lowering is done: from here on the guest's own code runs.
pub(crate) fn lowered<T: 'static>(cx: &mut LowerContext<'_, T>) {
    let data: &mut dyn Any = cx.store.data_mut();
    if let Some(state) = data.downcast_mut::<StoreState>() {
        state.phase = CallPhase::Running;
        state.marks.lowered = Some(Instant::now());
    }
}
