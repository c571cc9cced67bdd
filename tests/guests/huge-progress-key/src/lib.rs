//! Hostile guest (progress role): returns a progress key one character over
//! the host's bound.

use verdict_guest::{Artifacts, MAX_PROGRESS_KEY_CHARS, Packet, ProgressKey};

/// The key's length in characters.
pub const KEY_CHARS: usize = MAX_PROGRESS_KEY_CHARS + 1;

/// The progress checker with an oversized key.
#[derive(Debug, Default)]
pub struct HugeProgressKey;

impl ProgressKey for HugeProgressKey {
    fn progress_key(&self, _packet: &Packet, _artifacts: &dyn Artifacts) -> String {
        "k".repeat(KEY_CHARS)
    }
}

verdict_guest::export!(progress: HugeProgressKey);

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_guest::MemoryArtifacts;

    #[test]
    fn key_is_one_char_over_the_bound() {
        let key = HugeProgressKey.progress_key(&Packet::new("e"), &MemoryArtifacts::new());
        assert_eq!(key.chars().count(), 4_001);
    }
}
