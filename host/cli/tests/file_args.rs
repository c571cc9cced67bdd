//! Every file the binary reads is a regular file read through a bound:
//! `run --config`, `check --packet`, `check --verifier`, `fake-provider
//! --script` and the console's `/load` and `/policy set` each refuse a
//! device (`/dev/zero`), a FIFO with no writer, a directory and a regular
//! file over the bound up front, quickly, in one line that names the file
//! (a hang or a read of all of `/dev/zero` fails the test at the bound).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use support::{Running, Setup, base_config};

const MIB: u64 = 1024 * 1024;

/// What each kind of bad file is refused with.
const NOT_REGULAR: &str = "not a regular file";
const OVER: &str = "over the";

/// A FIFO nobody writes to, a directory and a sparse regular file of
/// `over` bytes in `setup`, with `/dev/zero`: (path, what the refusal says).
fn bad_files(setup: &Setup, name: &str, over: u64) -> Vec<(PathBuf, &'static str)> {
    let fifo = setup.path(&format!("{name}.fifo"));
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let dir = setup.path(&format!("{name}.dir"));
    std::fs::create_dir(&dir).unwrap();
    let big = setup.path(name);
    std::fs::File::create(&big).unwrap().set_len(over).unwrap();
    vec![
        (PathBuf::from("/dev/zero"), NOT_REGULAR),
        (fifo, NOT_REGULAR),
        (dir, NOT_REGULAR),
        (big, OVER),
    ]
}

/// Exit 2 and one `error:` line naming `path` and saying `expected`.
fn refused(what: &str, output: &std::process::Output, path: &Path, expected: &str) {
    let err = support::stderr(output);
    assert_eq!(output.status.code(), Some(2), "{what} {path:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{what} {path:?}: one line: {err}");
    assert!(err.starts_with("error: "), "{what}: {err}");
    assert!(
        err.contains(&path.display().to_string()),
        "{what}: names the file: {err}"
    );
    assert!(err.contains(expected), "{what}: {expected:?} in {err}");
}

#[test]
fn run_refuses_a_config_that_is_not_a_regular_file_within_its_bound() {
    let setup = Setup::new();
    for (path, expected) in bad_files(&setup, "verdict.toml", MIB + 1) {
        let output = support::verdict(
            &["run", "--config", path.to_str().unwrap(), "Do it."],
            &setup.path("cache"),
        );
        refused("run --config", &output, &path, expected);
    }
}

#[test]
fn check_refuses_a_packet_that_is_not_a_regular_file_within_its_bound() {
    let setup = Setup::new();
    let bound = verdict::MAX_PACKET_BYTES as u64;
    for (path, expected) in bad_files(&setup, "packet.json", bound + 1) {
        let output = support::verdict(
            &[
                "check",
                "--verifier",
                "builtin:artifact-ready",
                "--packet",
                path.to_str().unwrap(),
            ],
            &setup.path("cache"),
        );
        refused("check --packet", &output, &path, expected);
    }
}

#[test]
fn check_refuses_a_verifier_that_is_not_a_regular_file_within_its_bound() {
    let setup = Setup::new();
    let bound = verdict::LoadLimits::default().max_component_bytes;
    let packet = support::examples().join("packets/ready.json");
    for (path, expected) in bad_files(&setup, "v.wasm", bound + 1) {
        let output = support::verdict(
            &[
                "check",
                "--verifier",
                path.to_str().unwrap(),
                "--packet",
                packet.to_str().unwrap(),
            ],
            &setup.path("cache"),
        );
        refused("check --verifier", &output, &path, expected);
    }
}

#[test]
fn fake_provider_refuses_a_script_that_is_not_a_regular_file_within_its_bound() {
    let setup = Setup::new();
    for (path, expected) in bad_files(&setup, "script.json", 16 * MIB + 1) {
        let output = support::verdict(
            &["fake-provider", "--script", path.to_str().unwrap()],
            &setup.path("cache"),
        );
        refused("fake-provider --script", &output, &path, expected);
    }
}

/// The console's stdout after `lines` on a pipe, then `/quit` (exit 0).
fn console(setup: &Setup, lines: &str) -> String {
    let config = setup.write("verdict.toml", &base_config("http://127.0.0.1:9", 6));
    let mut command = support::command(
        &["console", "--config", config.to_str().unwrap()],
        &setup.path("cache"),
    );
    command.stdin(Stdio::piped());
    let mut running = Running::spawn(command);
    let mut stdin = running.take_stdin();
    writeln!(stdin, "{lines}/quit").unwrap();
    drop(stdin);
    let (code, out, err) = running.finish();
    assert_eq!(code, Some(0), "{out}\n{err}");
    out
}

#[test]
fn the_console_refuses_a_conversation_that_is_not_a_regular_file_within_its_bound() {
    let setup = Setup::new();
    let bad = bad_files(&setup, "conversation.json", 64 * MIB + 1);
    let lines: String = bad
        .iter()
        .map(|(path, _)| format!("/load {}\n", path.display()))
        .collect();
    let out = console(&setup, &lines);
    for (path, expected) in &bad {
        let line = format!("error: cannot read {}: {expected}", path.display());
        assert!(out.contains(&line), "{line:?} in:\n{out}");
    }
}

#[test]
fn the_console_refuses_a_policy_that_is_not_a_regular_file_within_its_bound() {
    let setup = Setup::new();
    let bad = bad_files(&setup, "policy.json", MIB + 1);
    let lines: String = bad
        .iter()
        .map(|(path, _)| format!("/policy set {}\n", path.display()))
        .collect();
    let out = console(&setup, &lines);
    for (path, expected) in &bad {
        let line = format!("error: cannot read {}: {expected}", path.display());
        assert!(out.contains(&line), "{line:?} in:\n{out}");
    }
}

/// A missing file is named, in the words of the system ("No such file or
/// directory"), not Rust's `ErrorKind` ("entity not found").
#[test]
fn a_missing_file_is_named_in_plain_words() {
    let setup = Setup::new();
    let missing = setup.path("missing.wasm");
    let packet = support::examples().join("packets/ready.json");
    for args in [
        vec!["inspect", missing.to_str().unwrap()],
        vec!["componentize", missing.to_str().unwrap()],
        vec![
            "check",
            "--verifier",
            missing.to_str().unwrap(),
            "--packet",
            packet.to_str().unwrap(),
        ],
    ] {
        let output = support::verdict(&args, &setup.path("cache"));
        refused(args[0], &output, &missing, "No such file or directory");
        assert!(
            !support::stderr(&output).contains("entity not found"),
            "{}",
            support::stderr(&output)
        );
    }
}
