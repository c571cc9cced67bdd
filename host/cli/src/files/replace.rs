//! Writing `componentize`'s output: a new file, or the replacement of a
//! regular file the user may write — never of a symlink (nor what it points
//! to), a directory, a FIFO or a device.

use anyhow::{Context, bail};
use std::io::Write as _;
use std::path::Path;

/// Refuses `output` when something other than a regular file the user may
/// write is there; a missing `output` is fine.
pub fn check_replaceable(output: &Path) -> anyhow::Result<()> {
    let shown = output.display();
    let meta = match std::fs::symlink_metadata(output) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot write {shown}")),
    };
    if !meta.file_type().is_file() {
        bail!(
            "{shown} exists and is not a regular file ({}): give another --output",
            what(&meta)
        );
    }
    // Whether this user may write it, as the system decides (a read-only
    // file, another user's): opened for writing, changing nothing.
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Swapped since: neither followed nor waited on.
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    match options.open(output) {
        Ok(file) if file.metadata().is_ok_and(|m| m.is_file()) => Ok(()),
        Ok(_) => bail!("{shown} exists and is not a regular file: give another --output"),
        Err(e) => bail!("{shown} exists and cannot be written ({e}): give another --output"),
    }
}

fn what(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_symlink() {
        return "a symlink";
    }
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a file"
}

/// Writes `bytes` to `output` through a temporary file in its directory,
/// renamed into place (a failed write leaves any earlier file whole), once
/// [`check_replaceable`] holds for `output` — checked before the write and
/// again just before the rename.
pub fn write_replacing(output: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    check_replaceable(output)?;
    let dir = match output.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let context = || format!("cannot write {}", output.display());
    let mut builder = tempfile::Builder::new();
    // A file for others to read, as a compiler's output is (the umask
    // applies), not the temporary file's private mode.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    let mut file = builder.tempfile_in(dir).with_context(context)?;
    file.write_all(bytes).with_context(context)?;
    check_replaceable(output)?;
    file.persist(output)
        .map_err(|e| e.error)
        .with_context(context)?;
    Ok(())
}
