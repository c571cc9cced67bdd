//! Hostile guest: `check` recurses without bound (not a tail call; the
//! optimizer cannot fold it), so the wasm stack overflows.

use std::hint::black_box;
use verdict_guest::{Artifacts, Packet, Verdict, Verifier};

/// The recursing checker.
#[derive(Debug, Default)]
pub struct DeepRecursion;

/// Recurses until the stack runs out; the addition after the call keeps it
/// from being a tail call. The exit test never holds (depth starts at the
/// iteration, far below `u64::MAX`) but keeps the function well-formed.
fn descend(depth: u64) -> u64 {
    if black_box(depth) == u64::MAX {
        return 0;
    }
    let next = black_box(depth.wrapping_add(1));
    descend(next).wrapping_add(black_box(depth))
}

impl Verifier for DeepRecursion {
    fn check(&self, packet: &Packet, _artifacts: &dyn Artifacts) -> Verdict {
        let depth = descend(u64::from(packet.iteration));
        Verdict::complete().with_reason(format!("returned from depth {depth}"))
    }
}

verdict_guest::export!(completion: DeepRecursion);
