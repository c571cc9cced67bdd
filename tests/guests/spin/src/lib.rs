//! Hostile guest: `check` loops forever without calling the host, so only
//! the deadline (epochs), fuel or cancellation can stop it.

use std::hint::black_box;
use verdict_guest::{Artifacts, Packet, Verdict, Verifier};

/// The spinning checker.
#[derive(Debug, Default)]
pub struct Spin;

impl Verifier for Spin {
    fn check(&self, packet: &Packet, _artifacts: &dyn Artifacts) -> Verdict {
        let mut counter = u64::from(packet.iteration);
        loop {
            counter = black_box(counter.wrapping_add(1));
        }
    }
}

verdict_guest::export!(completion: Spin);
