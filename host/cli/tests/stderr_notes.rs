//! What the binary says on stderr before it does something a user would
//! not expect: `inspect` compiling a component (seconds for Python or
//! JavaScript; said only when no compiled copy is cached), `check` running
//! without artifacts.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use crate::support;

#[test]
fn inspect_says_it_compiles_unless_the_cache_has_it() {
    let cache = tempfile::tempdir().unwrap();
    let inspect = |extra: &[&str]| {
        let mut args = vec!["inspect", "builtin:artifact-ready"];
        args.extend_from_slice(extra);
        let out = support::verdict(&args, cache.path());
        assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
        support::stderr(&out)
    };
    let note = "compiling builtin:artifact-ready to inspect it";
    let first = inspect(&[]);
    assert!(first.contains(note), "{first:?}");
    assert_eq!(first.lines().count(), 1, "{first:?}");
    assert_eq!(inspect(&[]), "", "cached now: nothing to say");
    let uncached = inspect(&["--no-cache"]);
    assert!(uncached.contains(note), "{uncached:?}");

    // A core module is described without compiling: nothing said.
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("core.wasm");
    std::fs::write(&module, b"\0asm\x01\0\0\0").unwrap();
    let out = support::verdict(&["inspect", module.to_str().unwrap()], cache.path());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(support::stderr(&out), "");
}

#[test]
fn check_without_artifacts_says_so() {
    let cache = tempfile::tempdir().unwrap();
    let packet = support::examples().join("packets/ready.json");
    let check = |extra: &[&str]| {
        let mut args = vec![
            "check",
            "--verifier",
            "builtin:artifact-ready",
            "--packet",
            packet.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        support::verdict(&args, cache.path())
    };
    let out = check(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", support::stderr(&out));
    assert_eq!(
        support::stderr(&out),
        "note: no --artifacts given: the verifier sees no artifacts\n"
    );
    let artifacts = support::examples().join("artifacts");
    let out = check(&["--artifacts", artifacts.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
    assert_eq!(support::stderr(&out), "");
}
