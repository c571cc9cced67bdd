//! `verdict new-verifier`: each language's project, scaffolded into an
//! empty temporary directory, builds into a component that passes its own
//! test and decides its shipped examples as its README says; the Python and
//! JavaScript entry points refuse a non-boolean `complete`. The Rust one always runs (its
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

/// `verdict check --json` of `wasm` on the project's shipped example
/// `examples/{packet}` with `examples/artifacts`, the command its README
/// gives: (exit code, the JSON answer).
fn check_example(wasm: &Path, project: &Path, packet: &str) -> (Option<i32>, Value) {
    let examples = project.join("examples");
    let output = support::verdict(
        &[
            "check",
            "--verifier",
            wasm.to_str().unwrap(),
            "--packet",
            examples.join(packet).to_str().unwrap(),
            "--artifacts",
            examples.join("artifacts").to_str().unwrap(),
            "--json",
        ],
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("new-verifier-cache"),
    );
    let value: Value = serde_json::from_str(&support::stdout(&output))
        .unwrap_or_else(|e| panic!("{e}: {}", support::stderr(&output)));
    (output.status.code(), value)
}

/// The shipped examples decide as the README says: `complete.json` is
/// complete (exit 0), `not-complete.json` not complete (exit 1), both on
/// `examples/artifacts`, whose `status.json` says done; and the README
/// names both commands.
fn the_examples_check_as_documented(wasm: &Path, project: &Path) {
    let (code, value) = check_example(wasm, project, "complete.json");
    assert_eq!(code, Some(0), "{value}");
    assert_eq!(value["status"], "complete", "{value}");
    assert_eq!(value["verdict"]["reason"], "status.json says done");
    let (code, value) = check_example(wasm, project, "not-complete.json");
    assert_eq!(code, Some(1), "{value}");
    assert_eq!(value["status"], "not_complete", "{value}");
    assert_eq!(
        value["verdict"]["reason"],
        "no successful write_artifact call"
    );
    let readme = std::fs::read_to_string(project.join("README.md")).unwrap();
    let wasm_name = wasm.file_name().unwrap().to_str().unwrap();
    for packet in ["complete.json", "not-complete.json"] {
        let command = format!("--packet examples/{packet} --artifacts examples/artifacts");
        assert!(
            readme.contains(&command) && readme.contains(wasm_name),
            "README.md does not show `{command}` for {wasm_name}:\n{readme}"
        );
    }
}

/// `verdict check` of `wasm`, a build whose logic returns a verdict with
/// a non-boolean `complete`: refused at the guest edge, a trap (exit 3),
/// never a verdict.
fn a_non_boolean_complete_traps(wasm: &Path, project: &Path) {
    let (code, value) = check_example(wasm, project, "complete.json");
    assert_eq!(code, Some(3), "{value}");
    assert_eq!(value["status"], "checker_error", "{value}");
    assert_eq!(value["error"]["code"], "trap", "{value}");
    assert!(value.get("verdict").is_none(), "{value}");
    let tail = value["error"]["stderrTail"].as_str().unwrap_or_default();
    assert!(tail.contains("complete must be"), "{value}");
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
    let (_dir, project) = scaffolded("rust", "rust-check");
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
    the_examples_check_as_documented(&wasm, &project);
}

fn tools() -> PathBuf {
    PathBuf::from(std::env::var_os("VERDICT_TOOLS_DIR").expect(
        "needs VERDICT_TOOLS_DIR with the pinned toolchains (sample-verifiers/polyglot/install-tools.sh)",
    ))
}

/// Scaffolds `lang`'s project `name` in a new temporary directory:
/// (the directory, the project).
fn scaffolded(lang: &str, name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join(name);
    let output = scaffold(lang, &project);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        support::stderr(&output)
    );
    (dir, project)
}

/// Builds the Python project as its README says: `{name}.wasm`.
fn componentize_py(project: &Path) -> PathBuf {
    let name = project.file_name().unwrap().to_str().unwrap();
    let wasm = format!("{name}.wasm");
    run(
        project,
        tools().join("py/bin/componentize-py"),
        &[
            "-d",
            "wit",
            "-w",
            "warm-completion-checker",
            "componentize",
            "app",
            "-o",
            &wasm,
        ],
        &[],
    );
    project.join(wasm)
}

/// Builds the JavaScript project as its README says (`npm run build`),
/// with the pinned packages where `npm install` would put them.
fn componentize_js(project: &Path) -> PathBuf {
    std::os::unix::fs::symlink(
        tools().join("js/node_modules"),
        project.join("node_modules"),
    )
    .unwrap();
    run(project, "npm", &["run", "build"], &[]);
    let name = project.file_name().unwrap().to_str().unwrap();
    project.join(format!("{name}.wasm"))
}

