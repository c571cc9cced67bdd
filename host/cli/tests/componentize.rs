//! `verdict componentize`: the sample verifier built lean (a core module
//! for wasm32-unknown-unknown) becomes a component that `verdict check`
//! runs, deciding as the embedded sample does; bad input is a one-line
//! error that writes nothing and leaves the module alone.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support::{check_json, stderr, stdout, verdict};
use std::path::{Path, PathBuf};

/// The artifact-ready sample's core module, built lean (up to date when
/// the workspace's tests built it already).
pub(crate) fn lean_module() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let built = verdict_guest_build::GuestBuilder::for_workspace_of(&root)
        .and_then(|b| {
            b.lean(true)
                .emit_rerun_if_changed(false)
                .build(&["artifact-ready"])
        })
        .unwrap_or_else(|e| panic!("{e}"));
    built[0].path.with_file_name("artifact_ready.wasm")
}

#[test]
fn a_lean_module_becomes_a_component_that_decides_as_the_sample_does() {
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("artifact_ready.wasm");
    std::fs::copy(lean_module(), &module).unwrap();
    let before = std::fs::read(&module).unwrap();
    let out = verdict(&["componentize", module.to_str().unwrap()], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let component = dir.path().join("artifact_ready.component.wasm");
    assert!(
        stdout(&out).starts_with(&format!("wrote {}", component.display())),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).ends_with("accepted: yes\n"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        std::fs::read(&module).unwrap(),
        before,
        "the module is left alone"
    );

    // It imports verdict's interfaces and WASI's standard error, no more.
    let inspected = verdict(
        &["inspect", component.to_str().unwrap(), "--json"],
        dir.path(),
    );
    let info: serde_json::Value = serde_json::from_str(&stdout(&inspected)).unwrap();
    assert_eq!(info["kind"], "component");
    let wasi: Vec<&str> = info["imports"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i.as_str())
        .filter(|i| i.starts_with("wasi:"))
        .collect();
    assert_eq!(
        wasi,
        [
            "wasi:io/error@0.2.0",
            "wasi:io/streams@0.2.0",
            "wasi:cli/stderr@0.2.0"
        ]
    );

    // Decides as the embedded (wasm32-wasip2) build of the same sample.
    for (packet, code) in [("ready", 0), ("premature", 1)] {
        let (lean_code, lean) = check_json(component.to_str().unwrap(), packet, dir.path());
        let (builtin_code, builtin) = check_json("builtin:artifact-ready", packet, dir.path());
        assert_eq!(lean["verdict"], builtin["verdict"], "{packet}");
        assert_eq!(
            (lean_code, builtin_code),
            (Some(code), Some(code)),
            "{packet}"
        );
    }
}

#[test]
fn an_output_is_replaced_whole_and_never_the_module_itself() {
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("m.wasm");
    std::fs::copy(lean_module(), &module).unwrap();
    let output = dir.path().join("out.wasm");
    std::fs::write(&output, b"an older build").unwrap();
    let out = verdict(
        &[
            "componentize",
            module.to_str().unwrap(),
            "-o",
            output.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        std::fs::read(&output)
            .unwrap()
            .starts_with(b"\0asm\x0d\0\x01\0")
    );

    let before = std::fs::read(&module).unwrap();
    let out = verdict(
        &[
            "componentize",
            module.to_str().unwrap(),
            "--output",
            module.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is the module itself"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(&module).unwrap(), before);
}

#[test]
fn what_is_not_a_lean_module_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let sample = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let component =
        std::fs::read(lean_module().with_file_name("artifact_ready.component.wasm")).unwrap();
    let cases = [
        (
            sample("text.wasm", b"not wasm"),
            "is not a WebAssembly module",
        ),
        (sample("comp.wasm", &component), "is already a component"),
        // A module whose code is cut short: the encoder refuses it.
        (
            sample("cut.wasm", &std::fs::read(lean_module()).unwrap()[..4096]),
            "cannot make",
        ),
        (dir.path().join("missing.wasm"), "cannot read"),
    ];
    for (path, expected) in &cases {
        let out = verdict(&["componentize", path.to_str().unwrap()], dir.path());
        assert_eq!(out.status.code(), Some(2), "{}", path.display());
        let err = stderr(&out);
        assert!(err.contains(expected), "{}: {err}", path.display());
        assert_eq!(err.lines().count(), 1, "{err}");
        let stem = path.file_stem().unwrap().to_string_lossy();
        assert!(
            !path
                .with_file_name(format!("{stem}.component.wasm"))
                .exists()
        );
    }
}

#[test]
fn a_module_without_a_verdict_world_is_refused_and_nothing_is_written() {
    // An empty core module encodes as a valid (empty) component: no
    // verifier, so nothing is written and the input is refused (exit 2).
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("empty.wasm");
    std::fs::write(&module, b"\0asm\x01\0\0\0").unwrap();
    let out = verdict(&["componentize", module.to_str().unwrap()], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no verdict WIT world"), "{err}");
    assert_eq!(stdout(&out), "");
    assert!(!dir.path().join("empty.component.wasm").exists());
}
