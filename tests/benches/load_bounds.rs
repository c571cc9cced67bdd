//! Loading bounds benchmark: prints one table.
//!
//! `cargo bench -p verdict-tests --bench load_bounds`
//!
//! Each row loads one generated component (no compile cache) in a fresh
//! child process (this binary, re-executed) and reports the load's wall time
//! and the extra host memory it took: peak resident set (`VmHWM`) after the
//! load minus the resident set just before it. Rows:
//! - the compile bomb of issue 12 (100,000 tiny functions), refused by the
//!   [`LoadLimits`] census before compiling;
//! - the worst inputs the default [`LoadLimits`] admit, by shape: as many
//!   functions as allowed (tiny, or all escaping through a table so each
//!   also gets a trampoline), as many maximal function bodies as fit in the
//!   size limit (straight-line arithmetic, many live locals, deep nesting),
//!   and as many functions as allowed sharing the size limit.
//!
//! - the shapes of issue 31 (declared locals, trapping conversions, calls
//!   in one function), refused by the census, and the worst inputs of each
//!   shape the default limits admit;
//! - the Python and JavaScript sample builds, when built
//!   (`sample-verifiers/polyglot/build.sh target/polyglot`, or the folder
//!   `VERDICT_POLYGLOT_DIR` names).
//!
//! Each row is loaded twice: compiled in the host's process (the library
//! default), and in a compile child (`CompileIn::Child`, the CLI's default:
//! this binary re-executed, with the default `ChildCompiler` bounds, and a
//! fresh compile cache as the CLI has), where the host's extra memory and
//! the child's peak resident set are shown apart.
//!
//! Target (issues 12, 31): every admitted input loads in at most 5 s and
//! 256 MiB.

use std::io::Write;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};
use verdict_sandbox::{ChildCompiler, CompileIn, HostConfig, LoadLimits, VerifierHost};
use verdict_test_support::core_guest::{self, func_body};

const CHILD_ENV: &str = "VERDICT_LOAD_BOUNDS_CHILD";
/// Set (to anything) for a child that compiles in a compile child.
const COMPILE_CHILD_ENV: &str = "VERDICT_LOAD_BOUNDS_COMPILE_CHILD";
/// This binary's first argument when it is a compile child.
const COMPILE_CHILD_ARG: &str = "__compile-child";

/// A `/proc/self/status` field in KiB (0 where there is none).
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                line.strip_prefix(field)?
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse()
                    .ok()
            })
        })
        .unwrap_or(0)
}

