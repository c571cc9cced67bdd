//! Shared helpers for the integration tests: paths of the guest components
//! the build script compiled, a shared verifier host, tenants and packets.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // test support: failing loudly is the point

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use verdict_policy::{
    CheckContext, CheckPacket, Effect, MAX_OUTPUT_CHARS, Observation, ObservedOutcome,
    OutcomeStatus, PacketParts,
};
use verdict_sandbox::{HostConfig, Limits, LoadedVerifier, MemoryStore, Tenant, VerifierHost};

/// `pub const NAME: &str` (absolute `.wasm` path) per guest, plus `ALL`.
pub mod guests {
    include!(concat!(env!("OUT_DIR"), "/guests.rs"));
}

/// Lean builds of some of the same guests (`wasm32-unknown-unknown`, made
/// components: from WASI only standard error), named as in [`guests`].
pub mod lean_guests {
    include!(concat!(env!("OUT_DIR"), "/lean_guests.rs"));
}

/// Hostile guests written as core modules (`tests/guests/core-*.wat`, see
/// `tests/guests/README.md`), turned into verifier components.
pub mod core_guest {
    use std::path::PathBuf;

    /// The text of `tests/guests/core-{name}.wat`.
    pub fn source(name: &str) -> String {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../guests")
            .join(format!("core-{name}.wat"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The component for `tests/guests/core-{name}.wat`: a completion
    /// checker, or a progress checker when the module exports `progress-key`.
    pub fn load(name: &str) -> Vec<u8> {
        component(&source(name))
    }

    /// `items` (module fields in text form) as a core module with a memory
    /// and a bump allocator as its `cabi_realloc` (nothing is ever freed:
    /// each instance serves one call).
    pub fn with_bump_allocator(items: &str) -> String {
        format!(
            r#"(module
  (memory (export "memory") 16)
  (global $next (mut i32) (i32.const 1024))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
    (local $p i32)
    (local.set $p
      (i32.and
        (i32.add (global.get $next) (i32.sub (local.get 2) (i32.const 1)))
        (i32.xor (i32.sub (local.get 2) (i32.const 1)) (i32.const -1))))
    (global.set $next (i32.add (local.get $p) (local.get 3)))
    (local.get $p))
{items})"#
        )
    }

    /// `core_wat` with `items` (module fields in text form) added at its end.
    pub fn with_items(core_wat: &str, items: &str) -> String {
        let end = core_wat.rfind(')').expect("a module");
        format!("{}\n{items}{}", &core_wat[..end], &core_wat[end..])
    }

    /// Wraps a core module (text) as a component of the `completion-checker`
    /// world, or of `progress-checker` when it exports `progress-key`; a
    /// module exporting `verdict:verifier/warm-up@0.1.1#warm` is of the
    /// `warm-` world of `0.1.1` instead (its other exports named `@0.1.1`).
    pub fn component(core_wat: &str) -> Vec<u8> {
        let role = if core_wat.contains("#progress-key") {
            "progress-checker"
        } else {
            "completion-checker"
        };
        let warm = core_wat.contains("verdict:verifier/warm-up@0.1.1#warm");
        let (world, dir) = if warm {
            (format!("warm-{role}"), wit_dir_of("0.1.1"))
        } else {
            (role.to_owned(), wit_dir())
        };
        let world = world.as_str();
        let mut resolve = wit_parser::Resolve::default();
        let (package, _) = resolve.push_path(dir).expect("the WIT parses");
        let world = resolve
            .select_world(&[package], Some(world))
            .expect("the world exists");
        encode(core_wat, &resolve, world)
    }

    /// Wraps a core module (binary) as [`component`] wraps one in text.
    pub fn component_of(module: &[u8]) -> Vec<u8> {
        let mut resolve = wit_parser::Resolve::default();
        let (package, _) = resolve.push_path(wit_dir()).expect("the WIT parses");
        let world = resolve
            .select_world(&[package], Some("completion-checker"))
            .expect("the world exists");
        let mut module = module.to_vec();
        wit_component::embed_component_metadata(&mut module, &resolve, world, StringEncoding::UTF8)
            .expect("metadata embeds");
        wit_component::ComponentEncoder::default()
            .validate(false)
            .module(&module)
            .expect("the module is accepted")
            .encode()
            .expect("the component encodes")
    }

    /// The core module `core_wat` (text) with `count` functions of type
    /// `(func)` added, the `i`th with the body `body(index)` (its locals and
    /// code, see [`func_body`]; `index` is the function's own index). Made
    /// in binary, for shapes whose text would be gigabytes (a function
    /// declaring 50,000 locals is 7 bytes).
    pub fn with_functions(core_wat: &str, count: u32, body: impl Fn(u32) -> Vec<u8>) -> Vec<u8> {
        use wasmparser::{Parser, Payload};
        let module = wat::parse_str(core_wat).expect("the core module parses");
        let mut out = module[..8].to_vec();
        let mut first = 0u32; // the index of the first added function
        for payload in Parser::new(0).parse_all(&module) {
            let payload = payload.expect("the core module parses");
            let Some((id, range)) = payload.as_section() else {
                continue;
            };
            let contents = &module[range.clone()];
            let added = match &payload {
                Payload::ImportSection(reader) => {
                    for import in reader.clone() {
                        if matches!(
                            import.expect("imports parse").ty,
                            wasmparser::TypeRef::Func(_)
                        ) {
                            first += 1;
                        }
                    }
                    None
                }
                // One more type: `(func)`, the added functions' type.
                Payload::TypeSection(reader) => Some((1, vec![0x60, 0, 0], reader.count())),
                Payload::FunctionSection(reader) => {
                    let types = type_count(&module);
                    let mut items = Vec::new();
                    for _ in 0..count {
                        leb(&mut items, u64::from(types - 1));
                    }
                    first += reader.count();
                    Some((count, items, reader.count()))
                }
                Payload::CodeSectionStart { count: n, .. } => {
                    let mut items = Vec::new();
                    for i in 0..count {
                        let body = body(first + i);
                        leb(&mut items, body.len() as u64);
                        items.extend_from_slice(&body);
                    }
                    Some((count, items, *n))
                }
                _ => None,
            };
            let mut section = Vec::new();
            match added {
                Some((more, items, old)) => {
                    let mut reader = wasmparser::BinaryReader::new(contents, 0);
                    reader.read_var_u32().expect("a count");
                    leb(&mut section, u64::from(old + more));
                    section.extend_from_slice(&contents[reader.current_position()..]);
                    section.extend_from_slice(&items);
                }
                None => section.extend_from_slice(contents),
            }
            out.push(id);
            leb(&mut out, section.len() as u64);
            out.extend_from_slice(&section);
        }
        out
    }

    /// The types a core module declares.
    fn type_count(module: &[u8]) -> u32 {
        for payload in wasmparser::Parser::new(0).parse_all(module) {
            if let Ok(wasmparser::Payload::TypeSection(reader)) = payload {
                return reader.count() + 1;
            }
        }
        panic!("the module declares types")
    }

    /// A function body: its locals (`count` of value type `ty`, e.g. 0x7e
    /// for i64) and `code` (`end` is added).
    pub fn func_body(locals: &[(u32, u8)], code: &[u8]) -> Vec<u8> {
        let mut body = Vec::new();
        leb(&mut body, locals.len() as u64);
        for (count, ty) in locals {
            leb(&mut body, u64::from(*count));
            body.push(*ty);
        }
        body.extend_from_slice(code);
        body.push(0x0b);
        body
    }

    /// Appends `value` as unsigned LEB128.
    pub fn leb(out: &mut Vec<u8>, mut value: u64) {
        loop {
            let byte = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }

    /// The folder of the WIT version the guests are built against.
    pub fn wit_dir() -> PathBuf {
        wit_dir_of("0.1.0")
    }

    /// `wit/verdict-verifier@{version}`.
    pub fn wit_dir_of(version: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../wit/verdict-verifier@{version}"))
    }

    /// Encodes a core module (text) as a component of `world`, unvalidated
    /// (hostile modules break the canonical ABI on purpose).
    pub fn encode(
        core_wat: &str,
        resolve: &wit_parser::Resolve,
        world: wit_parser::WorldId,
    ) -> Vec<u8> {
        encode_as(core_wat, resolve, world, StringEncoding::UTF8)
    }

    pub use wit_component::StringEncoding;

    /// [`encode`], with the strings of every function in `encoding`.
    pub fn encode_as(
        core_wat: &str,
        resolve: &wit_parser::Resolve,
        world: wit_parser::WorldId,
        encoding: StringEncoding,
    ) -> Vec<u8> {
        let mut module = wat::parse_str(core_wat).expect("the core module parses");
        wit_component::embed_component_metadata(&mut module, resolve, world, encoding)
            .expect("metadata embeds");
        wit_component::ComponentEncoder::default()
            .validate(false)
            .module(&module)
            .expect("the module is accepted")
            .encode()
            .expect("the component encodes")
    }
}

/// The compile cache the tests share (under the workspace's target dir).
pub fn cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/verdict-test-cache")
}

/// One host per test binary, with the shared compile cache.
pub fn host() -> &'static VerifierHost {
    static HOST: OnceLock<VerifierHost> = OnceLock::new();
    HOST.get_or_init(|| {
        VerifierHost::new(HostConfig {
            cache_dir: Some(cache_dir()),
            ..HostConfig::default()
        })
        .expect("verifier host starts")
    })
}

