//! The content keys (BLAKE3, see `index.rs`) of component bytes this host
//! loaded, each kept with a copy of its bytes: bytes loaded again are found
//! by a fast non-cryptographic hash (XXH3-128) and then compared byte for
//! byte, so their key is not computed again (the 126 KB Rust sample on a
//! 2-core VM: XXH3 4 µs and the comparison 3 µs, against 40 µs of BLAKE3).
//!
//! Equality, not the hash, vouches for the key: bytes that merely share an
//! XXH3 value with remembered ones (by chance or crafted) are hashed with
//! BLAKE3 as if nothing were remembered. The copies are bounded by a byte
//! budget ([`HostConfig::content_memo_bytes`]); a component larger than a
//! quarter of it is never copied, and is hashed with BLAKE3 at every load.
//!
//! [`HostConfig::content_memo_bytes`]: crate::HostConfig::content_memo_bytes

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use twox_hash::XxHash3_128;

/// Remembered content keys, by the XXH3-128 of their bytes.
#[derive(Debug)]
pub(crate) struct ContentKeys {
    /// Most bytes kept in copies at once.
    budget: usize,
    state: Mutex<Copies>,
}

#[derive(Debug, Default)]
struct Copies {
    by_quick: HashMap<u128, (Arc<[u8]>, blake3::Hash)>,
    /// Bytes held by `by_quick`.
    held: usize,
}

/// The content key of some bytes, as [`ContentKeys::key`] found it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Keyed {
    /// BLAKE3 of the bytes.
    pub(crate) hash: blake3::Hash,
    /// XXH3-128 of the bytes, when they are small enough to remember.
    quick: Option<u128>,
    /// Found among the remembered bytes (not hashed with BLAKE3 now).
    pub(crate) remembered: bool,
}

impl ContentKeys {
    /// Keeps copies of at most `budget` bytes (0: none).
    pub(crate) fn new(budget: u64) -> Self {
        Self {
            budget: usize::try_from(budget).unwrap_or(usize::MAX),
            state: Mutex::default(),
        }
    }

    /// Whether bytes of `len` may be copied.
    fn fits(&self, len: usize) -> bool {
        len > 0 && len <= self.budget / 4
    }

    /// The content key of `bytes`: remembered ones are found by comparison,
    /// others hashed.
    pub(crate) fn key(&self, bytes: &[u8]) -> Keyed {
        if !self.fits(bytes.len()) {
            return Keyed {
                hash: blake3::hash(bytes),
                quick: None,
                remembered: false,
            };
        }
        let quick = XxHash3_128::oneshot(bytes);
        let found = self.lock().by_quick.get(&quick).cloned();
        // Compared outside the lock: other loads need not wait for it.
        if let Some((copy, hash)) = found
            && *copy == *bytes
        {
            return Keyed {
                hash,
                quick: Some(quick),
                remembered: true,
            };
        }
        Keyed {
            hash: blake3::hash(bytes),
            quick: Some(quick),
            remembered: false,
        }
    }

    /// Remembers `bytes` with the key [`ContentKeys::key`] gave them (for
    /// bytes that loaded), making room within the budget.
    pub(crate) fn remember(&self, bytes: &[u8], keyed: &Keyed) {
        let Some(quick) = keyed.quick else { return };
        if keyed.remembered {
            return;
        }
        let mut copies = self.lock();
        if let Some((old, _)) = copies.by_quick.remove(&quick) {
            copies.held -= old.len();
        }
        while copies.held + bytes.len() > self.budget {
            let Some(&victim) = copies.by_quick.keys().next() else {
                break;
            };
            if let Some((old, _)) = copies.by_quick.remove(&victim) {
                copies.held -= old.len();
            }
        }
        copies.held += bytes.len();
        copies
            .by_quick
            .insert(quick, (Arc::from(bytes), keyed.hash));
    }

    fn lock(&self) -> MutexGuard<'_, Copies> {
        // Every critical section leaves the map and its count consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_bytes_get_the_key_they_had_without_hashing() {
        let keys = ContentKeys::new(1 << 20);
        let bytes = vec![7u8; 1000];
        let first = keys.key(&bytes);
        assert_eq!(
            (first.hash, first.remembered),
            (blake3::hash(&bytes), false)
        );
        keys.remember(&bytes, &first);
        let again = keys.key(&bytes.clone());
        assert_eq!((again.hash, again.remembered), (first.hash, true));
    }

    #[test]
    fn other_bytes_of_the_same_quick_hash_are_hashed_not_taken() {
        let keys = ContentKeys::new(1 << 20);
        let (mine, theirs) = (b"the bytes loaded".to_vec(), b"other bytes".to_vec());
        // A remembered entry filed under `theirs`'s XXH3 holding other bytes:
        // what a collision would look like.
        let forged = Keyed {
            hash: blake3::hash(&mine),
            quick: Some(XxHash3_128::oneshot(&theirs)),
            remembered: false,
        };
        keys.remember(&mine, &forged);
        let keyed = keys.key(&theirs);
        assert_eq!(
            (keyed.hash, keyed.remembered),
            (blake3::hash(&theirs), false)
        );
    }

    #[test]
    fn copies_stay_within_the_budget_and_large_bytes_are_not_copied() {
        let keys = ContentKeys::new(4000);
        for i in 0..20u8 {
            let bytes = vec![i; 900];
            let keyed = keys.key(&bytes);
            keys.remember(&bytes, &keyed);
            assert!(keys.lock().held <= 4000);
        }
        let last = vec![19u8; 900];
        assert!(keys.key(&last).remembered, "the newest entry is kept");
        let large = vec![1u8; 1001];
        let keyed = keys.key(&large);
        keys.remember(&large, &keyed);
        assert!(!keys.key(&large).remembered);
        let none = ContentKeys::new(0);
        let keyed = none.key(&last);
        none.remember(&last, &keyed);
        assert!(!none.key(&last).remembered);
        assert_eq!(none.key(&last).hash, blake3::hash(&last));
    }
}
