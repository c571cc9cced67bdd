//! The local content-addressed store of pulled components, under
//! `CACHE/oci/`: `blobs/sha256/HEX` (layers), `manifests/sha256/HEX` and
//! `tags/HEX` (the digest a tag last resolved to, keyed by the SHA-256 of
//! `HOST/REPO:TAG`). Every file is written to a temporary file in the same
//! directory, synced and renamed into place: no reader ever sees a partial
//! file, and an interrupted pull leaves none behind. Content is verified
//! against its digest when read.

use crate::error::RegistryError;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `sha256:HEX` of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The store under one cache directory.
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RegistryError + '_ {
    move |source| RegistryError::Cache {
        path: path.to_owned(),
        source,
    }
}

impl Cache {
    /// The store in `cache_dir/oci` (created when first written).
    pub fn new(cache_dir: &Path) -> Self {
        Self {
            root: cache_dir.join("oci"),
        }
    }

    /// Its directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn by_digest(&self, kind: &str, digest: &str) -> Option<PathBuf> {
        let hex = digest.strip_prefix("sha256:")?;
        crate::reference::check_digest(digest)
            .then(|| self.root.join(kind).join("sha256").join(hex))
    }

    fn tag_path(&self, registry: &str, repository: &str, tag: &str) -> PathBuf {
        let key = hex::encode(Sha256::digest(format!("{registry}/{repository}:{tag}")));
        self.root.join("tags").join(key)
    }

    /// Content stored under `digest` in `kind`, if present and intact (a
    /// file that does not hash to its name is removed and not returned).
    fn read_verified(
        &self,
        kind: &str,
        digest: &str,
        max: u64,
    ) -> Result<Option<Vec<u8>>, RegistryError> {
        let Some(path) = self.by_digest(kind, digest) else {
            return Ok(None);
        };
        let bytes = match std::fs::metadata(&path) {
            Ok(meta) if meta.is_file() && meta.len() <= max => {
                std::fs::read(&path).map_err(io(&path))?
            }
            Ok(_) => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(&path)(e)),
        };
        if sha256(&bytes) != digest {
            tracing::warn!(path = %path.display(), "removing a corrupt cache entry");
            let _ = std::fs::remove_file(&path);
            return Ok(None);
        }
        Ok(Some(bytes))
    }

    /// A cached layer.
    pub fn blob(&self, digest: &str, max: u64) -> Result<Option<Vec<u8>>, RegistryError> {
        self.read_verified("blobs", digest, max)
    }

    /// A cached manifest.
    pub fn manifest(&self, digest: &str) -> Result<Option<Vec<u8>>, RegistryError> {
        self.read_verified("manifests", digest, crate::settings::MAX_MANIFEST_BYTES)
    }

    /// The digest `HOST/REPO:TAG` last resolved to.
    pub fn tag(
        &self,
        registry: &str,
        repository: &str,
        tag: &str,
    ) -> Result<Option<String>, RegistryError> {
        let path = self.tag_path(registry, repository, tag);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let digest = text.trim();
                Ok(crate::reference::check_digest(digest).then(|| digest.to_owned()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(&path)(e)),
        }
    }

    /// Stores a verified layer.
    pub fn put_blob(&self, digest: &str, bytes: &[u8]) -> Result<(), RegistryError> {
        self.put_by_digest("blobs", digest, bytes)
    }

    /// Stores a verified manifest.
    pub fn put_manifest(&self, digest: &str, bytes: &[u8]) -> Result<(), RegistryError> {
        self.put_by_digest("manifests", digest, bytes)
    }

    /// Records what a tag resolved to.
    pub fn put_tag(
        &self,
        registry: &str,
        repository: &str,
        tag: &str,
        digest: &str,
    ) -> Result<(), RegistryError> {
        write_atomic(
            &self.tag_path(registry, repository, tag),
            format!("{digest}\n").as_bytes(),
        )
    }

    fn put_by_digest(&self, kind: &str, digest: &str, bytes: &[u8]) -> Result<(), RegistryError> {
        let Some(path) = self.by_digest(kind, digest) else {
            return Ok(());
        };
        if sha256(bytes) != digest {
            // Never store content under a name it does not hash to.
            return Ok(());
        }
        if path.is_file() {
            return Ok(());
        }
        write_atomic(&path, bytes)
    }
}

/// Writes `bytes` to `path`: a temporary file in its directory, synced,
/// renamed over `path`, and the directory synced.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RegistryError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    // Private, as the compile cache beside it.
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(io(dir))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".partial-")
        .tempfile_in(dir)
        .map_err(io(dir))?;
    tmp.write_all(bytes).map_err(io(tmp.path()))?;
    tmp.as_file().sync_all().map_err(io(path))?;
    tmp.persist(path).map_err(|e| io(path)(e.error))?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn entries_round_trip_and_corrupt_ones_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let bytes = b"\0asm component".to_vec();
        let digest = sha256(&bytes);
        assert_eq!(cache.blob(&digest, 1 << 20).unwrap(), None);
        cache.put_blob(&digest, &bytes).unwrap();
        assert_eq!(cache.blob(&digest, 1 << 20).unwrap(), Some(bytes.clone()));
        // Over the bound: not returned.
        assert_eq!(cache.blob(&digest, 3).unwrap(), None);
        // Content under a wrong name is never stored.
        let other = sha256(b"other");
        cache.put_blob(&other, &bytes).unwrap();
        assert_eq!(cache.blob(&other, 1 << 20).unwrap(), None);
        // A corrupted entry is removed, not served.
        let path = cache.by_digest("blobs", &digest).unwrap();
        std::fs::write(&path, b"tampered").unwrap();
        assert_eq!(cache.blob(&digest, 1 << 20).unwrap(), None);
        assert!(!path.exists());
        cache.put_tag("h:1", "a/b", "v1", &digest).unwrap();
        assert_eq!(cache.tag("h:1", "a/b", "v1").unwrap(), Some(digest));
        assert_eq!(cache.tag("h:1", "a/b", "v2").unwrap(), None);
        // No temporary file is left beside the entries.
        let leftovers: Vec<_> = walk(cache.root())
            .into_iter()
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(".partial-")
            })
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
        out
    }
}
