//! `verdict componentize -o PATH` replaces only a regular file the user
//! may write: a symlink, a read-only file, a FIFO or a directory at PATH is
//! refused (exit 2) and left exactly as it was, and so is what a symlink
//! points to.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::componentize::lean_module;
use crate::support::{self, Running, stderr};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// `verdict componentize MODULE -o output` (as a user whom file
/// permissions bind): exit 2 and one line naming the output.
fn refused(dir: &Path, output: &Path, expected: &str) {
    let module = dir.join("m.wasm");
    if !module.exists() {
        std::fs::copy(lean_module(), &module).unwrap();
    }
    let command = support::unprivileged(
        &[
            "componentize",
            module.to_str().unwrap(),
            "-o",
            output.to_str().unwrap(),
        ],
        &dir.join("cache"),
    );
    let out = Running::spawn(command).output();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{}: {err}", output.display());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&output.display().to_string()), "{err}");
    assert!(err.contains(expected), "{expected:?} in {err}");
    // Nothing left behind beside it either.
    let leftovers: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_symlink_output_is_refused_and_its_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.wasm");
    std::fs::write(&target, b"the target").unwrap();
    let link = dir.path().join("link.wasm");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    refused(dir.path(), &link, "not a regular file");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"the target");
}

#[test]
fn a_read_only_output_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("ro.wasm");
    std::fs::write(&output, b"read only").unwrap();
    support::chmod(&output, 0o444);
    refused(dir.path(), &output, "cannot be written");
    assert_eq!(std::fs::read(&output).unwrap(), b"read only");
}

#[test]
fn a_fifo_or_a_directory_output_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    refused(dir.path(), &fifo, "not a regular file");
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());

    let sub = dir.path().join("out.dir");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("keep"), b"kept").unwrap();
    refused(dir.path(), &sub, "not a regular file");
    assert_eq!(std::fs::read(sub.join("keep")).unwrap(), b"kept");
}
