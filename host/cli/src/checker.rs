//! Checker metrics shared by a session's wasm checkers: each
//! [`verdict_sandbox::WasmChecker`] adds its calls to the session's
//! [`Totals`], which the run summary reads.

use std::sync::{Arc, Mutex};

pub use verdict_sandbox::CheckerTotals;

/// Shared totals (cloned into the checkers, read by the summary).
pub type Totals = Arc<Mutex<CheckerTotals>>;
