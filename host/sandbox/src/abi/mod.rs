//! The canonical ABI at the two ends of a verifier call, checked by the
//! host, for every WIT version (each version's bindings instantiate it for
//! their types: [`crate::bindings`]).
//!
//! wasmtime reports a guest's canonical-ABI violations (a string pointer out
//! of bounds, an invalid option tag, bad UTF-8, an allocator returning a
//! pointer outside memory) as untyped errors, and copies a returned string
//! into the host before any bound can be checked. So both ends of the call
//! are ours:
//! - the packet is lowered from the host's own types through a version's
//!   view ([`lower`]'s helpers), wrapped by [`packet_arg!`] so the call
//!   records when lowering finished: a failure before that point is the
//!   guest allocator's ([`TrapKind::BadAllocation`](crate::TrapKind::BadAllocation));
//! - the answer is read from the guest's return area
//!   ([`answer_from_return_area!`], [`memory`]): every pointer, length, tag
//!   and encoding is validated in guest memory, and a string over its bound
//!   is measured there and never copied. A violation is a typed
//!   [`AbiFault`](crate::error::AbiFault).
//!
//! Both implement wasmtime's component traits with its lifting and lowering
//! contexts, which wasmtime exports for generated code outside its semver
//! promise; every such item is reached through [`shim`], which says why
//! each use is sound and which wasmtime release it was checked against.

mod answer;
mod arg;
pub(crate) mod lower;
mod memory;
pub(crate) mod shim;

pub(crate) use answer::{GuestAnswer, answer_from_return_area, string_result};
pub(crate) use arg::{lowered, packet_arg};
pub(crate) use memory::{GuestText, Memory};
