//! Shapes that compile far slower, or in far more memory, than their size
//! says (issue 31), generated here in binary: each is refused by the load
//! census before anything is compiled, naming the limit it is over.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use verdict_sandbox::{HostConfig, LoadError, LoadLimits, VerifierHost};
use verdict_test_support::core_guest::{self, func_body};

const I64: u8 = 0x7e;
const F64: u8 = 0x7c;

/// A host without a cache: every admitted load compiles.
fn fresh_host() -> VerifierHost {
    VerifierHost::new(HostConfig {
        pooling: false,
        ..HostConfig::default()
    })
    .unwrap()
}

/// The good verifier plus `count` functions of the body `body(index)`.
fn shape(count: u32, body: impl Fn(u32) -> Vec<u8>) -> Vec<u8> {
    core_guest::component_of(&core_guest::with_functions(
        &core_guest::source("good"),
        count,
        body,
    ))
}

/// A body of `bytes` `nop`s: code that is cheap to compile,
/// to take a component over the Cranelift tier's size.
fn padding(bytes: usize) -> Vec<u8> {
    func_body(&[], &vec![0x01; bytes])
}

/// The limit `bytes` is refused by, or what loading them did.
fn refused(bytes: &[u8]) -> String {
    match fresh_host().load_bytes(bytes) {
        Err(LoadError::OverLimit { limit, .. }) => limit.to_owned(),
        Err(other) => panic!("refused by something else: {other}"),
        Ok(_) => panic!("loaded"),
    }
}

#[test]
fn functions_declaring_50_000_locals_are_refused() {
    // 14,000 functions × 50,000 i64 locals: 114 KB, a minute of Cranelift.
    let bomb = shape(14_000, |_| func_body(&[(50_000, I64)], &[]));
    assert!(bomb.len() < 200_000, "{}", bomb.len());
    assert_eq!(refused(&bomb), "max_function_locals");
    // The same locals spread thinner are counted over the component.
    let max = LoadLimits::default().max_function_locals;
    let spread = shape(14_000, |_| func_body(&[(max, I64)], &[]));
    assert_eq!(refused(&spread), "max_locals");
}

#[test]
fn winch_zeroing_every_local_is_refused() {
    // 1,000 functions × 50,000 locals, padded over the Cranelift tier's
    // size: Winch zeroes each local with a store of its own (1 GiB).
    let bomb = shape(1_005, |i| {
        if i % 201 == 0 {
            padding(460_000)
        } else {
            func_body(&[(50_000, I64)], &[])
        }
    });
    assert!(bomb.len() > 2 * 1024 * 1024);
    assert_eq!(refused(&bomb), "max_function_locals");
    // Within the per-function limit, the count over the component refuses.
    let max = LoadLimits::default().max_function_locals;
    let spread = shape(1_005, |i| {
        if i % 201 == 0 {
            padding(460_000)
        } else {
            func_body(&[(max, I64)], &[])
        }
    });
    assert_eq!(refused(&spread), "max_locals");
}

#[test]
fn sixteen_mib_of_trapping_conversions_are_refused_under_winch() {
    // `local.get 0, i64.trunc_f64_s, drop`: 4 bytes, each expanded by Winch
    // into a range check and a trap (16 MiB: 5.6 s and 1.1 GiB).
    let step = [0x20, 0x00, 0xb0, 0x1a];
    let code: Vec<u8> = step.iter().copied().cycle().take(500_000).collect();
    let bomb = shape(33, |_| func_body(&[(1, F64)], &code));
    assert!(bomb.len() > 16_000_000);
    assert_eq!(refused(&bomb), "max_compile_cost");
}

#[test]
fn one_function_of_110_900_calls_is_refused() {
    // Under Cranelift: 286 MiB to compile one function of calls.
    let bomb = shape(1, |me| {
        let mut call = vec![0x10];
        core_guest::leb(&mut call, u64::from(me));
        let code: Vec<u8> = call
            .iter()
            .copied()
            .cycle()
            .take(call.len() * 110_900)
            .collect();
        func_body(&[], &code)
    });
    assert_eq!(refused(&bomb), "max_function_calls");
}

#[test]
fn tables_of_many_targets_are_counted() {
    // Six `br_table`s of 65,000 targets (wasmparser's most) a function,
    // five functions: 2 MB, under Cranelift.
    let mut code = Vec::new();
    for _ in 0..6 {
        code.extend([0x02, 0x40, 0x41, 0x00, 0x0e]); // block, i32.const 0, br_table
        core_guest::leb(&mut code, 65_000);
        code.extend(std::iter::repeat_n(0x00, 65_001));
        code.push(0x0b); // end (of the block)
    }
    let bomb = shape(5, |_| func_body(&[], &code));
    assert_eq!(refused(&bomb), "max_compile_cost");
}
