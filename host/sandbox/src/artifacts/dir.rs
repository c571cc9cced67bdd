//! A directory artifact store: one root directory per tenant.
//!
//! Paths are resolved with `cap-std`, which confines every lookup to the root
//! (including through symlinks), after [`validate_artifact_id`] has refused absolute
//! paths and `..` segments with a clear `Denied`.
//!
//! Only regular files are artifacts. A file is opened without blocking
//! (`O_NONBLOCK`) and checked on the open descriptor, so a FIFO, a socket,
//! a character or block device, or a directory is `NotFound` and never
//! waited on.
//!
//! Small files that have not changed for a while are served from memory
//! after one `lstat` ([`super::cache`]).

use super::cache::ArtifactCache;
use super::{ArtifactData, ArtifactError, ArtifactStore, validate_artifact_id, validate_prefix};
use crate::fsutil::{self, FileIdentity, ReadError};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};
use sha2::{Digest, Sha256};
use std::io;
use std::path::Path;

/// Deepest directory nesting `list` descends into.
const MAX_LIST_DEPTH: usize = 16;
/// Most directory entries `list` examines, whatever it returns.
const MAX_LIST_VISITS: usize = 100_000;

/// Artifacts stored as files below one root directory.
#[derive(Debug)]
pub struct DirStore {
    root: Dir,
    cache: ArtifactCache,
}

impl DirStore {
    /// Opens `root` as a tenant's artifact root.
    pub fn open(root: impl AsRef<Path>) -> io::Result<Self> {
        let root = Dir::open_ambient_dir(root.as_ref(), ambient_authority())?;
        Ok(Self {
            root,
            cache: ArtifactCache::default(),
        })
    }
}

impl DirStore {
    /// The identity of the regular file at `id` itself (no symlink at its
    /// end), resolved inside the root.
    fn identity_at(&self, id: &str) -> Option<FileIdentity> {
        use cap_std::fs::MetadataExt;
        let m = self.root.symlink_metadata(id).ok()?;
        m.is_file().then(|| {
            FileIdentity::from_stat(
                m.dev(),
                m.ino(),
                m.size(),
                [m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec()],
            )
        })
    }

    /// Reads `id` from its file, with the identity of the file read.
    fn read_file(
        &self,
        id: &str,
        max_bytes: u64,
    ) -> Result<(ArtifactData, Option<FileIdentity>), ArtifactError> {
        let mut options = OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use cap_std::fs::OpenOptionsExt;
            options.custom_flags(fsutil::nonblocking_flag());
        }
        let file = match self.root.open_with(id, &options) {
            Ok(file) => file,
            Err(e) if fsutil::is_not_openable(&e) => return Err(ArtifactError::NotFound),
            Err(e) => return Err(map_io(&e)),
        };
        let (bytes, identity) = fsutil::read_regular_identified(file.into_std(), max_bytes)
            .map_err(|e| match e {
                ReadError::NotRegular => ArtifactError::NotFound,
                ReadError::TooLarge(size) => ArtifactError::TooLarge(size),
                ReadError::Io(e) => map_io(&e),
            })?;
        let size = bytes.len() as u64;
        let revision = hex::encode(&Sha256::digest(&bytes)[..16]);
        let data = ArtifactData {
            id: id.to_owned(),
            revision,
            size,
            bytes,
        };
        Ok((data, identity))
    }
}

fn map_io(err: &io::Error) -> ArtifactError {
    match err.kind() {
        io::ErrorKind::NotFound => ArtifactError::NotFound,
        _ => ArtifactError::Denied,
    }
}

impl ArtifactStore for DirStore {
    fn read(&self, id: &str, max_bytes: u64) -> Result<ArtifactData, ArtifactError> {
        validate_artifact_id(id)?;
        // The path itself, not a symlink's target: only such are cached.
        let at_path = self.identity_at(id);
        if let Some(identity) = at_path
            && let Some(data) = self.cache.get(id, identity)
        {
            return if data.size > max_bytes {
                Err(ArtifactError::TooLarge(data.size))
            } else {
                Ok(data)
            };
        }
        let read = self.read_file(id, max_bytes);
        match (&read, at_path) {
            (Ok((data, Some(read_from))), Some(at_path)) if *read_from == at_path => {
                self.cache.put(at_path, data, std::time::SystemTime::now());
            }
            _ => self.cache.forget(id),
        }
        read.map(|(data, _)| data)
    }

