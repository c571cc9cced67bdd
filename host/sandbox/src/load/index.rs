//! The digest index: what admitting a component established (its SHA-256,
//! the verifier's identity, and its [`Footprint`]), recorded under a key a
//! later load computes far more cheaply than it could establish those again,
//! one small file per entry under `<cache_dir>/index/`. Two kinds of key:
//!
//! - a file's identity (device, inode, size and times: [`FileIdentity`]),
//!   for `load_file`: an unchanged file is neither read nor hashed again;
//! - the BLAKE3 hash of the bytes, for `load_bytes` (and a file not seen
//!   before): the same bytes are not hashed with SHA-256 nor parsed again.
//!   BLAKE3 is as collision resistant as SHA-256 (128-bit security), so the
//!   key vouches for the bytes as well as the digest it stands for, and it
//!   is faster (the 116 KB Rust sample on a 2-core VM: SHA-256 80 µs with
//!   the CPU's SHA extensions, BLAKE3 35 µs with AVX2). Bytes this host
//!   loaded before are not hashed again: see `content.rs`.
//!
//! Either key is combined with the load limits the component was admitted
//! under: stricter limits admit it again.
//!
//! An entry says what this host found when it wrote it; like the compile
//! cache's entries, it is trusted as far as the private directory it lives
//! in. An entry that is missing, unreadable or malformed costs the full
//! load (hash, census), never a failure; one that names a digest with no
//! compile-cache entry is the same.

use crate::fsutil::FileIdentity;
use crate::limits::LoadLimits;
use crate::load::cache::{create_private, write_atomic};
use crate::load::census::Footprint;
use crate::load::memo::Remembered;
use std::io;
use std::path::{Path, PathBuf};
use twox_hash::XxHash3_128;

/// What an index entry is recorded under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum IndexKey {
    /// One version of a component file.
    File(FileIdentity),
    /// Component bytes, by their BLAKE3 hash.
    Content(blake3::Hash),
}

impl IndexKey {
    /// The content key of `bytes`.
    #[cfg(test)]
    pub(crate) fn content(bytes: &[u8]) -> Self {
        Self::Content(blake3::hash(bytes))
    }

    /// The entry's file name under `limits`.
    fn name(&self, limits: &LimitsKey) -> String {
        match self {
            // The identity and the limits, hashed (the form earlier
            // versions wrote, so their entries still count).
            Self::File(id) => {
                let key = format!("{:?}|{}", id.0, limits.text);
                format!("{:032x}", XxHash3_128::oneshot(key.as_bytes()))
            }
            // The hash itself, so that the name is as collision resistant as
            // the key; the limits (this host's own settings) hashed beside.
            Self::Content(hash) => format!("b3-{}-{:032x}", hash.to_hex(), limits.hash),
        }
    }
}

/// The load limits an index's entries are recorded under, as their names
/// spell them (worked out once per index).
#[derive(Debug)]
struct LimitsKey {
    text: String,
    hash: u128,
}

impl LimitsKey {
    fn of(limits: &LoadLimits) -> Self {
        let text = format!("{limits:?}");
        let hash = XxHash3_128::oneshot(text.as_bytes());
        Self { text, hash }
    }
}

/// Digests and footprints of components admitted under one host's load
/// limits, by [`IndexKey`].
#[derive(Debug)]
pub(crate) struct DigestIndex {
    dir: PathBuf,
    limits: LimitsKey,
    /// Entries this process read or wrote (the limits are the index's).
    known: Remembered<IndexKey, (String, Footprint)>,
}

impl DigestIndex {
    /// Uses `base/index/`, creating it, for components admitted under
    /// `limits`.
    pub(crate) fn open(base: &Path, limits: &LoadLimits) -> io::Result<Self> {
        let dir = base.join("index");
        create_private(&dir)?;
        Ok(Self {
            dir,
            limits: LimitsKey::of(limits),
            known: Remembered::default(),
        })
    }

    /// The digest and footprint recorded for `key`.
    pub(crate) fn get(&self, key: &IndexKey) -> Option<(String, Footprint)> {
        if let Some(known) = self.known.get(key) {
            return Some(known);
        }
        let entry = read_entry(&self.dir.join(key.name(&self.limits)))?;
        self.known.put(*key, entry.clone());
        Some(entry)
    }

    /// Records `digest` and `footprint` for `key`.
    pub(crate) fn put(
        &self,
        key: &IndexKey,
        digest: &str,
        footprint: &Footprint,
    ) -> io::Result<()> {
        let text = format!(
            "{digest} {} {} {} {}\n",
            footprint.core_instances, footprint.memories, footprint.tables, footprint.code_bytes
        );
        write_atomic(&self.dir, &key.name(&self.limits), &[text.as_bytes()])?;
        self.known.put(*key, (digest.to_owned(), *footprint));
        Ok(())
    }
}

/// An index entry file: the digest and the footprint.
fn read_entry(path: &Path) -> Option<(String, Footprint)> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut fields = text.split_ascii_whitespace();
    let digest = fields.next()?;
    if digest.len() != 64 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut number = || fields.next()?.parse::<u64>().ok();
    let small = |n: u64| u32::try_from(n).ok();
    let footprint = Footprint {
        core_instances: small(number()?)?,
        memories: small(number()?)?,
        tables: small(number()?)?,
        code_bytes: number()?,
    };
    Some((digest.to_owned(), footprint))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn footprint() -> Footprint {
        Footprint {
            core_instances: 3,
            memories: 1,
            tables: 2,
            code_bytes: 4096,
        }
    }

    #[test]
    fn content_entries_are_kept_apart_by_bytes_and_limits() {
        let dir = tempfile::tempdir().unwrap();
        let limits = LoadLimits::default();
        let index = DigestIndex::open(dir.path(), &limits).unwrap();
        let digest = "ab".repeat(32);
        let key = IndexKey::content(b"component one");
        index.put(&key, &digest, &footprint()).unwrap();
        // A new index (another process) reads what this one wrote.
        let again = DigestIndex::open(dir.path(), &limits).unwrap();
        assert_eq!(again.get(&key), Some((digest, footprint())));
        // Other bytes, or stricter limits: nothing recorded.
        assert_eq!(again.get(&IndexKey::content(b"component two")), None);
        let stricter = LoadLimits {
            max_component_bytes: limits.max_component_bytes - 1,
            ..limits
        };
        let strict = DigestIndex::open(dir.path(), &stricter).unwrap();
        assert_eq!(strict.get(&key), None);
    }

    #[test]
    fn a_malformed_entry_is_no_entry() {
        let dir = tempfile::tempdir().unwrap();
        let limits = LoadLimits::default();
        let key = IndexKey::content(b"component");
        let index = DigestIndex::open(dir.path(), &limits).unwrap();
        index.put(&key, &"cd".repeat(32), &footprint()).unwrap();
        let path = dir
            .path()
            .join("index")
            .join(key.name(&LimitsKey::of(&limits)));
        for bad in [
            "",
            "not-a-digest 3 1 2 4096\n",
            &format!("{} 3 1\n", "cd".repeat(32)),
        ] {
            std::fs::write(&path, bad).unwrap();
            let fresh = DigestIndex::open(dir.path(), &limits).unwrap();
            assert_eq!(fresh.get(&key), None, "{bad:?}");
        }
    }
}
