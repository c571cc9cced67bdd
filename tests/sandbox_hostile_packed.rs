//! The packed entry points (`verdict:packed@0.1.0`) as a component built
//! without the guest SDK may present them: hand-written core modules that
//! export them beside the standard `check`, with the wrong type, alone, with
//! a broken allocator, or with strings in another encoding. The host calls
//! a packed entry point only beside a standard export it has typechecked,
//! refuses a wrongly typed one at load, and reports every fault of the
//! packed call with the same typed kinds as the standard call's.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::PathBuf;
use verdict_policy::{CheckContext, Verdict};
use verdict_sandbox::{CheckError, LoadError, LoadedVerifier, Role, TrapKind, VerifierHost};
use verdict_test_support::core_guest::{self, StringEncoding};
use verdict_test_support::{host, read_packet, ready_tenant, standard_host};

/// The folder of the packed package.
fn packed_wit_dir() -> PathBuf {
    core_guest::wit_dir().join("../verdict-packed@0.1.0")
}

/// A WIT package claiming the packed name with a `check` of another type.
const WRONG_PACKED: &str = "package verdict:packed@0.1.0;
interface completion {
    check: func(packet: string) -> bool;
}
world wrong {
    export completion;
}
";

/// Where the packed exports come from, if anywhere.
enum Packed {
    /// The real package's completion world.
    Real,
    /// [`WRONG_PACKED`].
    Wrong,
}

/// The component for `core_wat`: the standard completion world when
/// `standard`, merged with the packed world `packed` names, its strings in
/// `encoding`.
fn component(
    core_wat: &str,
    standard: bool,
    packed: Option<Packed>,
    encoding: StringEncoding,
) -> Vec<u8> {
    let mut resolve = wit_parser::Resolve::default();
    let packed = packed.map(|packed| match packed {
        Packed::Real => {
            let (id, _) = resolve.push_path(packed_wit_dir()).expect("the WIT parses");
            resolve
                .select_world(&[id], Some("packed-completion-checker"))
                .expect("the world exists")
        }
        Packed::Wrong => {
            let id = resolve
                .push_str("wrong.wit", WRONG_PACKED)
                .expect("the WIT parses");
            resolve
                .select_world(&[id], Some("wrong"))
                .expect("the world exists")
        }
    });
    let world = if standard {
        let (id, _) = resolve
            .push_path(core_guest::wit_dir())
            .expect("the WIT parses");
        let world = resolve
            .select_world(&[id], Some("completion-checker"))
            .expect("the world exists");
        if let Some(packed) = packed {
            resolve
                .merge_worlds(packed, world)
                .expect("the worlds merge");
        }
        world
    } else {
        packed.expect("some world")
    };
    core_guest::encode_as(core_wat, &resolve, world, encoding)
}

/// A core module answering `complete` with the reason `standard` from the
/// standard `check` and `packed` from the packed one (when `packed`), its
/// allocator a bump allocator, or one returning a pointer outside memory
/// when `bad_realloc`.
fn module(standard: bool, packed: bool, bad_realloc: bool) -> String {
    let realloc = if bad_realloc {
        "(i32.const 0xFFFF0000)"
    } else {
        "(local $p i32)
         (local.set $p (i32.and
           (i32.add (global.get $next) (i32.sub (local.get 2) (i32.const 1)))
           (i32.xor (i32.sub (local.get 2) (i32.const 1)) (i32.const -1))))
         (global.set $next (i32.add (local.get $p) (local.get 3)))
         (local.get $p)"
    };
    let mut items = String::new();
    if standard {
        items.push_str(
            r#"(func (export "verdict:verifier/completion@0.1.0#check") (param i32) (result i32)
                 (call $answer (i32.const 64) (i32.const 8)))"#,
        );
    }
    if packed {
        items.push_str(
            r#"(func (export "verdict:packed/completion@0.1.0#check") (param i32) (result i32)
                 (call $answer (i32.const 80) (i32.const 6)))"#,
        );
    }
    format!(
        r#"(module
  (memory (export "memory") 16)
  (global $next (mut i32) (i32.const 1024))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) {realloc})
  ;; complete, with the reason at `ptr` (`len` bytes), no feedback.
  (func $answer (param $ptr i32) (param $len i32) (result i32)
    (i32.store8 (i32.const 16) (i32.const 1))
    (i32.store8 (i32.const 20) (i32.const 1))
    (i32.store (i32.const 24) (local.get $ptr))
    (i32.store (i32.const 28) (local.get $len))
    (i32.store8 (i32.const 32) (i32.const 0))
    (i32.const 16))
  {items}
  (data (i32.const 64) "standard")
  (data (i32.const 80) "packed"))"#
    )
}

