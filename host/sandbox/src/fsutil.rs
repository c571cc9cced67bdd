//! Reading a file that the host must never block on: regular files only,
//! with a size bound.
//!
//! Callers open with `O_NONBLOCK` (opening a FIFO for reading otherwise
//! waits for a writer, forever); this then refuses anything that is not a
//! regular file (FIFOs, character and block devices, sockets, directories)
//! from `fstat` on the open descriptor, before any read.

use std::io::{self, Read};

/// Why a file was not read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// Not a regular file.
    NotRegular,
    /// Larger than the bound (its size, or the bound plus one when it grew).
    TooLarge(u64),
    /// Reading failed.
    Io(io::Error),
}

/// Reads all of `file`, a regular file of at most `max_bytes`.
pub(crate) fn read_regular(file: std::fs::File, max_bytes: u64) -> Result<Vec<u8>, ReadError> {
    read_regular_identified(file, max_bytes).map(|(bytes, _)| bytes)
}

/// [`read_regular`], with the file's identity as `fstat` gave it before
/// the read (none where the platform has no inodes).
pub(crate) fn read_regular_identified(
    file: std::fs::File,
    max_bytes: u64,
) -> Result<(Vec<u8>, Option<FileIdentity>), ReadError> {
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular);
    }
    if meta.len() > max_bytes {
        return Err(ReadError::TooLarge(meta.len()));
    }
    // The file may grow between `fstat` and the read: read at most one byte
    // past the bound so growth is detected without an unbounded read.
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    let size = bytes.len() as u64;
    if size > max_bytes {
        return Err(ReadError::TooLarge(size));
    }
    Ok((bytes, FileIdentity::of_metadata(&meta)))
}

/// `O_NONBLOCK` where it exists (opening never waits), else no flags.
pub(crate) const fn nonblocking_flag() -> i32 {
    #[cfg(unix)]
    {
        libc::O_NONBLOCK
    }
    #[cfg(not(unix))]
    {
        0
    }
}

/// True when opening failed because the path is a socket or a device
/// without a driver (`ENXIO`): not an artifact, rather than a denial.
pub(crate) fn is_not_openable(err: &io::Error) -> bool {
    #[cfg(unix)]
    {
        err.raw_os_error() == Some(libc::ENXIO)
    }
    #[cfg(not(unix))]
    {
        let _ = err;
        false
    }
}

/// What identifies one version of a file's contents: device, inode, size,
/// modification and status-change times (nanoseconds). Any write changes
/// the status-change time, which a user cannot set back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FileIdentity(pub(crate) [u64; 7]);

impl FileIdentity {
    /// From the fields of a `stat`: device, inode, size, then the
    /// modification and status-change times as seconds and nanoseconds.
    pub(crate) fn from_stat(dev: u64, ino: u64, size: u64, times: [i64; 4]) -> Self {
        let signed = |v: i64| v as u64;
        Self([
            dev,
            ino,
            size,
            signed(times[0]),
            signed(times[1]),
            signed(times[2]),
            signed(times[3]),
        ])
    }

    /// True when the status-change time is before `when`.
    pub(crate) fn changed_before(&self, when: std::time::SystemTime) -> bool {
        let Ok(limit) = when.duration_since(std::time::UNIX_EPOCH) else {
            return false;
        };
        let (secs, nanos) = (self.0[5] as i64, self.0[6] as i64);
        let limit_secs = i64::try_from(limit.as_secs()).unwrap_or(i64::MAX);
        (secs, nanos) < (limit_secs, i64::from(limit.subsec_nanos()))
    }

    /// The identity in `m` (none where the platform gives no inode).
    pub(crate) fn of_metadata(m: &std::fs::Metadata) -> Option<Self> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(Self::from_stat(
                m.dev(),
                m.ino(),
                m.size(),
                [m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec()],
            ))
        }
        #[cfg(not(unix))]
        {
            let _ = m;
            None
        }
    }

    /// The identity of the regular file at `path` (symlinks followed);
    /// `None` for anything else, or where the platform gives no inode.
    pub(crate) fn of(path: &std::path::Path) -> Option<Self> {
        let m = std::fs::metadata(path).ok()?;
        if !m.is_file() {
            return None;
        }
        Self::of_metadata(&m)
    }
}
