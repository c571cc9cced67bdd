//! The files the user names: every one read is a regular file read
//! through a stated bound ([`read`]); the one written, `componentize`'s
//! output, replaces only a regular file the user may write ([`replace`]).

pub mod read;
pub mod replace;

pub use read::{Bound, read_text};