/// A host like [`host`] that calls only the standard exports, never the
/// packed entry points (`HostConfig::packed_packets` false).
pub fn standard_host() -> &'static VerifierHost {
    static HOST: OnceLock<VerifierHost> = OnceLock::new();
    HOST.get_or_init(|| {
        VerifierHost::new(HostConfig {
            cache_dir: Some(cache_dir()),
            packed_packets: false,
            ..HostConfig::default()
        })
        .expect("verifier host starts")
    })
}

/// Loads a guest by path with the shared host.
pub fn load(path: &str) -> LoadedVerifier {
    host()
        .load_file(path)
        .unwrap_or_else(|e| panic!("{path} loads: {e}"))
}

/// Two tenants with `ready` ready instances each, for a guest that never
/// returns: one stopped by a deadline of [`SPIN_TIMEOUT_MS`], one by a
/// budget of [`SPIN_FUEL`].
pub fn spin_stoppers(prefix: &str, ready: usize) -> (Tenant, Tenant) {
    let tenant = |suffix: &str, limits: Limits| {
        ready_tenant(&format!("{prefix}-{suffix}"))
            .0
            .with_ready_instances(ready)
            .with_limits(limits)
    };
    let by_deadline = Limits {
        fuel: u64::MAX / 2,
        timeout_ms: SPIN_TIMEOUT_MS,
        ..Limits::default()
    };
    let by_fuel = Limits {
        fuel: SPIN_FUEL,
        timeout_ms: 60_000,
        ..Limits::default()
    };
    (tenant("deadline", by_deadline), tenant("fuel", by_fuel))
}