    fn list(&self, prefix: &str, max_entries: usize) -> Result<Vec<String>, ArtifactError> {
        validate_prefix(prefix)?;
        let mut out = Vec::new();
        let mut visits = 0usize;
        walk(&self.root, "", prefix, 0, &mut visits, &mut out);
        out.sort();
        out.truncate(max_entries);
        Ok(out)
    }
}

/// Collects file ids below `dir` (whose id prefix is `base`) that start with
/// `prefix`. Symlinks, non-UTF-8 names and unreadable entries are skipped.
fn walk(
    dir: &Dir,
    base: &str,
    prefix: &str,
    depth: usize,
    visits: &mut usize,
    out: &mut Vec<String>,
) {
    let Ok(entries) = dir.entries() else { return };
    for entry in entries.flatten() {
        *visits += 1;
        if *visits > MAX_LIST_VISITS {
            return;
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let id = if base.is_empty() {
            name.clone()
        } else {
            format!("{base}/{name}")
        };
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_file() {
            if id.starts_with(prefix) {
                out.push(id);
            }
        } else if kind.is_dir() && depth < MAX_LIST_DEPTH {
            // Only descend where the prefix can still match.
            let as_dir = format!("{id}/");
            if (as_dir.starts_with(prefix) || prefix.starts_with(&as_dir))
                && let Ok(sub) = dir.open_dir(&name)
            {
                walk(&sub, &id, prefix, depth + 1, visits, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn store() -> (tempfile::TempDir, tempfile::TempDir, DirStore) {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.json"), b"{\"secret\":1}").unwrap();
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("A42"), b"{\"ready\":true}").unwrap();
        std::fs::create_dir(root.path().join("receipts")).unwrap();
        std::fs::write(root.path().join("receipts/c1.json"), b"{}").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(
                outside.path().join("secret.json"),
                root.path().join("escape"),
            )
            .unwrap();
            std::os::unix::fs::symlink(outside.path(), root.path().join("escape-dir")).unwrap();
        }
        let s = DirStore::open(root.path()).unwrap();
        (outside, root, s)
    }

    #[test]
    fn reads_inside_the_root() {
        let (_o, _r, s) = store();
        let a = s.read("A42", 1024).unwrap();
        assert_eq!(a.bytes, b"{\"ready\":true}");
        assert_eq!(a.size, 14);
        assert_eq!(a.revision.len(), 32);
        assert_eq!(s.read("receipts/c1.json", 1024).unwrap().bytes, b"{}");
        assert_eq!(s.read("A42", 13), Err(ArtifactError::TooLarge(14)));
        assert_eq!(s.read("missing", 10), Err(ArtifactError::NotFound));
        assert_eq!(s.read("receipts", 10), Err(ArtifactError::NotFound));
    }

    /// One wait for [`super::super::cache::SETTLE`], then every way a file
    /// can change under a cached entry.
    #[test]
    fn settled_small_files_are_cached_until_their_file_changes() {
        let (_o, root, s) = store();
        let cached = |id: &str| {
            s.identity_at(id)
                .and_then(|identity| s.cache.get(id, identity))
                .map(|d| d.bytes)
        };
        std::fs::write(root.path().join("big"), vec![b'x'; 70 * 1024]).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("A42", root.path().join("link")).unwrap();
        // Fresh: read, not cached.
        assert_eq!(s.read("A42", 1024).unwrap().bytes, b"{\"ready\":true}");
        assert_eq!(cached("A42"), None);
        std::thread::sleep(super::super::cache::SETTLE + Duration::from_millis(100));
        // Settled: cached, and served within the caller's bound only.
        assert_eq!(s.read("A42", 1024).unwrap().bytes, b"{\"ready\":true}");
        assert_eq!(cached("A42").as_deref(), Some(&b"{\"ready\":true}"[..]));
        assert_eq!(s.read("A42", 13), Err(ArtifactError::TooLarge(14)));
        assert_eq!(s.read("A42", 1024).unwrap().revision.len(), 32);
        // Too large, or reached through a symlink: never cached.
        assert_eq!(s.read("big", 1 << 20).unwrap().size, 70 * 1024);
        assert_eq!(cached("big"), None);
        #[cfg(unix)]
        {
            assert_eq!(s.read("link", 1024).unwrap().bytes, b"{\"ready\":true}");
            assert_eq!(s.cache.get("link", s.identity_at("A42").unwrap()), None);
        }
        // Rewritten in place with as many bytes: the new content at once.
        std::fs::write(root.path().join("A42"), b"{\"ready\":fals}").unwrap();
        assert_eq!(s.read("A42", 1024).unwrap().bytes, b"{\"ready\":fals}");
        // Replaced by a rename: the new file's content.
        std::fs::write(root.path().join("new"), b"{\"ready\":TRUE}").unwrap();
        std::fs::rename(root.path().join("new"), root.path().join("A42")).unwrap();
        assert_eq!(s.read("A42", 1024).unwrap().bytes, b"{\"ready\":TRUE}");
        // Removed: not found, and forgotten.
        std::fs::remove_file(root.path().join("A42")).unwrap();
        assert_eq!(s.read("A42", 1024), Err(ArtifactError::NotFound));
        assert!(s.cache.is_empty_for("A42"));
    }

    #[test]
    fn refuses_escapes() {
        let (outside, _r, s) = store();
        let abs = outside.path().join("secret.json");
        for id in ["../secret.json", abs.to_str().unwrap(), "receipts/../../x"] {
            assert_eq!(s.read(id, 1024), Err(ArtifactError::Denied), "{id}");
        }
        #[cfg(unix)]
        {
            assert_eq!(s.read("escape", 1024), Err(ArtifactError::Denied));
            assert_eq!(
                s.read("escape-dir/secret.json", 1024),
                Err(ArtifactError::Denied)
            );
        }
    }

    #[test]
    fn lists_sorted_and_bounded_without_following_symlinks() {
        let (_o, _r, s) = store();
        assert_eq!(s.list("", 100).unwrap(), vec!["A42", "receipts/c1.json"]);
        assert_eq!(s.list("receipts/", 100).unwrap(), vec!["receipts/c1.json"]);
        assert_eq!(s.list("", 1).unwrap(), vec!["A42"]);
        assert_eq!(s.list("../", 1), Err(ArtifactError::Denied));
    }

    /// A FIFO, a socket and a character device are not artifacts: each is
    /// `NotFound` at once (a FIFO opened for reading would otherwise wait
    /// for a writer forever), and `list` skips them.
    #[cfg(unix)]
    #[test]
    fn special_files_are_not_found_without_blocking() {
        let (_o, root, s) = store();
        let fifo = root.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let _socket = std::os::unix::net::UnixListener::bind(root.path().join("sock")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.path().join("zero")).unwrap();
        assert_eq!(s.read("fifo", 1024), Err(ArtifactError::NotFound));
        assert_eq!(s.read("sock", 1024), Err(ArtifactError::NotFound));
        // A symlink out of the root is denied before its target matters.
        assert_eq!(s.read("zero", 1024), Err(ArtifactError::Denied));
        assert_eq!(s.list("", 100).unwrap(), vec!["A42", "receipts/c1.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn skips_non_utf8_names() {
        use std::os::unix::ffi::OsStrExt;
        let (_o, root, s) = store();
        let name = std::ffi::OsStr::from_bytes(b"bad\xff");
        std::fs::write(root.path().join(name), b"x").unwrap();
        assert_eq!(s.list("", 100).unwrap(), vec!["A42", "receipts/c1.json"]);
    }
}
