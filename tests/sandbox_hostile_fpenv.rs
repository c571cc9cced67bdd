//! A caller whose thread runs in another floating-point environment (x86-64
//! MXCSR: flush-to-zero and denormals-are-zero as `-ffast-math` code sets
//! them, another rounding mode, an unmasked exception) does not change what
//! a guest computes: the guest's `f64` arithmetic is WebAssembly's, and the
//! caller gets its own environment back. The guest is a hand-written core
//! module (no SDK) checking three results bit for bit.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::arch::asm;
use verdict_policy::CheckContext;
use verdict_test_support::{core_guest, host, read_packet, ready_tenant};

/// Completes with the reason `111` when, from the packet's iteration `n`
/// (2 in the read packet): the subnormal with bits `n`, added to itself, is
/// not zero (FTZ/DAZ make it zero); `1 / (n + 8)` is `0.1` rounded to
/// nearest (`0x3FB999999999999A`; toward zero ends in `9`); `1 / (n - n)`
/// is `+inf` (an unmasked divide-by-zero exception would raise `SIGFPE`).
/// Each digit of the reason is one check.
const GUEST: &str = r#"(module
  (memory (export "memory") 16)
  (global $next (mut i32) (i32.const 1024))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
    (local $p i32)
    (local.set $p (i32.and (i32.add (global.get $next) (i32.sub (local.get 2) (i32.const 1)))
                           (i32.xor (i32.sub (local.get 2) (i32.const 1)) (i32.const -1))))
    (global.set $next (i32.add (local.get $p) (local.get 3)))
    (local.get $p))
  (func (export "verdict:verifier/completion@0.1.0#check") (param $packet i32) (result i32)
    (local $n i32) (local $sub f64) (local $tenth f64) (local $inf f64)
    (local.set $n (i32.load offset=8 (local.get $packet)))
    (local.set $sub (f64.reinterpret_i64 (i64.extend_i32_u (local.get $n))))
    (i32.store8 (i32.const 64) (i32.add (i32.const 48)
      (i64.ne (i64.reinterpret_f64 (f64.add (local.get $sub) (local.get $sub))) (i64.const 0))))
    (local.set $tenth (f64.div (f64.const 1)
      (f64.convert_i32_u (i32.add (local.get $n) (i32.const 8)))))
    (i32.store8 (i32.const 65) (i32.add (i32.const 48)
      (i64.eq (i64.reinterpret_f64 (local.get $tenth)) (i64.const 0x3FB999999999999A))))
    (local.set $inf (f64.div (f64.const 1)
      (f64.sub (f64.convert_i32_u (local.get $n)) (f64.convert_i32_u (local.get $n)))))
    (i32.store8 (i32.const 66) (i32.add (i32.const 48)
      (i64.eq (i64.reinterpret_f64 (local.get $inf)) (i64.const 0x7FF0000000000000))))
    (i32.store8 (i32.const 16) (i32.const 1))
    (i32.store8 (i32.const 20) (i32.const 1))
    (i32.store (i32.const 24) (i32.const 64))
    (i32.store (i32.const 28) (i32.const 3))
    (i32.store8 (i32.const 32) (i32.const 0))
    (i32.const 16)))"#;

/// MXCSR's control bits and their default (every exception masked, round
/// to nearest, no FTZ or DAZ).
const CONTROL: u32 = 0xFFC0;
const DEFAULT: u32 = 0x1F80;

fn mxcsr() -> u32 {
    let mut csr: u32 = 0;
    // SAFETY: stores MXCSR into a live local. The test stands in for an
    // embedder that changed its thread's environment; there is no safe API
    // for that.
    #[allow(unsafe_code)]
    unsafe {
        asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack, preserves_flags));
    }
    csr
}

fn set_mxcsr(csr: u32) {
    // SAFETY: loads MXCSR from a live local holding a value read from MXCSR
    // with only control bits changed (no reserved bit set).
    #[allow(unsafe_code)]
    unsafe {
        asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack, preserves_flags, readonly));
    }
}

/// The guest's reason when called from a thread whose MXCSR control bits
/// are `control`, and those bits when the call has returned.
fn reason_from(control: u32) -> (String, u32) {
    let verifier = host()
        .load_bytes(&core_guest::component(GUEST))
        .expect("loads")
        .0;
    let (tenant, _) = ready_tenant("fpenv");
    let packet = read_packet();
    assert_eq!(packet.iteration, 2, "the guest's inputs");
    std::thread::spawn(move || {
        set_mxcsr((mxcsr() & !CONTROL) | control);
        let verdict = verifier
            .check(&tenant, &packet, &CheckContext::new())
            .result;
        let after = mxcsr() & CONTROL;
        set_mxcsr((mxcsr() & !CONTROL) | DEFAULT);
        (
            verdict
                .expect("a verdict")
                .into_parts()
                .reason
                .expect("a reason"),
            after,
        )
    })
    .join()
    .expect("the caller's thread ran")
}

#[test]
fn the_default_environment_passes_every_check() {
    assert_eq!(reason_from(DEFAULT), ("111".to_owned(), DEFAULT));
}

#[test]
fn flush_to_zero_and_denormals_are_zero_do_not_reach_the_guest() {
    let ftz_daz = DEFAULT | 0x8040;
    assert_eq!(reason_from(ftz_daz), ("111".to_owned(), ftz_daz));
}

#[test]
fn another_rounding_mode_does_not_reach_the_guest() {
    for rounding in [0x2000, 0x4000, 0x6000] {
        let control = DEFAULT | rounding;
        assert_eq!(reason_from(control), ("111".to_owned(), control));
    }
}

#[test]
fn an_unmasked_exception_does_not_reach_the_guest() {
    // Divide-by-zero and invalid-operation exceptions unmasked.
    let unmasked = DEFAULT & !0x0280;
    assert_eq!(reason_from(unmasked), ("111".to_owned(), unmasked));
}