/// Child: load the component at `path`; print `micros extra_kib
/// compile_child_kib outcome`.
fn child_main(path: &str) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{e}"));
    // With a compile child, a fresh compile cache too (as the CLI has):
    // the child's output goes to a file there, not through memory.
    let cache = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (compile_in, cache_dir) = if std::env::var_os(COMPILE_CHILD_ENV).is_some() {
        let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
        (
            CompileIn::Child(ChildCompiler::new(exe, vec![COMPILE_CHILD_ARG.into()])),
            Some(cache.path().to_owned()),
        )
    } else {
        (CompileIn::Process, None)
    };
    let host = VerifierHost::new(HostConfig {
        pooling: false,
        compile_in,
        cache_dir,
        ..HostConfig::default()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let before = status_kib("VmRSS:");
    let started = Instant::now();
    let outcome = match host.load_bytes(&bytes) {
        Ok(_) => "loaded".to_owned(),
        Err(e) => format!("refused: {e}"),
    };
    let elapsed = started.elapsed();
    let peak = status_kib("VmHWM:");
    let compile_child =
        nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
            .map(|usage| usage.max_rss())
            .unwrap_or(0);
    println!(
        "{} {} {compile_child} {outcome}",
        elapsed.as_micros(),
        peak.saturating_sub(before)
    );
}

/// A function body (text) of about `bytes` encoded bytes, by shape.
fn body(shape: Shape, bytes: usize) -> String {
    let mut out = String::new();
    match shape {
        // `local.get 0, i32.const 7, i32.add, local.set 0`: 7 bytes.
        Shape::Arithmetic => {
            out.push_str("(local i32)\n");
            for _ in 0..bytes / 7 {
                out.push_str("local.get 0 i32.const 7 i32.add local.set 0\n");
            }
        }
        // 1,000 i64 locals, each updated from two others: ~11 bytes a step,
        // every local live across the whole body.
        Shape::Locals => {
            out.push_str("(local");
            for _ in 0..1000 {
                out.push_str(" i64");
            }
            out.push_str(")\n");
            for i in 0..bytes / 11 {
                let (a, b, c) = (i % 1000, (i * 7 + 1) % 1000, (i * 13 + 2) % 1000);
                out.push_str(&format!(
                    "local.get {a} local.get {b} i64.add local.set {c}\n"
                ));
            }
        }
        // `branches` branch instructions: blocks, each with a conditional
        // branch out (2 branches, 8 bytes a level), nested `depth` deep.
        Shape::Nested { branches, depth } => {
            out.push_str("(local i32)\n");
            let levels = branches / 2;
            for run in 0..levels.div_ceil(depth) {
                let depth = depth.min(levels - run * depth);
                for _ in 0..depth {
                    out.push_str("block local.get 0 br_if 0 ");
                }
                for _ in 0..depth {
                    out.push_str("end ");
                }
                out.push('\n');
            }
        }
        // Calls to the function itself and memory accesses: 9 bytes a step.
        Shape::Calls => {
            out.push_str("(local i32)\n");
            for _ in 0..bytes / 9 {
                out.push_str("i32.const 0 i32.load local.set 0 call $f{i}\n");
            }
        }
        // Loops, each with a conditional branch back: 2 branches a level.
        Shape::Loops { branches } => {
            out.push_str("(local i32)\n");
            for _ in 0..branches / 2 {
                out.push_str("loop local.get 0 i32.const 1 i32.sub local.tee 0 br_if 0 end\n");
            }
        }
    }
    out
}

#[derive(Clone, Copy)]
enum Shape {
    Arithmetic,
    Locals,
    Nested { branches: usize, depth: usize },
    Loops { branches: usize },
    Calls,
}

/// The good core verifier plus `count` functions whose bodies are about
/// `bytes` each; with `table`, every one is also placed in a table.
fn component(count: usize, shape: Shape, bytes: usize, table: bool) -> Vec<u8> {
    let one = format!("  (func $f{{i}} {})\n", body(shape, bytes));
    let mut items = String::with_capacity(one.len() * count);
    for i in 0..count {
        items.push_str(&one.replace("{i}", &i.to_string()));
    }
    if table {
        items.push_str(&format!("  (table {count} funcref)\n  (elem (i32.const 0)"));
        for i in 0..count {
            items.push_str(&format!(" $f{i}"));
        }
        items.push_str(")\n");
    }
    core_guest::component(&core_guest::with_items(&core_guest::source("good"), &items))
}

/// `(name, bytes)` of the issue-31 shapes and the worst admitted inputs of
/// each, built in binary (see `core_guest::with_functions`).
fn issue31_cases(limits: &LoadLimits) -> Vec<(String, Vec<u8>)> {
    const I64: u8 = 0x7e;
    const F64: u8 = 0x7c;
    let shape = |count: u32, body: &dyn Fn(u32) -> Vec<u8>| {
        core_guest::component_of(&core_guest::with_functions(
            &core_guest::source("good"),
            count,
            body,
        ))
    };
    let padding = |i: u32, every: u32| {
        i.is_multiple_of(every)
            .then(|| func_body(&[], &[0x01; 460_000]))
    };
    let conversions = |n: usize| {
        let code: Vec<u8> = [0x20, 0x00, 0xb0, 0x1a]
            .iter()
            .copied()
            .cycle()
            .take(4 * n)
            .collect();
        func_body(&[(1, F64)], &code)
    };
    let calls = |me: u32, n: usize| {
        let mut call = vec![0x10];
        core_guest::leb(&mut call, u64::from(me));
        let code: Vec<u8> = call.iter().copied().cycle().take(call.len() * n).collect();
        func_body(&[], &code)
    };
    let locals = limits.max_function_locals;
    let spread = u32::try_from(limits.max_locals / u64::from(locals)).unwrap_or(1) - 1;
    let calls_max = limits.max_function_calls as usize;
    vec![
        (
            "issue 31: 14,000 functions of 50,000 i64 locals".into(),
            shape(14_000, &|_| func_body(&[(50_000, I64)], &[])),
        ),
        (
            "issue 31: 1,000 functions of 50,000 locals + padding (Winch)".into(),
            shape(1_005, &|i| {
                padding(i, 201).unwrap_or_else(|| func_body(&[(50_000, I64)], &[]))
            }),
        ),
        (
            "issue 31: 16 MiB of i64.trunc_f64_s (Winch)".into(),
            shape(33, &|_| conversions(125_000)),
        ),
        (
            "issue 31: 1 function of 110,900 calls".into(),
            shape(1, &|me| calls(me, 110_900)),
        ),
        (
            format!("{spread} functions of {locals} locals (max_locals)"),
            shape(spread, &|_| func_body(&[(locals, I64)], &[])),
        ),
        (
            format!("{spread} functions of {locals} locals + padding (Winch)"),
            shape(spread + 5, &|i| {
                padding(i, spread / 5 + 1).unwrap_or_else(|| func_body(&[(locals, I64)], &[]))
            }),
        ),
        (
            "2 functions of 105,000 conversions".into(),
            shape(2, &|_| conversions(105_000)),
        ),
        (
            "5 functions of 125,000 conversions (Winch)".into(),
            shape(5, &|_| conversions(125_000)),
        ),
        (
            format!("5 functions of {calls_max} calls"),
            shape(5, &|me| calls(me, calls_max)),
        ),
        (
            format!("54 functions of {calls_max} calls (Winch)"),
            shape(54, &|me| calls(me, calls_max)),
        ),
    ]
}

/// The sample builds found (Python and JavaScript), if any.
fn sample_cases() -> Vec<(String, Vec<u8>)> {
    let dir = std::env::var_os("VERDICT_POLYGLOT_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/polyglot")
        });
    ["python", "js"]
        .iter()
        .filter_map(|lang| {
            let path = dir.join(format!("artifact-ready-{lang}.wasm"));
            let bytes = std::fs::read(&path).ok()?;
            Some((format!("sample: artifact-ready-{lang}.wasm"), bytes))
        })
        .collect()
}

