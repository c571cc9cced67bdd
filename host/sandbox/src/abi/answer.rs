//! Lifting an answer from the guest's return area: the component traits for
//! an answer type ([`answer_from_return_area!`]), and the reader of a string
//! result that versions share.

use super::memory::{GuestText, Memory};
use crate::error::AbiFault;
use std::time::Instant;

/// An answer that knows when the host began reading it: the end of the
/// guest's own run, for the call's stage times.
pub(crate) trait GuestAnswer {
    /// When lifting the answer began.
    fn lift_started(&self) -> Instant;
}

/// Size and alignment of a string's return area: pointer, then length.
pub(crate) const STRING_AREA: (u64, u32) = (8, 4);

/// A `string` result at `ptr`, at most `max_chars` characters (longer ones
/// are measured in guest memory, not copied).
pub(crate) fn string_result(
    memory: &Memory<'_>,
    ptr: u32,
    max_chars: usize,
    at: &'static str,
) -> Result<GuestText, AbiFault> {
    let (size, align) = STRING_AREA;
    let area = memory.slice(ptr, size, align, at)?;
    memory.text(
        Memory::u32_at(area, 0),
        Memory::u32_at(area, 4),
        max_chars,
        at,
    )
}

/// Implements the component traits for an answer read from a return area:
/// `$answer` is a tuple struct of the decoded value and the [`Instant`]
/// lifting began, `$real` the WIT results tuple it stands for, `$decode` a
/// `fn(&Memory, u32) -> Result<_, AbiFault>` reading the area at the
/// address.
///
/// Results that flatten to more than one core value return through memory:
/// the core function returns a single `i32`, the address of the return
/// area. The answer types declare exactly that core result (one `i32`,
/// `CanonicalAbiInfo::SCALAR4`), so wasmtime hands the address to
/// `linear_lift_from_flat` and `$decode` reads the area itself. The
/// interface type is still checked as the real result type.
macro_rules! answer_from_return_area {
    ($answer:ty, $real:ty, $decode:path) => {
        // SAFETY: `Lower` is one `ValRaw`, the core function's single `i32`
        // result (the return-area address), and the ABI says the same; the
        // typecheck is the real result type's.
        #[allow(unsafe_code)]
        unsafe impl wasmtime::component::ComponentType for $answer {
            type Lower = wasmtime::ValRaw;
            const ABI: $crate::abi::shim::CanonicalAbiInfo =
                $crate::abi::shim::CanonicalAbiInfo::SCALAR4;

            fn typecheck(
                ty: &$crate::abi::shim::InterfaceType,
                types: &$crate::abi::shim::InstanceType<'_>,
            ) -> wasmtime::Result<()> {
                <$real as wasmtime::component::ComponentType>::typecheck(ty, types)
            }
        }

        // SAFETY: the typecheck is that of the real results tuple.
        #[allow(unsafe_code)]
        unsafe impl wasmtime::component::ComponentNamedList for $answer {}

        // SAFETY: reads guest memory only through bounds-checked slices.
        #[allow(unsafe_code)]
        unsafe impl wasmtime::component::Lift for $answer {
            fn linear_lift_from_flat(
                cx: &mut $crate::abi::shim::LiftContext<'_>,
                _ty: $crate::abi::shim::InterfaceType,
                src: &wasmtime::ValRaw,
            ) -> wasmtime::Result<Self> {
                let started = std::time::Instant::now();
                let memory = $crate::abi::Memory::of(cx);
                $decode(&memory, src.get_u32())
                    .map(|answer| Self(answer, started))
                    .map_err(wasmtime::Error::new)
            }

            fn linear_lift_from_memory(
                _cx: &mut $crate::abi::shim::LiftContext<'_>,
                _ty: $crate::abi::shim::InterfaceType,
                _bytes: &[u8],
            ) -> wasmtime::Result<Self> {
                // An answer is only ever a whole result, never nested.
                Err(wasmtime::Error::new($crate::error::AbiFault::from(
                    $crate::error::TrapKind::InvalidPointer {
                        at: "nested answer",
                    },
                )))
            }
        }

        impl $crate::abi::GuestAnswer for $answer {
            fn lift_started(&self) -> std::time::Instant {
                self.1
            }
        }
    };
}

pub(crate) use answer_from_return_area;

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::component::ComponentType;

    #[test]
    fn a_string_result_returns_through_its_area() {
        let string = <String as ComponentType>::ABI;
        assert_eq!((u64::from(string.size32), string.align32), STRING_AREA);
        assert!(<(String,) as ComponentType>::flatten_count() > 1);
    }
}
