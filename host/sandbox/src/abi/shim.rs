//! The one door to wasmtime's `component::__internal`: every item the
//! sandbox uses from it is re-exported here, and nowhere else in the crate
//! names that module.
//!
//! # Why it is used, and why that is sound
//!
//! The packet is lowered and the answer lifted by our own implementations
//! of wasmtime's `ComponentType`, `Lower` and `Lift` (see [`super`]): the
//! packet straight from the host's borrowed data, the answer read and
//! bounded in guest memory before anything is copied. Those traits' methods
//! take wasmtime's lowering and lifting contexts and interface types, which
//! wasmtime exports for the code `bindgen!` generates, under `__internal`,
//! outside its semver promise. What we rely on:
//!
//! - [`LowerContext`] gives the guest's memory (`as_slice_mut`), its
//!   allocator (`realloc`) and the store's data; [`LiftContext`] gives the
//!   memory (`memory`) and the string encoding (`options`). Every write
//!   goes through bounds-checked slices of that memory, so a wrong offset is
//!   an error, never an out-of-bounds write.
//! - [`InterfaceType`] and [`InstanceType`] are only passed on to the
//!   generated types' own `typecheck`, and record field types are read
//!   from the context's type tables; [`bad_type_info`] is wasmtime's own
//!   answer to a type that does not match what was typechecked.
//! - [`CanonicalAbiInfo`] is taken from the generated types (size,
//!   alignment, field offsets), never written by hand, except
//!   [`CanonicalAbiInfo::SCALAR4`] for an answer's return-area pointer.
//! - [`StringEncoding`] is read to decode the guest's strings.
//!
//! The `unsafe impl`s built on these delegate their type information to
//! the generated types and write exactly those types' canonical-ABI
//! layout; the layout the answer lifting assumes (return areas) is
//! asserted against wasmtime's own in the tests of each version's bindings.
//!
//! # The version this was checked against
//!
//! [`CHECKED_AGAINST`]: the workspace pins wasmtime with `~48.0.8` (patch
//! releases only), and a test below fails when `Cargo.lock` resolves another
//! version, so that an update re-reads this module's assumptions first.

pub(crate) use wasmtime::component::__internal::wasmtime_environ::component::StringEncoding;
pub(crate) use wasmtime::component::__internal::{
    CanonicalAbiInfo, InstanceType, InterfaceType, LiftContext, LowerContext, bad_type_info,
};

/// The wasmtime release whose `__internal` items were checked against the
/// uses above.
#[cfg_attr(not(test), expect(dead_code, reason = "the test below reads it"))]
pub(crate) const CHECKED_AGAINST: &str = "48.0.8";

#[cfg(test)]
mod tests {
    use super::*;

    /// The version `Cargo.lock` resolves for `package`.
    fn locked_version(package: &str) -> Option<String> {
        let lock = include_str!("../../../../Cargo.lock");
        let mut lines = lock.lines();
        while let Some(line) = lines.next() {
            if line == format!("name = \"{package}\"") {
                return lines
                    .next()?
                    .strip_prefix("version = \"")?
                    .strip_suffix('"')
                    .map(str::to_owned);
            }
        }
        None
    }

    #[test]
    fn the_locked_wasmtime_is_the_one_checked() {
        assert_eq!(
            locked_version("wasmtime").as_deref(),
            Some(CHECKED_AGAINST),
            "wasmtime changed: re-check the __internal uses in abi/shim.rs, then update CHECKED_AGAINST"
        );
    }

    #[test]
    fn the_scalar_return_pointer_is_one_aligned_u32() {
        let scalar = CanonicalAbiInfo::SCALAR4;
        assert_eq!((scalar.size32, scalar.align32), (4, 4));
        assert_eq!(scalar.flat_count, Some(1));
    }
}
