//! Hostile guest: returns a reason one character over the host's bound.

use verdict_guest::{Artifacts, MAX_REASON_CHARS, Packet, Verdict, Verifier};

/// The reason's length in characters.
pub const REASON_CHARS: usize = MAX_REASON_CHARS + 1;

/// The checker with an oversized reason.
#[derive(Debug, Default)]
pub struct HugeReason;

impl Verifier for HugeReason {
    fn check(&self, _packet: &Packet, _artifacts: &dyn Artifacts) -> Verdict {
        Verdict::complete().with_reason("r".repeat(REASON_CHARS))
    }
}

verdict_guest::export!(completion: HugeReason);

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_guest::MemoryArtifacts;

    #[test]
    fn reason_is_one_char_over_the_bound() {
        let verdict = HugeReason.check(&Packet::new("e"), &MemoryArtifacts::new());
        assert_eq!(verdict.reason.map(|r| r.chars().count()), Some(401));
    }
}
