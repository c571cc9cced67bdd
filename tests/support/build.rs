//! Builds every sample verifier and hostile guest to a `wasm32-wasip2`
//! component and writes `$OUT_DIR/guests.rs`: one `pub const NAME: &str`
//! (absolute `.wasm` path) per guest, plus `ALL`.

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
    "packet-echo",
];

fn main() -> ExitCode {
    verdict_guest_build::write_guest_consts(GUESTS)
}