fn main() -> ExitCode {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == COMPILE_CHILD_ARG)
    {
        return verdict_sandbox::compile_child_main();
    }
    if let Some(path) = std::env::var_os(CHILD_ENV) {
        child_main(&path.to_string_lossy());
        return ExitCode::SUCCESS;
    }
    let limits = LoadLimits::default();
    let budget = limits.max_compile_cost * 97 / 100; // the verifier's own functions, headers
    // Functions of one shape that fit the compile-cost budget, by the
    // documented estimate (loops, other branches, body bytes per function).
    let fit = |loops: u64, others: u64, calls: u64, bytes: u64| {
        let branches = loops + others;
        let one = 200 + bytes + 100 * loops + 25 * calls + 10 * others + branches * branches / 50;
        usize::try_from(budget / one)
            .unwrap_or(0)
            .min(limits.max_functions as usize - 2)
    };
    let fn_bytes = limits.max_function_bytes as usize - 64;
    // The largest k (branches in one function, half loops) within budget.
    let one_fn_branches = |loop_share: u64| {
        let mut k = 2u64;
        while {
            let loops = k * loop_share / 2;
            let others = k - loops;
            200 + 7 * k + 100 * loops + 10 * others + k * k / 50
        } < budget
        {
            k += 2;
        }
        usize::try_from(k - 2).unwrap_or(0)
    };
    let calls_fit = fit(0, 0, fn_bytes as u64 / 9, fn_bytes as u64).max(1);
    let big_loops = one_fn_branches(1);
    let big_blocks = one_fn_branches(0);
    let loops = |n: usize, branches: usize| component(n, Shape::Loops { branches }, 0, false);
    let blocks = |n: usize, branches: usize, depth: usize| {
        component(n, Shape::Nested { branches, depth }, 0, false)
    };
    let cases: Vec<(String, Vec<u8>)> = vec![
        (
            "compile bomb: 100,000 tiny functions (issue 12)".into(),
            component(100_000, Shape::Arithmetic, 0, false),
        ),
        (
            format!("{} tiny functions, all in a table", fit(0, 0, 0, 6)),
            component(fit(0, 0, 0, 6), Shape::Arithmetic, 0, true),
        ),
        (
            format!(
                "{} functions of ~{fn_bytes} bytes (arithmetic)",
                fit(0, 0, 0, fn_bytes as u64)
            ),
            component(
                fit(0, 0, 0, fn_bytes as u64),
                Shape::Arithmetic,
                fn_bytes,
                false,
            ),
        ),
        (
            format!(
                "{} functions of ~{fn_bytes} bytes (1,000 live locals)",
                fit(0, 0, 0, fn_bytes as u64)
            ),
            component(
                fit(0, 0, 0, fn_bytes as u64),
                Shape::Locals,
                fn_bytes,
                false,
            ),
        ),
        (
            format!("{calls_fit} functions of ~{fn_bytes} bytes (calls and loads)"),
            component(calls_fit, Shape::Calls, fn_bytes, false),
        ),
        (
            format!("{} functions of 50 loops", fit(50, 50, 0, 610)),
            loops(fit(50, 50, 0, 610), 100),
        ),
        (
            format!("1 function of {big_loops} branches (loops)"),
            loops(1, big_loops),
        ),
        (
            format!(
                "{} functions of 500 branches (flat blocks)",
                fit(0, 500, 0, 1760)
            ),
            blocks(fit(0, 500, 0, 1760), 500, 1),
        ),
        (
            format!("1 function of {big_blocks} branches (flat blocks)"),
            blocks(1, big_blocks, 1),
        ),
        (
            format!("1 function of {big_blocks} branches (nested 500 deep)"),
            blocks(1, big_blocks, 500),
        ),
    ];
    // Issue 14: components with more than `max_cranelift_code_bytes` of code
    // compile with Winch, bounded by `max_winch_compile_cost` and the size.
    let winch_budget = limits.max_winch_compile_cost * 97 / 100;
    let winch_fit = |loops: u64, calls: u64, bytes: u64, min_code: u64| {
        let one = 200 + bytes + 100 * loops + 25 * calls + 10 * loops + (2 * loops).pow(2) / 50;
        let by_cost = winch_budget / one;
        let room = (limits.max_component_bytes * 9 / 10).min(limits.max_code_bytes * 97 / 100);
        let by_size = room / (bytes + 64).max(1);
        let n = by_cost
            .min(by_size)
            .min(u64::from(limits.max_functions) - 2);
        // Enough of them to be over the Cranelift tier's code bound.
        assert!(n * bytes > min_code, "not a Winch-tier input");
        usize::try_from(n).unwrap_or(0)
    };
    let tier = limits.max_cranelift_code_bytes;
    let winch_calls = winch_fit(0, fn_bytes as u64 / 9, fn_bytes as u64, tier);
    let winch_arith = winch_fit(0, 0, fn_bytes as u64, tier);
    let winch_loops = winch_fit(50, 0, 610, tier);
    let mut cases = cases;
    cases.extend(issue31_cases(&limits));
    cases.extend(sample_cases());
    cases.extend([
        (
            format!("Winch: {winch_calls} functions of ~{fn_bytes} bytes (calls and loads)"),
            component(winch_calls, Shape::Calls, fn_bytes, false),
        ),
        (
            format!("Winch: {winch_arith} functions of ~{fn_bytes} bytes (arithmetic)"),
            component(winch_arith, Shape::Arithmetic, fn_bytes, false),
        ),
        (
            format!("Winch: {winch_arith} functions of ~{fn_bytes} bytes (1,000 live locals)"),
            component(winch_arith, Shape::Locals, fn_bytes, false),
        ),
        (
            format!("Winch: {winch_loops} functions of 50 loops"),
            loops(winch_loops, 100),
        ),
    ]);
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    println!("limits: {limits:?}");
    println!(
        "| input | size | in process: time | extra memory | in a compile child: time | host's extra memory | child's peak | outcome |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut worst = [(Duration::ZERO, 0u64); 2];
    let mut worst_child_peak = 0u64;
    for (name, bytes) in cases {
        let path = dir.path().join("component.wasm");
        let mut file = std::fs::File::create(&path).unwrap_or_else(|e| panic!("{e}"));
        file.write_all(&bytes).unwrap_or_else(|e| panic!("{e}"));
        drop(file);
        let mut row = Vec::new();
        let mut outcomes = Vec::new();
        for (mode, worst) in worst.iter_mut().enumerate() {
            let mut command = Command::new(&exe);
            command.env(CHILD_ENV, &path);
            if mode == 1 {
                command.env(COMPILE_CHILD_ENV, "1");
            }
            let out = command.output().unwrap_or_else(|e| panic!("{e}"));
            let line = String::from_utf8_lossy(&out.stdout);
            let mut parts = line.trim().splitn(4, ' ');
            let micros: u64 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
            let kib: u64 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
            let child_kib: u64 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
            let outcome = parts.next().unwrap_or("child failed").to_owned();
            let time = Duration::from_micros(micros);
            if outcome == "loaded" {
                *worst = (worst.0.max(time), worst.1.max(kib));
                if mode == 1 {
                    worst_child_peak = worst_child_peak.max(child_kib);
                }
            }
            let time_text = if time < Duration::from_millis(100) {
                format!("{:.2} ms", time.as_secs_f64() * 1e3)
            } else {
                format!("{:.3} s", time.as_secs_f64())
            };
            row.push(time_text);
            row.push(format!("{:.1} MiB", kib as f64 / 1024.0));
            if mode == 1 {
                row.push(format!("{:.1} MiB", child_kib as f64 / 1024.0));
            }
            outcomes.push(outcome);
        }
        outcomes.dedup();
        println!(
            "| {name} | {:.2} MiB | {} | {} |",
            bytes.len() as f64 / (1024.0 * 1024.0),
            row.join(" | "),
            outcomes.join(" / ")
        );
    }
    println!(
        "\nworst admitted load in process: {:.3} s, {:.1} MiB extra",
        worst[0].0.as_secs_f64(),
        worst[0].1 as f64 / 1024.0
    );
    println!(
        "worst admitted load with a compile child: {:.3} s, {:.1} MiB extra in the host, {:.1} MiB peak in the child (target: <= 5 s, <= 256 MiB)",
        worst[1].0.as_secs_f64(),
        worst[1].1 as f64 / 1024.0,
        worst_child_peak as f64 / 1024.0
    );
    ExitCode::SUCCESS
}
