//! Helpers for lowering a [`CheckPacket`](verdict_policy::CheckPacket) into
//! guest memory from borrowed host data, shared by every version's views
//! (`bindings::*::lower`): the views implement wasmtime's component traits
//! with the WIT records' own type information (size, alignment, typecheck)
//! and write the same canonical-ABI layout the generated code would,
//! without first building the owned WIT records.

use super::shim::{InterfaceType, LowerContext, bad_type_info};
use wasmtime::component::ComponentType;

/// Implements `ComponentType` for a view with the type information of the
/// WIT type it is lowered as.
macro_rules! view_of {
    ($view:ident, $wit:ty) => {
        // SAFETY: every item is the WIT type's own (generated or wasmtime's),
        // and the `Lower` impl below writes exactly that type's layout.
        #[allow(unsafe_code)]
        unsafe impl wasmtime::component::ComponentType for $view<'_> {
            type Lower = <$wit as wasmtime::component::ComponentType>::Lower;
            const ABI: $crate::abi::shim::CanonicalAbiInfo =
                <$wit as wasmtime::component::ComponentType>::ABI;

            fn typecheck(
                ty: &$crate::abi::shim::InterfaceType,
                types: &$crate::abi::shim::InstanceType<'_>,
            ) -> wasmtime::Result<()> {
                <$wit as wasmtime::component::ComponentType>::typecheck(ty, types)
            }
        }
    };
}

pub(crate) use view_of;

/// The types of the `N` fields of the record `ty`, in order (typechecked
/// against the WIT record, so all present).
pub(crate) fn record_fields<const N: usize, T>(
    cx: &LowerContext<'_, T>,
    ty: InterfaceType,
) -> [InterfaceType; N] {
    let fields = match ty {
        InterfaceType::Record(i) => &cx.types[i].fields,
        _ => bad_type_info(),
    };
    std::array::from_fn(|n| fields.get(n).map_or_else(bad_type_info, |f| f.ty))
}

/// The next field's offset after `offset`, for a field of type `F`.
pub(crate) fn next<F: ComponentType + ?Sized>(offset: &mut usize) -> usize {
    <F as ComponentType>::ABI.next_field32_size(offset)
}

/// The payload offset of an `option<T>` at `at`: after its one-byte tag,
/// aligned to the payload.
pub(crate) fn payload<T: ComponentType + ?Sized>(at: usize) -> usize {
    let align = <T as ComponentType>::ABI.align32 as usize;
    (at + 1).next_multiple_of(align)
}

/// `len` bytes of `memory` at `at` (the guest's allocator returned the
/// range and wasmtime checked it, so a miss is a host bug, reported).
pub(crate) fn slice(memory: &mut [u8], at: usize, len: usize) -> wasmtime::Result<&mut [u8]> {
    at.checked_add(len)
        .and_then(|end| memory.get_mut(at..end))
        .ok_or_else(|| wasmtime::format_err!("lowering out of bounds"))
}
