//! `verdict new-verifier`: each language's project, scaffolded into an
//! empty temporary directory, builds into a component that passes its own
//! test and `verdict check` as generated. The Rust one always runs (its
//! build reuses `target/new-verifier/`); the Python and JavaScript ones
//! need the pinned toolchains in `$VERDICT_TOOLS_DIR`
//! (`sample-verifiers/polyglot/install-tools.sh`) and are ignored unless
//! asked for (`.ci/run` does).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn scaffold(lang: &str, dir: &Path) -> std::process::Output {
    support::verdict(
        &["new-verifier", "--lang", lang, dir.to_str().unwrap()],
        &dir.with_extension("cache"),
    )
}

fn run(dir: &Path, program: impl AsRef<std::ffi::OsStr>, args: &[&str], env: &[(&str, &Path)]) {
    let mut command = Command::new(program.as_ref());
    command.args(args).current_dir(dir);
    for (key, value) in env {
        command.env(key, value);
    }
    // The outer cargo's settings must not leak into a nested build.
    for key in [
        "CARGO_TARGET_DIR",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
    ] {
        if !env.iter().any(|(k, _)| *k == key) {
            command.env_remove(key);
        }
    }
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{:?} {args:?} in {}:\n{}\n{}",
        program.as_ref(),
        dir.display(),
        support::stdout(&output),
        support::stderr(&output)
    );
}

/// `verdict check` of `wasm` on a packet, with `status.json` saying
/// `"done": done`: the verdict's `complete`.
fn checks_complete(wasm: &Path, done: bool) -> bool {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("artifacts")).unwrap();
    std::fs::write(
        dir.path().join("artifacts/status.json"),
        format!("{{\"done\": {done}}}"),
    )
    .unwrap();
    let packet = support::examples().join("packets/premature.json");
    let output = support::verdict(
        &[
            "check",
            "--verifier",
            wasm.to_str().unwrap(),
            "--packet",
            packet.to_str().unwrap(),
            "--artifacts",
            dir.path().join("artifacts").to_str().unwrap(),
            "--json",
        ],
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("new-verifier-cache"),
    );
    let value: Value = serde_json::from_str(&support::stdout(&output))
        .unwrap_or_else(|e| panic!("{e}: {}", support::stderr(&output)));
    value["verdict"]["complete"]
        .as_bool()
        .unwrap_or_else(|| panic!("{value}"))
}

#[test]
fn a_non_empty_directory_or_a_bad_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("taken");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("keep.txt"), "mine").unwrap();
    let output = scaffold("js", &project);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        support::stderr(&output).contains("is not empty"),
        "{}",
        support::stderr(&output)
    );
    assert_eq!(
        std::fs::read_to_string(project.join("keep.txt")).unwrap(),
        "mine"
    );
    assert_eq!(std::fs::read_dir(&project).unwrap().count(), 1);
    let output = scaffold("python", &dir.path().join("Bad_Name"));
    assert_eq!(output.status.code(), Some(2));
    assert!(support::stderr(&output).contains("[a-z][a-z0-9]*(-[a-z0-9]+)*"));
    assert!(!dir.path().join("Bad_Name").exists());
    // An empty directory is fine.
    let empty = dir.path().join("empty-one");
    std::fs::create_dir(&empty).unwrap();
    assert_eq!(scaffold("python", &empty).status.code(), Some(0));
    assert!(empty.join("wit/verifier.wit").is_file());
}

#[test]
fn the_rust_project_builds_and_passes_its_test_as_generated() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("rust-check");
    let output = scaffold("rust", &project);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        support::stderr(&output)
    );
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/new-verifier");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let env = [("CARGO_TARGET_DIR", target.as_path())];
    run(&project, &cargo, &["test", "--offline"], &env);
    run(
        &project,
        &cargo,
        &[
            "build",
            "--offline",
            "--release",
            "--target",
            "wasm32-wasip2",
        ],
        &env,
    );
    let wasm = target.join("wasm32-wasip2/release/rust_check.wasm");
    assert!(checks_complete(&wasm, true));
    assert!(!checks_complete(&wasm, false));
}

fn tools() -> PathBuf {
    PathBuf::from(std::env::var_os("VERDICT_TOOLS_DIR").expect(
        "needs VERDICT_TOOLS_DIR with the pinned toolchains (sample-verifiers/polyglot/install-tools.sh)",
    ))
}

#[test]
#[ignore = "needs VERDICT_TOOLS_DIR with the pinned toolchains"]
fn the_python_project_builds_and_passes_its_test_as_generated() {
    let tools = tools();
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("py-check");
    assert_eq!(scaffold("python", &project).status.code(), Some(0));
    let bin = tools.join("py/bin");
    // As in an activated virtual environment (the tests' conftest runs
    // componentize-py from PATH).
    let path = std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let path = PathBuf::from(path);
    run(
        &project,
        bin.join("python"),
        &["-m", "pytest", "-q"],
        &[("PATH", &path)],
    );
    run(
        &project,
        bin.join("componentize-py"),
        &[
            "-d",
            "wit",
            "-w",
            "completion-checker",
            "componentize",
            "app",
            "-o",
            "py-check.wasm",
        ],
        &[],
    );
    let wasm = project.join("py-check.wasm");
    assert!(checks_complete(&wasm, true));
    assert!(!checks_complete(&wasm, false));
}

#[test]
#[ignore = "needs VERDICT_TOOLS_DIR with the pinned toolchains"]
fn the_js_project_builds_and_passes_its_test_as_generated() {
    let tools = tools();
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("js-check");
    assert_eq!(scaffold("js", &project).status.code(), Some(0));
    // The pinned packages, as `npm install` would put them.
    std::os::unix::fs::symlink(tools.join("js/node_modules"), project.join("node_modules"))
        .unwrap();
    run(&project, "npm", &["test"], &[]);
    run(&project, "npm", &["run", "build"], &[]);
    let wasm = project.join("js-check.wasm");
    assert!(checks_complete(&wasm, true));
    assert!(!checks_complete(&wasm, false));
}
