//! Driving a call to its end whatever the guest does: the [`guard`] that
//! ends it at its deadline or on cancellation, the [`handoff`] to a
//! [`workers`] thread when it outlives its first poll, the epoch
//! [`ticker`] and its [`timer`]s, prompt [`wakeup`]s of a blocked caller,
//! the trap [`signals`] and the floating-point environment ([`fpenv`]) a
//! guest runs in, and the [`usage`] a running call publishes.
//!
//! Nothing here knows a component or a store: the call itself (a fresh
//! store, instantiate, lower, run, lift) is [`crate::verifier`]'s.

pub(crate) mod background;
pub(crate) mod fpenv;
pub(crate) mod guard;
pub(crate) mod handoff;
pub(crate) mod signals;
pub(crate) mod ticker;
pub(crate) mod timer;
pub(crate) mod usage;
pub(crate) mod wakeup;
pub(crate) mod workers;
