//! Loading: from bytes to a prepared component, each stage bounded.
//!
//! [`compile`] admits the bytes ([`component`]: the kind and the roles;
//! [`census`]: structure and compile cost against the
//! [`LoadLimits`](crate::LoadLimits); [`imports`]: deny by default) and
//! compiles them on a [`tier`] (in process or in a [`compile_child`]),
//! behind the on-disk [`cache`]. A later load finds what was established
//! before through the [`index`] (file identity → digest and footprint),
//! the [`content`] keys (bytes seen before, compared in full) and the
//! [`memo`]. [`shared`] is what a host and its verifiers share per tier:
//! engine, [`linker`], timers, limits and cache.

pub(crate) mod cache;
pub(crate) mod census;
pub(crate) mod compile;
pub(crate) mod compile_child;
pub(crate) mod component;
pub(crate) mod content;
pub(crate) mod imports;
pub(crate) mod index;
pub(crate) mod linker;
pub(crate) mod memo;
pub(crate) mod shared;
pub(crate) mod tier;
