//! The directories a run works in — the tools' workspace and a tenant's
//! artifact root — checked before anything runs: they must exist, be
//! readable (and, for a workspace with `write_artifact`, writable), and be
//! a directory of their own: not the filesystem root, nor a system
//! directory such as `/etc` or `/proc`.

use std::io;
use std::path::{Path, PathBuf};

/// System directories refused as roots (themselves; a directory below
/// them is accepted, except under the pseudo-filesystems).
const SYSTEM: &[&str] = &[
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/proc", "/root", "/run", "/sbin",
    "/sys", "/usr", "/var",
];
/// Pseudo-filesystems: nothing below them is a workspace either.
const PSEUDO: &[&str] = &["/proc", "/sys", "/dev"];

/// Why a directory cannot be a root.
#[derive(Debug, thiserror::Error)]
pub enum RootError {
    /// Nothing is there.
    #[error("{0} does not exist")]
    NotFound(PathBuf),
    /// It is there but this user may not read (or enter) it.
    #[error("{0}: permission denied (the directory must be readable)")]
    Unreadable(PathBuf),
    /// It is there but this user may not create files in it.
    #[error("{0}: permission denied (write_artifact needs a writable directory)")]
    Unwritable(PathBuf),
    /// It is a file, not a directory.
    #[error("{0} is not a directory")]
    NotADirectory(PathBuf),
    /// It is `/` or a system directory.
    #[error(
        "{0} is {1}: use a directory of its own (e.g. a project folder) as a workspace or artifact root"
    )]
    System(PathBuf, &'static str),
    /// Another IO failure.
    #[error("cannot open {0}: {1}")]
    Io(PathBuf, io::Error),
}

fn classify(path: &Path, error: io::Error) -> RootError {
    match error.kind() {
        io::ErrorKind::NotFound => RootError::NotFound(path.to_owned()),
        io::ErrorKind::PermissionDenied => RootError::Unreadable(path.to_owned()),
        io::ErrorKind::NotADirectory => RootError::NotADirectory(path.to_owned()),
        _ => RootError::Io(path.to_owned(), error),
    }
}

/// Checks `dir` (see the module doc); `writable` also requires that a file
/// can be created in it (probed with an unnamed temporary file). Returns
/// the canonical path.
pub fn check(dir: &Path, writable: bool) -> Result<PathBuf, RootError> {
    let meta = std::fs::metadata(dir).map_err(|e| classify(dir, e))?;
    if !meta.is_dir() {
        return Err(RootError::NotADirectory(dir.to_owned()));
    }
    let real = dir.canonicalize().map_err(|e| classify(dir, e))?;
    if real.parent().is_none() {
        return Err(RootError::System(dir.to_owned(), "the filesystem root"));
    }
    let system =
        SYSTEM.iter().any(|s| real == Path::new(s)) || PSEUDO.iter().any(|s| real.starts_with(s));
    if system {
        return Err(RootError::System(dir.to_owned(), "a system directory"));
    }
    // Listing needs read permission; `dir/.` needs search permission.
    std::fs::read_dir(&real).map_err(|e| classify(dir, e))?;
    std::fs::metadata(real.join(".")).map_err(|e| classify(dir, e))?;
    if writable {
        tempfile::tempfile_in(&real).map_err(|e| match e.kind() {
            io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                RootError::Unwritable(dir.to_owned())
            }
            _ => RootError::Io(dir.to_owned(), e),
        })?;
    }
    Ok(real)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_plain_directory_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let real = check(dir.path(), true).unwrap();
        assert_eq!(real, dir.path().canonicalize().unwrap());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "no probe left"
        );
    }

    #[test]
    fn missing_files_and_system_directories_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert!(matches!(
            check(&dir.path().join("nope"), false),
            Err(RootError::NotFound(_))
        ));
        assert!(matches!(
            check(&file, false),
            Err(RootError::NotADirectory(_))
        ));
        #[cfg(unix)]
        {
            let root = check(Path::new("/"), false).unwrap_err();
            assert_eq!(
                root.to_string(),
                "/ is the filesystem root: use a directory of its own (e.g. a project folder) as a workspace or artifact root"
            );
            // However it is spelled.
            let up = dir.path().join("../../../../../../../../../../..");
            assert!(matches!(
                check(&up, false),
                Err(RootError::System(_, "the filesystem root"))
            ));
            assert!(matches!(
                check(Path::new("/etc"), false),
                Err(RootError::System(_, _))
            ));
            assert!(matches!(
                check(Path::new("/proc/self"), false),
                Err(RootError::System(_, _))
            ));
        }
    }
}
