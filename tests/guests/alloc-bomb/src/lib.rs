//! Hostile guest: `check` keeps allocating 1 MiB blocks and touching every
//! page of them, so the host's memory cap must refuse the growth.

use std::hint::black_box;
use verdict_guest::{Artifacts, Packet, Verdict, Verifier};

/// Size of each allocation.
pub const BLOCK_BYTES: usize = 1 << 20;
const PAGE_BYTES: usize = 4096;

/// The allocating checker.
#[derive(Debug, Default)]
pub struct AllocBomb;

impl Verifier for AllocBomb {
    fn check(&self, packet: &Packet, _artifacts: &dyn Artifacts) -> Verdict {
        let mut blocks: Vec<Vec<u8>> = Vec::new();
        loop {
            let mut block = vec![0_u8; BLOCK_BYTES];
            for byte in block.iter_mut().step_by(PAGE_BYTES) {
                *byte = packet.iteration.to_le_bytes()[0].wrapping_add(1);
            }
            blocks.push(black_box(block));
        }
    }
}

verdict_guest::export!(completion: AllocBomb);