/// The deadline of [`spin_stoppers`]' first tenant, in milliseconds.
pub const SPIN_TIMEOUT_MS: u64 = 50;
/// The fuel budget of [`spin_stoppers`]' second tenant.
pub const SPIN_FUEL: u64 = 5_000_000;

/// Asserts that a check of `verifier` (which never returns) is stopped by
/// each of [`spin_stoppers`]' tenants, with the error that names its limit.
pub fn assert_spin_stopped(verifier: &LoadedVerifier, (by_deadline, by_fuel): &(Tenant, Tenant)) {
    use verdict_sandbox::CheckError;
    let ctx = verdict_policy::CheckContext::new();
    let timed_out = verifier.check(by_deadline, &read_packet(), &ctx);
    assert_eq!(
        timed_out.result,
        Err(CheckError::Timeout {
            limit_ms: SPIN_TIMEOUT_MS
        })
    );
    let out_of_fuel = verifier.check(by_fuel, &read_packet(), &ctx);
    assert_eq!(
        out_of_fuel.result,
        Err(CheckError::OutOfFuel { budget: SPIN_FUEL })
    );
}

/// Waits until `verifier` holds at least `n` ready instances, calling
/// `ask` (a check that takes one and queues its refills) after each 100 ms
/// without them: a refill is dropped unrun, and asked for again by the next
/// check, when the teardown queue is full (as it is when tests running
/// beside this one queue stores faster than the thread drops them).
pub fn wait_for_ready(verifier: &LoadedVerifier, n: usize, ask: impl Fn()) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut next_ask = std::time::Instant::now() + std::time::Duration::from_millis(100);
    while verifier.ready_instances() < n {
        let now = std::time::Instant::now();
        assert!(now < until, "the pool never refilled");
        if now >= next_ask {
            ask();
            next_ask = now + std::time::Duration::from_millis(100);
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// A tenant with an in-memory store holding `A42 = {"ready": true}`.
pub fn ready_tenant(id: &str) -> (Tenant, Arc<MemoryStore>) {
    let store = Arc::new(MemoryStore::new());
    store
        .insert("A42", br#"{"id":"A42","ready":true}"#.to_vec())
        .expect("valid id");
    (Tenant::new(id, Limits::default(), store.clone()), store)
}

/// An observation of a settled tool call.
pub fn observation(tool: &str, call: &str, effect: Effect, status: OutcomeStatus) -> Observation {
    Observation {
        tool_name: tool.into(),
        call_id: call.into(),
        effect,
        outcome: Some(ObservedOutcome {
            status,
            failure: None,
            executed: status == OutcomeStatus::Succeeded,
            result_fingerprint: None,
        }),
    }
}

/// The fields of a packet whose history holds one successful
/// `read_artifact` call (change them, then [`check_packet`]).
pub fn read_parts() -> PacketParts {
    PacketParts {
        execution_id: "exec-test".into(),
        iteration: 2,
        output_text: "A42 is ready.".into(),
        output_truncated: false,
        observations: vec![observation(
            "read_artifact",
            "call-1",
            Effect::Read,
            OutcomeStatus::Succeeded,
        )],
        observed_tool_calls: 1,
        observations_truncated: false,
        task_state: None,
    }
}

/// `parts` as a packet, which must be within every bound.
pub fn check_packet(parts: PacketParts) -> CheckPacket {
    CheckPacket::from_parts(parts).expect("a packet within every bound")
}

/// A packet whose history holds one successful `read_artifact` call.
pub fn read_packet() -> CheckPacket {
    check_packet(read_parts())
}

/// The largest packet the spec allows: 100 observations and 32,768
/// characters of output.
pub fn max_packet() -> CheckPacket {
    let mut packet = read_parts();
    packet.output_text = "x".repeat(MAX_OUTPUT_CHARS);
    packet.observations = (0..100)
        .map(|i| {
            observation(
                if i == 99 {
                    "read_artifact"
                } else {
                    "list_files"
                },
                &format!("call-{i}"),
                Effect::Read,
                OutcomeStatus::Succeeded,
            )
        })
        .collect();
    packet.observed_tool_calls = 250;
    packet.observations_truncated = true;
    check_packet(packet)
}

/// Asserts that the shared host still serves the good verifier correctly.
pub fn assert_good_verifier_still_works() {
    let verifier = load(guests::ARTIFACT_READY);
    let (tenant, _) = ready_tenant("good");
    let outcome = verifier.check(&tenant, &read_packet(), &CheckContext::new());
    let verdict = outcome.result.expect("good verifier answers");
    assert!(verdict.complete, "good verifier completes: {verdict:?}");
}