fn load(host: &VerifierHost, bytes: &[u8]) -> Result<LoadedVerifier, LoadError> {
    host.load_bytes(bytes).map(|(verifier, _)| verifier)
}

fn check(verifier: &LoadedVerifier) -> Result<Verdict, CheckError> {
    let (tenant, _) = ready_tenant("packed");
    verifier
        .check(&tenant, &read_packet(), &CheckContext::new())
        .result
}

fn reason(verifier: &LoadedVerifier) -> String {
    check(verifier)
        .expect("a verdict")
        .into_parts()
        .reason
        .expect("a reason")
}

#[test]
fn the_packed_entry_point_is_called_beside_the_standard_one() {
    let bytes = component(
        &module(true, true, false),
        true,
        Some(Packed::Real),
        StringEncoding::UTF8,
    );
    let packed = load(host(), &bytes).expect("loads");
    assert!(packed.calls_packed(Role::Completion));
    assert_eq!(reason(&packed), "packed");

    let standard = load(standard_host(), &bytes).expect("loads");
    assert!(!standard.calls_packed(Role::Completion));
    assert_eq!(reason(&standard), "standard");

    // Without a packed export, the standard one is called.
    let plain = component(
        &module(true, false, false),
        true,
        None,
        StringEncoding::UTF8,
    );
    let plain = load(host(), &plain).expect("loads");
    assert!(!plain.calls_packed(Role::Completion));
    assert_eq!(reason(&plain), "standard");
}

#[test]
fn a_packed_export_of_the_wrong_type_is_refused_at_load() {
    let items = r#"(func (export "verdict:packed/completion@0.1.0#check") (param i32 i32) (result i32)
                     (i32.const 1))"#;
    let wat = core_guest::with_items(&module(true, false, false), items);
    let bytes = component(&wat, true, Some(Packed::Wrong), StringEncoding::UTF8);
    for host in [host(), standard_host()] {
        match load(host, &bytes) {
            Err(LoadError::Link(message)) => assert!(
                message.contains("verdict:packed/completion@0.1.0#check"),
                "{message}"
            ),
            other => panic!("expected a link error, got {other:?}"),
        }
    }
}

#[test]
fn a_packed_export_alone_is_not_a_verifier() {
    let bytes = component(
        &module(false, true, false),
        false,
        Some(Packed::Real),
        StringEncoding::UTF8,
    );
    assert!(matches!(
        load(host(), &bytes),
        Err(LoadError::NoVerifierExport)
    ));
}

#[test]
fn a_bad_allocator_is_reported_from_the_packed_call_too() {
    let bytes = component(
        &module(true, true, true),
        true,
        Some(Packed::Real),
        StringEncoding::UTF8,
    );
    let verifier = load(host(), &bytes).expect("loads");
    assert!(verifier.calls_packed(Role::Completion));
    match check(&verifier) {
        Err(CheckError::Trap {
            kind: TrapKind::BadAllocation,
            ..
        }) => {}
        other => panic!("expected a bad-allocation trap, got {other:?}"),
    }
}

#[test]
fn a_packed_entry_point_lifted_with_utf16_strings_is_an_encoding_fault() {
    let bytes = component(
        &module(true, true, false),
        true,
        Some(Packed::Real),
        StringEncoding::UTF16,
    );
    let verifier = load(host(), &bytes).expect("loads");
    match check(&verifier) {
        Err(CheckError::Trap {
            kind: TrapKind::InvalidEncoding { at },
            ..
        }) => assert!(at.contains("packed"), "{at}"),
        other => panic!("expected an encoding fault, got {other:?}"),
    }
    // The standard export takes UTF-16 as the canonical ABI allows (its
    // reason, ASCII bytes read as UTF-16, is not checked here).
    let standard = load(standard_host(), &bytes).expect("loads");
    assert!(check(&standard).is_ok());
}
