//! Builds every sample verifier and hostile guest to a `wasm32-wasip2`
//! component and writes `$OUT_DIR/guests.rs`: one `pub const NAME: &str`
//! (absolute `.wasm` path) per guest, plus `ALL`; and the lean build of
//! the guests named in `LEAN_GUESTS` (`wasm32-unknown-unknown`, made a
//! component) into `$OUT_DIR/lean_guests.rs`, the same way.

use std::process::ExitCode;

/// The guest packages, in the order `ALL` lists them.
const GUESTS: &[&str] = &[
    "artifact-ready",
    "receipt-required",
    "revision-progress",
    "good-both",
    "hostile-spin",
    "hostile-alloc-bomb",
    "hostile-deep-recursion",
    "hostile-panic",
    "hostile-huge-reason",
    "hostile-huge-feedback",
    "hostile-huge-progress-key",
    "hostile-cross-tenant",
    "hostile-forbidden-import",
    "hostile-wasi-deny",
    "hostile-read-many",
    "hostile-host-calls",
    "hostile-timer-race",
    "packet-echo",
];

/// The guests also built lean, to compare with their `wasm32-wasip2` build.
const LEAN_GUESTS: &[&str] = &[
    "artifact-ready",
    "hostile-panic",
    "hostile-alloc-bomb",
    "packet-echo",
];

fn main() -> ExitCode {
    match verdict_guest_build::write_guest_consts(GUESTS) {
        ExitCode::SUCCESS => verdict_guest_build::write_lean_guest_consts(LEAN_GUESTS),
        failed => failed,
    }
}
