//! A small bounded in-process memo, for facts that stay true while their key
//! holds: what a cache file said about a file identity, what the census
//! found in the bytes with a given digest.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Facts this process already established, so that repeating the work
/// (opening and parsing a file, censusing bytes) is not needed. Bounded:
/// cleared when full.
#[derive(Debug)]
pub(crate) struct Remembered<K, V>(Mutex<HashMap<K, V>>);

impl<K, V> Default for Remembered<K, V> {
    fn default() -> Self {
        Self(Mutex::new(HashMap::new()))
    }
}

impl<K: Eq + std::hash::Hash, V: Clone> Remembered<K, V> {
    /// Entries kept before the memo starts over.
    const MAX: usize = 1024;

    pub(crate) fn get<Q: Eq + std::hash::Hash + ?Sized>(&self, key: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
    {
        self.lock().get(key).cloned()
    }

    pub(crate) fn put(&self, key: K, value: V) {
        let mut map = self.lock();
        if map.len() >= Self::MAX {
            map.clear();
        }
        map.insert(key, value);
    }

    pub(crate) fn forget<Q: Eq + std::hash::Hash + ?Sized>(&self, key: &Q)
    where
        K: std::borrow::Borrow<Q>,
    {
        self.lock().remove(key);
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<K, V>> {
        // Every critical section leaves the map consistent.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::Remembered;

    #[test]
    fn remembers_forgets_and_starts_over_when_full() {
        let memo: Remembered<String, u32> = Remembered::default();
        memo.put("a".into(), 1);
        assert_eq!(memo.get("a"), Some(1));
        memo.forget("a");
        assert_eq!(memo.get("a"), None);
        for i in 0..Remembered::<String, u32>::MAX {
            memo.put(i.to_string(), 0);
        }
        assert_eq!(memo.get("0"), Some(0));
        memo.put("over".into(), 2);
        assert_eq!((memo.get("0"), memo.get("over")), (None, Some(2)));
    }
}
