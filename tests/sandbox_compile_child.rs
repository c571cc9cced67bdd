//! Compiling in a child process (`CompileIn::Child`): what it compiles
//! loads and checks as an in-process compile does, through memory (no
//! cache) or through a new file that becomes the compile cache's entry; a compile over the child's memory or past its deadline is
//! refused naming the bound; output compiled with other engine settings is
//! refused, not cached.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::ffi::OsString;
use std::time::Duration;
use verdict_policy::CheckContext;
use verdict_sandbox::{
    ChildCompiler, CompileIn, CompilerChoice, HostConfig, LoadError, LoadSource, VerifierHost,
};
use verdict_test_support::{core_guest, guests, read_packet, ready_tenant};

/// The test suite's compile child (`tests/bin/compile_child.rs`).
const CHILD: &str = env!("CARGO_BIN_EXE_verdict-test-compile-child");

fn child() -> ChildCompiler {
    ChildCompiler::new(CHILD, Vec::new())
}

fn host_with(child: ChildCompiler, cache_dir: Option<std::path::PathBuf>) -> VerifierHost {
    VerifierHost::new(HostConfig {
        cache_dir,
        compile_in: CompileIn::Child(child),
        ..HostConfig::default()
    })
    .unwrap()
}

/// Temporary files left anywhere under `dir`.
fn leftovers(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(leftovers(&path));
        } else if path.to_string_lossy().ends_with(".tmp") {
            found.push(path);
        }
    }
    found
}

fn sample() -> Vec<u8> {
    std::fs::read(guests::ARTIFACT_READY).unwrap()
}

#[test]
fn the_rust_sample_loads_through_the_child_and_checks_the_same() {
    let (tenant, _) = ready_tenant("compile-child");
    let in_process = VerifierHost::new(HostConfig::default()).unwrap();
    let (expected, _) = in_process.load_bytes(&sample()).unwrap();
    let expected = expected
        .check(&tenant, &read_packet(), &CheckContext::new())
        .result
        .unwrap();
    assert!(expected.complete);
    let cache = tempfile::tempdir().unwrap();
    // The pooling allocator of the parent's engine is not the child's: its
    // output still passes wasmtime's compatibility check, under both tiers.
    for compiler in [CompilerChoice::Cranelift, CompilerChoice::Winch] {
        let config = HostConfig {
            cache_dir: Some(cache.path().to_owned()),
            compile_in: CompileIn::Child(child()),
            compiler,
            ..HostConfig::default()
        };
        let (verifier, source) = VerifierHost::new(config.clone())
            .unwrap()
            .load_bytes(&sample())
            .unwrap();
        assert_eq!(source, LoadSource::Compiled, "{compiler:?}");
        let verdict = verifier
            .check(&tenant, &read_packet(), &CheckContext::new())
            .result
            .unwrap();
        assert_eq!(verdict, expected, "{compiler:?}");
        // Cached: another host loads the child's output from the cache.
        let (verifier, source) = VerifierHost::new(config)
            .unwrap()
            .load_bytes(&sample())
            .unwrap();
        assert_eq!(source, LoadSource::Cache, "{compiler:?}");
        let verdict = verifier
            .check(&tenant, &read_packet(), &CheckContext::new())
            .result
            .unwrap();
        assert_eq!(verdict, expected, "{compiler:?}");
    }
}

/// A core module of the good verifier plus `functions` tiny functions.
fn with_functions(functions: usize) -> Vec<u8> {
    let items: String = (0..functions)
        .map(|i| format!("  (func (result i32) (i32.const {i}))\n"))
        .collect();
    core_guest::component(&core_guest::with_items(&core_guest::source("good"), &items))
}