#[test]
#[ignore = "needs VERDICT_TOOLS_DIR with the pinned toolchains"]
fn the_python_project_builds_and_passes_its_test_as_generated() {
    let (_dir, project) = scaffolded("python", "py-check");
    let bin = tools().join("py/bin");
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
    let wasm = componentize_py(&project);
    the_examples_check_as_documented(&wasm, &project);
}

/// componentize-py lowers any truthy `complete` as true: the generated
/// entry point refuses it instead.
#[test]
#[ignore = "needs VERDICT_TOOLS_DIR with the pinned toolchains"]
fn a_python_verdict_with_a_non_boolean_complete_traps() {
    let (_dir, project) = scaffolded("python", "py-truthy");
    std::fs::write(
        project.join("verifier.py"),
        "from wit_world.imports.types import Verdict\n\n\n\
         def check(packet, read):\n    \
         return Verdict(complete=\"no\", reason=None, feedback=None)\n",
    )
    .unwrap();
    let wasm = componentize_py(&project);
    a_non_boolean_complete_traps(&wasm, &project);
}

#[test]
#[ignore = "needs VERDICT_TOOLS_DIR with the pinned toolchains"]
fn the_js_project_builds_and_passes_its_test_as_generated() {
    let (_dir, project) = scaffolded("js", "js-check");
    run(&project, "npm", &["test"], &[]);
    let wasm = componentize_js(&project);
    the_examples_check_as_documented(&wasm, &project);
}

/// componentize-js lowers any truthy `complete` as true: the generated
/// entry point refuses it instead.
#[test]
#[ignore = "needs VERDICT_TOOLS_DIR with the pinned toolchains"]
fn a_js_verdict_with_a_non_boolean_complete_traps() {
    let (_dir, project) = scaffolded("js", "js-truthy");
    std::fs::write(
        project.join("src/verifier.js"),
        "export function check(packet, read) {\n  return { complete: 'yes' };\n}\n",
    )
    .unwrap();
    let wasm = componentize_js(&project);
    a_non_boolean_complete_traps(&wasm, &project);
}

/// The repository README's *Writing a verifier* section.
fn writing_a_verifier() -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let start = readme.find("\n## Writing a verifier\n").unwrap();
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    rest[..end].to_owned()
}

/// Each recipe a newcomer follows names what it needs: the Rust target
/// (before the build), the example commands, and the packet's field names
/// as each language spells them — in the root README and in each
/// generated project's README.
#[test]
fn the_recipes_name_the_target_the_examples_and_each_language_spelling() {
    let section = writing_a_verifier();
    let target = section.find("rustup target add wasm32-wasip2");
    let build = section.find("cargo build --release --target wasm32-wasip2");
    assert!(
        target.is_some() && target < build,
        "no `rustup target add wasm32-wasip2` before the first build"
    );
    let recipe = &section[section.find("verdict new-verifier --lang rust").unwrap()..];
    let (rustup, build) = (
        recipe.find("rustup target add wasm32-wasip2"),
        recipe.find("cargo build --release --target wasm32-wasip2"),
    );
    assert!(
        rustup.is_some() && rustup < build,
        "the new-verifier recipe"
    );
    let spellings = [
        // (packet JSON, Rust, Python, JavaScript)
        [
            "`executionId`",
            "execution_id",
            "execution_id",
            "executionId",
        ],
        ["`.toolName`", "tool_name", "tool_name", "toolName"],
        ["`.callId`", "call_id", "call_id", "callId"],
        [
            "`.outcome.status`",
            "OutcomeStatus::Succeeded",
            "OutcomeStatus.SUCCEEDED",
            "'succeeded'",
        ],
        [
            "`observedToolCalls`",
            "observed_tool_calls",
            "observed_tool_calls",
            "observedToolCalls",
        ],
        ["`taskState`", "payload_json", "payload_json", "payloadJson"],
    ];
    for row in &spellings {
        let line = section
            .lines()
            .find(|line| line.starts_with(&format!("| {} ", row[0])))
            .unwrap_or_else(|| panic!("no table row for {}", row[0]));
        for spelling in &row[1..] {
            assert!(line.contains(spelling), "{line} lacks {spelling}");
        }
    }
    for packet in ["complete.json", "not-complete.json"] {
        let command = format!("--packet examples/{packet} --artifacts examples/artifacts");
        assert!(section.contains(&command), "{command}");
    }
    for (lang, column, must) in [
        ("rust", 1, &["rustup target add wasm32-wasip2"][..]),
        ("python", 2, &[][..]),
        ("js", 3, &[][..]),
    ] {
        let (_dir, project) = scaffolded(lang, &format!("{lang}-readme"));
        let readme = std::fs::read_to_string(project.join("README.md")).unwrap();
        for spelling in spellings
            .iter()
            .map(|row| row[column])
            .chain(must.iter().copied())
        {
            assert!(readme.contains(spelling), "{lang} README lacks {spelling}");
        }
    }
}
