//! The files the user names: every one read is a regular file read
//! through a stated bound ([`read`]).

pub mod read;

pub use read::{Bound, read_text};