#[test]
fn a_compile_over_the_childs_memory_is_refused_naming_the_bound() {
    // 12,000 functions pass the estimate (cost 2.5 M of 3 M), and compiling
    // them takes Cranelift far more than 64 MiB.
    let bytes = with_functions(12_000);
    let host = host_with(
        ChildCompiler {
            memory_bytes: 64 * 1024 * 1024,
            ..child()
        },
        None,
    );
    assert_eq!(
        host.load_bytes(&bytes).unwrap_err(),
        LoadError::CompileBound {
            bound: "compile_memory_bytes",
            max: 64 * 1024 * 1024
        }
    );
    // With room, the same component compiles in the child.
    assert!(host_with(child(), None).load_bytes(&bytes).is_ok());
}

#[test]
fn a_child_killed_by_a_signal_is_a_memory_overrun() {
    // What the kernel's OOM killer does to a child: SIGKILL.
    let killed = ChildCompiler::new("/bin/sh", vec!["-c".into(), "kill -9 $$".into()]);
    assert_eq!(
        host_with(killed.clone(), None)
            .load_bytes(&sample())
            .unwrap_err(),
        LoadError::CompileBound {
            bound: "compile_memory_bytes",
            max: killed.memory_bytes
        }
    );
}

#[test]
fn a_compile_past_the_childs_deadline_is_killed_and_refused() {
    // A child that never answers.
    let stuck = ChildCompiler {
        timeout: Duration::from_millis(300),
        ..ChildCompiler::new("/bin/sleep", vec!["600".into()])
    };
    let cache = tempfile::tempdir().unwrap();
    assert_eq!(
        host_with(stuck, Some(cache.path().to_owned()))
            .load_bytes(&sample())
            .unwrap_err(),
        LoadError::CompileBound {
            bound: "compile_timeout_ms",
            max: 300
        }
    );
    // The file its output was to go to is gone.
    assert_eq!(leftovers(cache.path()), Vec::<std::path::PathBuf>::new());
}

#[test]
fn output_compiled_with_other_settings_is_refused_and_not_cached() {
    // A child that compiles for Winch while the host asked for Cranelift.
    let other = ChildCompiler::new(
        "/usr/bin/env",
        vec![
            OsString::from("VERDICT_COMPILE_CHILD_TIER=winch"),
            OsString::from(CHILD),
        ],
    );
    let cache = tempfile::tempdir().unwrap();
    let host = host_with(other, Some(cache.path().to_owned()));
    assert!(matches!(
        host.load_bytes(&sample()),
        Err(LoadError::Link(_))
    ));
    assert_eq!(leftovers(cache.path()), Vec::<std::path::PathBuf>::new());
    // Nothing was cached: a host with the right child compiles it again.
    let (_, source) = host_with(child(), Some(cache.path().to_owned()))
        .load_bytes(&sample())
        .unwrap();
    assert_eq!(source, LoadSource::Compiled);
}

#[test]
fn the_estimate_refuses_before_any_child_starts() {
    // A child that would fail if it ran: the census refuses first.
    let never = ChildCompiler::new("/bin/false", Vec::new());
    assert!(matches!(
        host_with(never, None).load_bytes(&with_functions(30_000)),
        Err(LoadError::OverLimit {
            limit: "max_functions",
            ..
        })
    ));
}

#[test]
fn a_compile_child_dies_with_the_host_that_started_it() {
    // A shell starts the child (waiting for its input, told the shell is
    // its host, as a host tells it) and exits at once: the child is killed
    // with it (or, if the shell was gone before the child could ask for
    // that, stops by itself) rather than left compiling.
    let out = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(format!(
            "sleep 30 | VERDICT_COMPILE_CHILD_TIER=cranelift VERDICT_COMPILE_CHILD_PARENT=$$ \
             {CHILD} >/dev/null 2>&1 & echo $!"
        ))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .output()
        .unwrap();
    let pid: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    // Gone (or a zombie no one reaped) once the kernel delivered the signal.
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            !stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    };
    let mut waited = 0;
    while alive() && waited < 1_000 {
        std::thread::sleep(Duration::from_millis(10));
        waited += 1;
    }
    assert!(!alive(), "the compile child {pid} outlived its parent");
}
