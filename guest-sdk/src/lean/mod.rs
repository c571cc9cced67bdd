//! What a lean build (`wasm32-unknown-unknown`, no WASI world linked in)
//! gets from the SDK in place of what Rust's `wasm32-wasip2` std gives:
//!
//! - [`alloc`]: a global allocator that starts in the initial memory the
//!   module already has (std's allocator there grows memory on a fresh
//!   instance's first allocation: a fresh store per check pays for it on
//!   every call);
//! - [`panic`]: panic messages written to standard error (std's own go
//!   nowhere on this target), so a panicking verifier's message still reaches
//!   the host's diagnostics.

#[cfg(feature = "lean-allocator")]
mod alloc;
mod panic;

pub(crate) use panic::report_panics;
