//! Reading a file the user named, as the sandbox reads a component: the
//! path is opened without blocking (`O_NONBLOCK`: opening a FIFO with no
//! writer never waits), anything that is not a regular file (a FIFO, a
//! device, a socket, a directory) is refused from `fstat` before any read,
//! and at most the bound plus one byte is ever read. A refusal is quick
//! whatever the path is, so a signal is never kept waiting behind a read.

use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

const MIB: u64 = 1024 * 1024;

/// The largest file of one kind, and what the kind is called in errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// Bytes.
    pub bytes: u64,
    /// What the file is, e.g. "configuration file".
    pub what: &'static str,
}

impl Bound {
    /// `run --config`, `console --config`: 1 MiB.
    pub const CONFIG: Self = Self {
        bytes: MIB,
        what: "configuration file",
    };
    /// The console's `/policy set`: 1 MiB.
    pub const POLICY: Self = Self {
        bytes: MIB,
        what: "policy file",
    };
    /// `check --packet`: the packet bound (1 MiB of JSON).
    pub const PACKET: Self = Self {
        bytes: verdict::MAX_PACKET_BYTES as u64,
        what: "check packet",
    };
    /// The console's `/load` (and what `/save` warns about): 64 MiB.
    pub const CONVERSATION: Self = Self {
        bytes: 64 * MIB,
        what: "saved conversation",
    };
    /// `fake-provider --script`: 16 MiB.
    pub const SCRIPT: Self = Self {
        bytes: 16 * MIB,
        what: "script",
    };

    /// A verifier: the host's load limit (`max_component_bytes`).
    pub fn component() -> Self {
        Self {
            bytes: verdict::LoadLimits::default().max_component_bytes,
            what: "component",
        }
    }
}

/// Why a file was not read; displays as `cannot read PATH: WHY`.
#[derive(Debug, thiserror::Error)]
#[error("cannot read {}: {why}", path.display())]
pub struct FileError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong, without the path.
    pub why: Why,
}

/// What is wrong with a file.
#[derive(Debug)]
pub enum Why {
    /// Not a regular file: what it is instead.
    NotRegular(&'static str),
    /// Larger than the bound (its size, or the bound plus one when it grew
    /// while read).
    TooLarge {
        /// Bytes found.
        size: u64,
        /// The bound.
        bound: Bound,
    },
    /// Not UTF-8 text.
    NotText,
    /// The system refused (missing, denied, …).
    Io(io::Error),
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Why::NotRegular(kind) => write!(f, "not a regular file ({kind})"),
            Why::TooLarge { size, bound } => write!(
                f,
                "over the {} bound of a {} ({size} bytes)",
                human(bound.bytes),
                bound.what
            ),
            Why::NotText => write!(f, "not UTF-8 text"),
            Why::Io(e) => write!(f, "{e}"),
        }
    }
}

/// `1 MiB`, `24 MiB`, or bytes.
fn human(bytes: u64) -> String {
    if bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes}-byte")
    }
}

/// What a non-regular file is.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a file"
}

/// All of the regular file at `path`, of at most `bound` bytes.
pub fn read(path: &Path, bound: Bound) -> Result<Vec<u8>, FileError> {
    read_inner(path, bound).map_err(|why| FileError {
        path: path.to_owned(),
        why,
    })
}

/// [`read`], as UTF-8 text.
pub fn read_text(path: &Path, bound: Bound) -> Result<String, FileError> {
    String::from_utf8(read(path, bound)?).map_err(|_| FileError {
        path: path.to_owned(),
        why: Why::NotText,
    })
}

fn read_inner(path: &Path, bound: Bound) -> Result<Vec<u8>, Why> {
    // Refused from `stat` first: a device is not even opened.
    let meta = std::fs::metadata(path).map_err(Why::Io)?;
    if !meta.is_file() {
        return Err(Why::NotRegular(kind_of(&meta)));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Swapped for a FIFO since the `stat`: the open does not wait.
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path).map_err(Why::Io)?;
    // The file opened, which may not be the one stat-ed.
    let meta = file.metadata().map_err(Why::Io)?;
    if !meta.is_file() {
        return Err(Why::NotRegular(kind_of(&meta)));
    }
    if meta.len() > bound.bytes {
        return Err(Why::TooLarge {
            size: meta.len(),
            bound,
        });
    }
    // It may grow while read: one byte past the bound tells.
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(bound.bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(Why::Io)?;
    let size = bytes.len() as u64;
    if size > bound.bytes {
        return Err(Why::TooLarge { size, bound });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_file_that_fits_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "abc").unwrap();
        let bound = Bound {
            bytes: 3,
            what: "test",
        };
        assert_eq!(read_text(&path, bound).unwrap(), "abc");
        let small = Bound { bytes: 2, ..bound };
        let err = read(&path, small).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot read {}: over the 2-byte bound of a test (3 bytes)",
                path.display()
            )
        );
        std::fs::write(&path, [0xff]).unwrap();
        assert!(matches!(
            read_text(&path, bound).unwrap_err().why,
            Why::NotText
        ));
    }
}
