//! A directory store's small artifacts kept in memory between checks.
//!
//! A hit costs one `lstat` of the artifact's path instead of an open, a
//! `fstat`, two reads and a close. An entry is served only while the file
//! at that path is the same inode with the same size and times
//! ([`FileIdentity`]); any write changes the status-change time (ctime),
//! which a user cannot set.
//!
//! A write can leave the ctime unchanged only when it lands in the same
//! clock tick as the one before it (the kernel stamps times from a coarse
//! clock). So, as Git does for its index, a file is cached only once its
//! ctime is [`SETTLE`] in the past: any later write stamps a newer time.
//! Symlinks are never cached: the entry's path must itself be the regular
//! file that was read.

use super::ArtifactData;
use crate::fsutil::FileIdentity;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

/// How long a file must have been left alone before it is cached.
pub(crate) const SETTLE: Duration = Duration::from_secs(2);
/// Largest file cached.
pub(crate) const MAX_ENTRY_BYTES: u64 = 64 * 1024;
/// Most bytes cached per store; past it the cache starts over.
const MAX_TOTAL_BYTES: usize = 8 * 1024 * 1024;

struct Entry {
    identity: FileIdentity,
    data: ArtifactData,
}

/// The cache of one directory store.
#[derive(Default)]
pub(crate) struct ArtifactCache {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<String, Entry>,
    bytes: usize,
}

impl std::fmt::Debug for ArtifactCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArtifactCache").finish_non_exhaustive()
    }
}

impl ArtifactCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Every critical section leaves the map and its byte count agreeing.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The cached contents of `id` if its file is still `identity`.
    pub(crate) fn get(&self, id: &str, identity: FileIdentity) -> Option<ArtifactData> {
        let inner = self.lock();
        let entry = inner.entries.get(id)?;
        (entry.identity == identity).then(|| entry.data.clone())
    }

    /// Keeps `data`, read from a file that was `identity`, when the file is
    /// small and settled (see the module docs); `now` is the wall clock.
    pub(crate) fn put(&self, identity: FileIdentity, data: &ArtifactData, now: SystemTime) {
        if data.size > MAX_ENTRY_BYTES || !identity.changed_before(now - SETTLE) {
            return;
        }
        let mut inner = self.lock();
        let size = data.bytes.len() + data.id.len() + data.revision.len();
        if inner.bytes + size > MAX_TOTAL_BYTES {
            inner.entries.clear();
            inner.bytes = 0;
        }
        let entry = Entry {
            identity,
            data: data.clone(),
        };
        if let Some(old) = inner.entries.insert(data.id.clone(), entry) {
            inner.bytes -= old.data.bytes.len() + old.data.id.len() + old.data.revision.len();
        }
        inner.bytes += size;
    }

    /// Forgets `id` (its file is gone or no longer a regular file).
    pub(crate) fn forget(&self, id: &str) {
        let mut inner = self.lock();
        if let Some(old) = inner.entries.remove(id) {
            inner.bytes -= old.data.bytes.len() + old.data.id.len() + old.data.revision.len();
        }
    }
}

#[cfg(test)]
impl ArtifactCache {
    /// True when nothing is cached for `id`.
    pub(crate) fn is_empty_for(&self, id: &str) -> bool {
        !self.lock().entries.contains_key(id)
    }
}
