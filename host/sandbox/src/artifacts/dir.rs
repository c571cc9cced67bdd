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

use super::{ArtifactData, ArtifactError, ArtifactStore, validate_artifact_id, validate_prefix};
use crate::fsutil::{self, ReadError};
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
}

impl DirStore {
    /// Opens `root` as a tenant's artifact root.
    pub fn open(root: impl AsRef<Path>) -> io::Result<Self> {
        let root = Dir::open_ambient_dir(root.as_ref(), ambient_authority())?;
        Ok(Self { root })
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
        let bytes = fsutil::read_regular(file.into_std(), max_bytes).map_err(|e| match e {
            ReadError::NotRegular => ArtifactError::NotFound,
            ReadError::TooLarge(size) => ArtifactError::TooLarge(size),
            ReadError::Io(e) => map_io(&e),
        })?;
        let size = bytes.len() as u64;
        let revision = hex::encode(&Sha256::digest(&bytes)[..16]);
        Ok(ArtifactData {
            id: id.to_owned(),
            revision,
            size,
            bytes,
        })
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
