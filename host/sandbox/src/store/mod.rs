//! A call's store: its [`state`] (the data every host import sees), the
//! memory and table [`limiter`], the deny-all WASI context ([`deny`]), the
//! virtual [`clock`]s and the bounded [`stderr`] capture.

pub(crate) mod clock;
pub(crate) mod deny;
pub(crate) mod limiter;
pub(crate) mod state;
pub(crate) mod stderr;
