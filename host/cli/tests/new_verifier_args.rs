//! `verdict new-verifier`'s arguments: `--verdict-guest` is a TOML
//! dependency value (a version string, or an inline table with `path`,
//! `version` or `git` and at most one of `branch`, `tag`, `rev`), written
//! into `Cargo.toml` as parsed, and only for Rust; the project name is a
//! valid crate name (the rule is stated when it is not); `.` names the
//! project after the directory.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;
use std::path::Path;

fn new_verifier(args: &[&str], cwd: &Path) -> std::process::Output {
    let mut command = support::command(args, &cwd.join("..").join("cache"));
    command.current_dir(cwd);
    support::Running::spawn(command).output()
}

/// Exit 2, one `error:` line containing `expected`, nothing written.
fn refused(output: &std::process::Output, expected: &str, project: &Path) {
    let err = support::stderr(output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains(expected),
        "{expected:?} in {err}"
    );
    let empty = !project.exists() || std::fs::read_dir(project).unwrap().next().is_none();
    assert!(empty, "nothing written in {}", project.display());
}

#[test]
fn verdict_guest_is_a_dependency_value_written_as_parsed() {
    let dir = tempfile::tempdir().unwrap();
    let accepted = [
        (
            r#"{ path = "/src/verdict/guest-sdk" }"#,
            r#"{ path = "/src/verdict/guest-sdk" }"#,
        ),
        (r#""0.1""#, r#""0.1""#),
        (
            r#"{git="https://example.com/verdict.git",branch="main"}"#,
            r#"{ git = "https://example.com/verdict.git", branch = "main" }"#,
        ),
        (
            r#"{ version = "0.1", path = "../sdk" }"#,
            r#"{ path = "../sdk", version = "0.1" }"#,
        ),
    ];
    for (i, (value, written)) in accepted.iter().enumerate() {
        let project = dir.path().join(format!("ok-{i}"));
        let output = new_verifier(
            &[
                "new-verifier",
                "--lang",
                "rust",
                "--verdict-guest",
                value,
                project.to_str().unwrap(),
            ],
            dir.path(),
        );
        assert_eq!(
            output.status.code(),
            Some(0),
            "{value}: {}",
            support::stderr(&output)
        );
        let manifest = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
        let parsed: toml::Table = toml::from_str(&manifest).unwrap_or_else(|e| panic!("{e}"));
        let expected: toml::Table = toml::from_str(&format!("v = {value}")).unwrap();
        assert_eq!(
            parsed["dependencies"]["verdict-guest"], expected["v"],
            "{manifest}"
        );
        assert!(
            manifest.contains(&format!("verdict-guest = {written}\n")),
            "{manifest}"
        );
    }
}

#[test]
fn verdict_guest_that_is_no_dependency_value_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("bad");
    for value in [
        "x = [",
        "{ path = 1 }",
        "{ branch = \"main\" }",
        "{ git = \"u\", tag = \"a\", rev = \"b\" }",
        "{ path = \"/x\", branch = \"main\" }",
        "{ path = \"/x\", features = [\"a\"] }",
        "{ }",
        "\"\"",
        "\"0.1\"\n[dependencies.evil]\npath = \"/x\"",
        "[1]",
        "true",
    ] {
        let output = new_verifier(
            &[
                "new-verifier",
                "--lang",
                "rust",
                "--verdict-guest",
                value,
                project.to_str().unwrap(),
            ],
            dir.path(),
        );
        refused(&output, "--verdict-guest", &project);
    }
}

#[test]
fn verdict_guest_is_refused_for_python_and_javascript() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("py");
    for lang in ["python", "js"] {
        let output = new_verifier(
            &[
                "new-verifier",
                "--lang",
                lang,
                "--verdict-guest",
                "{ path = \"/x\" }",
                project.to_str().unwrap(),
            ],
            dir.path(),
        );
        refused(&output, "--verdict-guest", &project);
    }
}

#[test]
fn names_that_are_no_crate_names_are_refused_with_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "fn",
        "core",
        "test",
        "std",
        "self",
        "abc-",
        "a--b",
        "proc-macro",
        "async",
    ] {
        let project = dir.path().join(name);
        let output = new_verifier(
            &[
                "new-verifier",
                "--lang",
                "python",
                project.to_str().unwrap(),
            ],
            dir.path(),
        );
        let err = support::stderr(&output);
        refused(&output, name, &project);
        assert!(err.contains("[a-z][a-z0-9]*"), "the rule: {err}");
    }
}

#[test]
fn a_dot_names_the_project_after_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("my-check");
    std::fs::create_dir(&project).unwrap();
    let output = new_verifier(&["new-verifier", "--lang", "python", "."], &project);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        support::stderr(&output)
    );
    assert!(support::stdout(&output).contains("verifier `my-check`"));
    let readme = std::fs::read_to_string(project.join("README.md")).unwrap();
    assert!(readme.starts_with("# my-check\n"), "{readme}");

    // A name from the directory is held to the same rule.
    let bad = dir.path().join("test");
    std::fs::create_dir(&bad).unwrap();
    let output = new_verifier(&["new-verifier", "--lang", "python", "."], &bad);
    refused(&output, "test", &bad);
}
