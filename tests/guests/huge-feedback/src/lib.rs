//! Hostile guest: returns feedback one character over the host's bound.

use verdict_guest::{Artifacts, MAX_FEEDBACK_CHARS, Packet, Verdict, Verifier};

/// The feedback's length in characters.
pub const FEEDBACK_CHARS: usize = MAX_FEEDBACK_CHARS + 1;

/// The checker with oversized feedback.
#[derive(Debug, Default)]
pub struct HugeFeedback;

impl Verifier for HugeFeedback {
    fn check(&self, _packet: &Packet, _artifacts: &dyn Artifacts) -> Verdict {
        Verdict::incomplete("f".repeat(FEEDBACK_CHARS))
    }
}

verdict_guest::export!(completion: HugeFeedback);

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_guest::MemoryArtifacts;

    #[test]
    fn feedback_is_one_char_over_the_bound() {
        let verdict = HugeFeedback.check(&Packet::new("e"), &MemoryArtifacts::new());
        assert!(!verdict.complete);
        assert_eq!(verdict.feedback.map(|f| f.chars().count()), Some(2_001));
    }
}
