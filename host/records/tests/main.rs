//! Check records: recorded checks replay identically, tampering is
//! detected, another build's changed answers are shown
//! (`cargo test -p verdict-records --test records`; the Python and JS
//! samples with `--include-ignored` and `VERDICT_POLYGLOT_DIR`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod backlog;
mod durability;
mod record_replay;
mod timer_replay;
