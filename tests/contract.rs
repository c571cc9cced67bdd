//! Contract tests: pairs that must agree and would otherwise agree only by
//! comment.
//!
//! - The guest SDK's bounds are the policy's, and the frozen WIT documents
//!   the same numbers; the SDK accepts exactly the verdicts the policy does.
//! - Every import on the sandbox's allowlist is really linked: a component
//!   importing an item of each instantiates and answers. Imports outside the
//!   allowlist are refused (the linker itself is checked against the
//!   allowlist in `verdict-sandbox`'s `linker` unit tests).
//! - A packet survives policy → WIT → guest SDK field by field: the
//!   `packet-echo` guest returns what it received as the policy's JSON.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail loudly by design

use proptest::prelude::*;
use serde_json::{Value, json};
use verdict_policy::MAX_OBSERVATIONS;
use verdict_policy::{
    CheckContext, CheckPacket, Effect, FailureKind, Observation, ObservedOutcome, OutcomeStatus,
    PacketParts, TaskStateSnapshot,
};
use verdict_sandbox::{ALLOWED_IMPORTS, LoadError, LoadedVerifier, Role, Tenant, VerifierHost};
use verdict_test_support::{core_guest, guests, host, read_packet, ready_tenant, standard_host};

/// The WIT of the version the guest SDK is built against.
const WIT: &str = include_str!("../wit/verdict-verifier@0.1.0/verifier.wit");

/// Every released version's WIT, oldest first: each documents the bounds.
const WITS: [(&str, &str); 2] = [
    ("0.1.0", WIT),
    (
        "0.1.1",
        include_str!("../wit/verdict-verifier@0.1.1/verifier.wit"),
    ),
];

// ---------------------------------------------------------------------------
// Bounds

#[test]
fn the_guest_sdk_bounds_are_the_policys() {
    use verdict_policy as checker;
    use verdict_policy as packet;
    use verdict_policy as verdict;
    assert_eq!(verdict_guest::MAX_REASON_CHARS, verdict::MAX_REASON_CHARS);
    assert_eq!(
        verdict_guest::MAX_FEEDBACK_CHARS,
        verdict::MAX_FEEDBACK_CHARS
    );
    assert_eq!(verdict_guest::MAX_VERDICT_BYTES, verdict::MAX_VERDICT_BYTES);
    assert_eq!(
        verdict_guest::MAX_PROGRESS_KEY_CHARS,
        checker::MAX_PROGRESS_KEY_CHARS
    );
    assert_eq!(verdict_guest::MAX_OUTPUT_CHARS, packet::MAX_OUTPUT_CHARS);
    assert_eq!(verdict_guest::MAX_OBSERVATIONS, packet::MAX_OBSERVATIONS);
    assert_eq!(verdict_guest::MAX_PACKET_BYTES, packet::MAX_PACKET_BYTES);
}

/// `n` with thousands separators, the way the WIT's comments write numbers.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// A WIT's doc comments as one line of prose.
fn wit_prose(wit: &str) -> String {
    wit.lines()
        .filter_map(|line| line.trim().strip_prefix("///"))
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A changed bound is a changed contract: a new WIT version, not an edit of
/// the frozen one.
#[test]
fn the_frozen_wit_documents_the_policys_bounds() {
    use verdict_policy as packet;
    use verdict_policy as verdict;
    const MIB: usize = 1024 * 1024;
    const KIB: usize = 1024;
    assert!(packet::MAX_PACKET_BYTES.is_multiple_of(MIB));
    assert!(verdict::MAX_VERDICT_BYTES.is_multiple_of(KIB));
    for (version, wit) in WITS {
        let prose = wit_prose(wit);
        for phrase in the_bounds_in_prose() {
            assert!(
                prose.contains(&phrase),
                "the WIT of {version} should say {phrase:?}"
            );
        }
    }
    assert_eq!(grouped(32_768), "32,768");
    assert_eq!(grouped(400), "400");
    assert_eq!(grouped(1_000_000), "1,000,000");
}

/// A patch release adds and changes nothing: `0.1.1` is `0.1.0` with the
/// optional `warm-up` interface and its worlds inserted, byte for byte.
#[test]
fn the_patch_release_only_adds_the_warm_up_export() {
    let (_, patch) = WITS[1];
    let start = patch
        .find("/// Optionally exported beside")
        .expect("0.1.1 documents warm-up");
    let end_marker = "world warm-checker {\n    include checker;\n    export warm-up;\n}\n\n";
    let end = patch.find(end_marker).expect("0.1.1 has warm-checker") + end_marker.len();
    let added = &patch[start..end];
    assert!(added.contains("interface warm-up {") && added.contains("warm: func();"));
    let without = format!("{}{}", &patch[..start], &patch[end..]).replacen(
        "package verdict:verifier@0.1.1;",
        "package verdict:verifier@0.1.0;",
        1,
    );
    assert_eq!(without, WIT, "0.1.1 changed what 0.1.0 has");
}

/// The bounds each version's WIT states, as its doc comments phrase them.
fn the_bounds_in_prose() -> Vec<String> {
    use verdict_policy as checker;
    use verdict_policy as packet;
    use verdict_policy as verdict;
    const MIB: usize = 1024 * 1024;
    const KIB: usize = 1024;
    vec![
        format!(
            "Candidate final output, at most {} characters",
            grouped(packet::MAX_OUTPUT_CHARS)
        ),
        format!(
            "The last (at most {}) observations",
            packet::MAX_OBSERVATIONS
        ),
        format!(
            "(whole packet at most {} MiB serialized)",
            packet::MAX_PACKET_BYTES / MIB
        ),
        format!(
            "reason at most {} characters, feedback at most {}",
            grouped(verdict::MAX_REASON_CHARS),
            grouped(verdict::MAX_FEEDBACK_CHARS)
        ),
        format!(
            "the whole verdict at most {} KiB (bytes) as JSON",
            verdict::MAX_VERDICT_BYTES / KIB
        ),
        format!(
            "A host state/version string of at most {} characters",
            grouped(checker::MAX_PROGRESS_KEY_CHARS)
        ),
    ]
}

/// Around each bound, in characters of one, two and four bytes and in the
/// character JSON escapes longest (a control character, six bytes): what
/// `Verdict::within_bounds` promises a verifier's tests is what the host
/// enforces, the byte bound included.
#[test]
fn the_guest_sdk_accepts_exactly_the_verdicts_the_policy_accepts() {
    use verdict_guest::{MAX_FEEDBACK_CHARS, MAX_REASON_CHARS};
    let around = |bound: usize| [0, 1, bound - 1, bound, bound + 1];
    let mut checked = 0;
    for unit in ["x", "é", "\u{1F600}", "\u{1}", "\""] {
        for reason in around(MAX_REASON_CHARS) {
            for feedback in around(MAX_FEEDBACK_CHARS) {
                let guest = verdict_guest::Verdict {
                    complete: false,
                    reason: Some(unit.repeat(reason)),
                    feedback: Some(unit.repeat(feedback)),
                };
                let host = verdict_policy::VerdictParts {
                    complete: guest.complete,
                    reason: guest.reason.clone(),
                    feedback: guest.feedback.clone(),
                };
                assert_eq!(
                    guest.within_bounds(),
                    host.validate().is_ok(),
                    "{unit:?}: reason {reason}, feedback {feedback}: {:?}",
                    host.validate()
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 5 * 5 * 5);
}

// ---------------------------------------------------------------------------
// Imports

/// Minimal WASI 0.2 packages: one item of every interface the allowlist
/// names, spelled as in WASI 0.2 (a subset links against the full host
/// interface). Listed in dependency order.
const WASI_STUBS: &[&str] = &[
    "package wasi:io@0.2.0;
     interface error { resource error; }
     interface poll { resource pollable; }
     interface streams { resource input-stream; resource output-stream; }",
    "package wasi:clocks@0.2.0;
     interface monotonic-clock { now: func() -> u64; }
     interface wall-clock {
         record datetime { seconds: u64, nanoseconds: u32 }
         now: func() -> datetime;
     }",
    "package wasi:random@0.2.0;
     interface random { get-random-u64: func() -> u64; }
     interface insecure { get-insecure-random-u64: func() -> u64; }
     interface insecure-seed { insecure-seed: func() -> tuple<u64, u64>; }",
    "package wasi:cli@0.2.0;
     interface environment { get-arguments: func() -> list<string>; }
     interface exit { exit: func(status: result); }
     interface stdin {
         use wasi:io/streams@0.2.0.{input-stream};
         get-stdin: func() -> input-stream;
     }
     interface stdout {
         use wasi:io/streams@0.2.0.{output-stream};
         get-stdout: func() -> output-stream;
     }
     interface stderr {
         use wasi:io/streams@0.2.0.{output-stream};
         get-stderr: func() -> output-stream;
     }
     interface terminal-input { resource terminal-input; }
     interface terminal-output { resource terminal-output; }
     interface terminal-stdin {
         use terminal-input.{terminal-input};
         get-terminal-stdin: func() -> option<terminal-input>;
     }
     interface terminal-stdout {
         use terminal-output.{terminal-output};
         get-terminal-stdout: func() -> option<terminal-output>;
     }
     interface terminal-stderr {
         use terminal-output.{terminal-output};
         get-terminal-stderr: func() -> option<terminal-output>;
     }",
    "package wasi:filesystem@0.2.0;
     interface types { resource descriptor; }
     interface preopens {
         use types.{descriptor};
         get-directories: func() -> list<tuple<descriptor, string>>;
     }",
    "package wasi:sockets@0.2.0;
     interface network {
         resource network;
         enum error-code {
             unknown, access-denied, not-supported, invalid-argument, out-of-memory,
             timeout, concurrency-conflict, not-in-progress, would-block, invalid-state,
             new-socket-limit, address-not-bindable, address-in-use, remote-unreachable,
             connection-refused, connection-reset, connection-aborted, datagram-too-large,
             name-unresolvable, temporary-resolver-failure, permanent-resolver-failure,
         }
         enum ip-address-family { ipv4, ipv6 }
     }
     interface instance-network {
         use network.{network};
         instance-network: func() -> network;
     }
     interface tcp { resource tcp-socket; }
     interface tcp-create-socket {
         use network.{error-code, ip-address-family};
         use tcp.{tcp-socket};
         create-tcp-socket: func(address-family: ip-address-family) -> result<tcp-socket, error-code>;
     }
     interface udp { resource udp-socket; }
     interface udp-create-socket {
         use network.{error-code, ip-address-family};
         use udp.{udp-socket};
         create-udp-socket: func(address-family: ip-address-family) -> result<udp-socket, error-code>;
     }
     interface ip-name-lookup { resource resolve-address-stream; }",
    "package wasi:http@0.2.0;
     interface types { resource fields; }",
];

/// Per allowed interface, the core import that makes a component import it:
/// (interface, core name, lowered signature). `verdict:verifier/types` has
/// no function: the completion export's use of its types imports it.
const CORE_IMPORTS: &[(&str, Option<(&str, &str)>)] = &[
    ("verdict:verifier/types", None),
    (
        "verdict:verifier/artifacts",
        Some(("read", "(param i32 i32 i32)")),
    ),
    (
        "wasi:io/error",
        Some(("[resource-drop]error", "(param i32)")),
    ),
    (
        "wasi:io/poll",
        Some(("[resource-drop]pollable", "(param i32)")),
    ),
    (
        "wasi:io/streams",
        Some(("[resource-drop]input-stream", "(param i32)")),
    ),
    ("wasi:clocks/monotonic-clock", Some(("now", "(result i64)"))),
    ("wasi:clocks/wall-clock", Some(("now", "(param i32)"))),
    (
        "wasi:random/random",
        Some(("get-random-u64", "(result i64)")),
    ),
    (
        "wasi:random/insecure",
        Some(("get-insecure-random-u64", "(result i64)")),
    ),
    (
        "wasi:random/insecure-seed",
        Some(("insecure-seed", "(param i32)")),
    ),
    (
        "wasi:cli/environment",
        Some(("get-arguments", "(param i32)")),
    ),
    ("wasi:cli/exit", Some(("exit", "(param i32)"))),
    ("wasi:cli/stdin", Some(("get-stdin", "(result i32)"))),
    ("wasi:cli/stdout", Some(("get-stdout", "(result i32)"))),
    ("wasi:cli/stderr", Some(("get-stderr", "(result i32)"))),
    (
        "wasi:cli/terminal-input",
        Some(("[resource-drop]terminal-input", "(param i32)")),
    ),
    (
        "wasi:cli/terminal-output",
        Some(("[resource-drop]terminal-output", "(param i32)")),
    ),
    (
        "wasi:cli/terminal-stdin",
        Some(("get-terminal-stdin", "(param i32)")),
    ),
    (
        "wasi:cli/terminal-stdout",
        Some(("get-terminal-stdout", "(param i32)")),
    ),
    (
        "wasi:cli/terminal-stderr",
        Some(("get-terminal-stderr", "(param i32)")),
    ),
    (
        "wasi:filesystem/types",
        Some(("[resource-drop]descriptor", "(param i32)")),
    ),
    (
        "wasi:filesystem/preopens",
        Some(("get-directories", "(param i32)")),
    ),
    (
        "wasi:sockets/network",
        Some(("[resource-drop]network", "(param i32)")),
    ),
    (
        "wasi:sockets/instance-network",
        Some(("instance-network", "(result i32)")),
    ),
    (
        "wasi:sockets/tcp",
        Some(("[resource-drop]tcp-socket", "(param i32)")),
    ),
    (
        "wasi:sockets/tcp-create-socket",
        Some(("create-tcp-socket", "(param i32 i32)")),
    ),
    (
        "wasi:sockets/udp",
        Some(("[resource-drop]udp-socket", "(param i32)")),
    ),
    (
        "wasi:sockets/udp-create-socket",
        Some(("create-udp-socket", "(param i32 i32)")),
    ),
    (
        "wasi:sockets/ip-name-lookup",
        Some(("[resource-drop]resolve-address-stream", "(param i32)")),
    ),
    (
        "wasi:http/types",
        Some(("[resource-drop]fields", "(param i32)")),
    ),
    // See BUILT_GUEST_IMPORT.
    ("wasi:http/outgoing-handler", None),
];

/// The allowed interface shown linked by a built guest rather than a
/// component written here.
const BUILT_GUEST_IMPORT: &str = "wasi:http/outgoing-handler";

/// The `core-good` verifier (complete, reason `ok`) built for a world that
/// exports `completion` and imports `import` (`interface@version`, declared
/// by our WIT or one of `stubs`); the core module imports `item` (name,
/// lowered signature) from it, if given.
fn component(stubs: &[&str], import: &str, item: Option<(&str, &str)>) -> Vec<u8> {
    let mut resolve = wit_parser::Resolve::default();
    resolve
        .push_path(core_guest::wit_dir())
        .expect("the WIT parses");
    for (i, stub) in stubs.iter().enumerate() {
        resolve
            .push_str(format!("stub-{i}.wit"), stub)
            .expect("the stub parses");
    }
    let world = format!(
        "package contract:imports;
         world w {{ import {import}; export verdict:verifier/completion@0.1.0; }}"
    );
    let package = resolve
        .push_str("contract.wit", &world)
        .expect("the contract world parses");
    let world = resolve
        .select_world(&[package], Some("w"))
        .expect("the world exists");
    let mut core = core_guest::source("good");
    if let Some((name, signature)) = item {
        let at = core.find("(module").expect("a module") + "(module".len();
        core.insert_str(
            at,
            &format!("\n  (import \"{import}\" \"{name}\" (func {signature}))"),
        );
    }
    core_guest::encode(&core, &resolve, world)
}

#[test]
fn every_allowed_import_is_linked() {
    let (tenant, _) = ready_tenant("imports");
    for (interface, major_minor) in ALLOWED_IMPORTS {
        let item = CORE_IMPORTS
            .iter()
            .find(|(name, _)| name == interface)
            .unwrap_or_else(|| panic!("no core import for allowed `{interface}`: add one"))
            .1;
        if *interface == BUILT_GUEST_IMPORT {
            // Its one function's types are most of wasi:http: a guest built
            // with the `wasip2` crate imports it, loads and calls it
            // (`tests/sandbox_wasi_deny.rs`).
            let info = host().inspect(&std::fs::read(guests::HOSTILE_WASI_DENY).unwrap());
            assert!(
                info.imports.iter().any(|i| i.starts_with(interface)),
                "{:?}",
                info.imports
            );
            assert_eq!(info.rejected, None);
            continue;
        }
        let import = format!("{interface}@{major_minor}.0");
        let bytes = component(WASI_STUBS, &import, item);
        let inspection = host().inspect(&bytes);
        assert!(
            inspection.imports.contains(&import),
            "the component imports {import}: {:?}",
            inspection.imports
        );
        assert_eq!(inspection.rejected, None, "{import}");
        let (verifier, _) = host()
            .load_bytes(&bytes)
            .unwrap_or_else(|e| panic!("a component importing {import} loads: {e}"));
        let verdict = verifier
            .check(&tenant, &read_packet(), &CheckContext::new())
            .result
            .unwrap_or_else(|e| panic!("a component importing {import} instantiates: {e}"));
        assert!(verdict.complete, "{import}: {verdict:?}");
        assert_eq!(verdict.reason.as_deref(), Some("ok"), "{import}");
    }
    assert_eq!(
        ALLOWED_IMPORTS.len(),
        CORE_IMPORTS.len(),
        "every core import is on the allowlist"
    );
}

/// Imports the host does not serve, each as (a stub package declaring it,
/// the import, a function of it returning `u32`).
const REFUSED: &[(&str, &str, &str)] = &[
    (
        "package wasi:keyvalue@0.2.0; interface store { open: func() -> u32; }",
        "wasi:keyvalue/store@0.2.0",
        "open",
    ),
    (
        "package wasi:http@0.2.0; interface incoming-handler { handle: func() -> u32; }",
        "wasi:http/incoming-handler@0.2.0",
        "handle",
    ),
    (
        "package wasi:filesystem@0.3.0; interface preopens { get-directories: func() -> u32; }",
        "wasi:filesystem/preopens@0.3.0",
        "get-directories",
    ),
    (
        "package verdict:verifier@0.2.0; interface artifacts { read: func() -> u32; }",
        "verdict:verifier/artifacts@0.2.0",
        "read",
    ),
];

#[test]
fn imports_outside_the_allowlist_are_refused() {
    for (stub, import, item) in REFUSED {
        let bytes = component(&[stub], import, Some((item, "(result i32)")));
        assert_eq!(
            host().load_bytes(&bytes).err(),
            Some(LoadError::ForbiddenImport {
                imports: vec![(*import).to_owned()]
            }),
            "{import}"
        );
    }
}

/// A component with several forbidden imports is refused naming every one,
/// at load and by `inspect` (the refusal used to name only the first).
#[test]
fn every_forbidden_import_is_named() {
    let stubs: Vec<&str> = REFUSED.iter().map(|(stub, ..)| *stub).collect();
    let imports: Vec<&str> = REFUSED.iter().map(|(_, import, _)| *import).collect();
    let bytes = several_imports(&stubs, &imports);
    let Some(LoadError::ForbiddenImport { imports: named }) = host().load_bytes(&bytes).err()
    else {
        panic!("refused as forbidden imports");
    };
    let mut sorted = named.clone();
    sorted.sort();
    let mut expected: Vec<String> = imports.iter().map(|i| (*i).to_owned()).collect();
    expected.sort();
    assert_eq!(sorted, expected);
    let rejected = host().inspect(&bytes).rejected.expect("rejected");
    for import in &imports {
        assert!(rejected.contains(import), "{rejected}");
    }
    assert!(!rejected.contains('\n'), "one line: {rejected}");
}

/// The `core-good` verifier importing (without calling) every interface in
/// `imports`, each declared by one of `stubs`.
fn several_imports(stubs: &[&str], imports: &[&str]) -> Vec<u8> {
    let mut resolve = wit_parser::Resolve::default();
    resolve
        .push_path(core_guest::wit_dir())
        .expect("the WIT parses");
    for (i, stub) in stubs.iter().enumerate() {
        resolve
            .push_str(format!("stub-{i}.wit"), stub)
            .expect("the stub parses");
    }
    let lines: String = imports.iter().map(|i| format!("import {i}; ")).collect();
    let world = format!(
        "package contract:imports;
         world w {{ {lines} export verdict:verifier/completion@0.1.0; }}"
    );
    let package = resolve
        .push_str("contract.wit", &world)
        .expect("the contract world parses");
    let world = resolve
        .select_world(&[package], Some("w"))
        .expect("the world exists");
    let mut core = core_guest::source("good");
    let at = core.find("(module").expect("a module") + "(module".len();
    for (import, (_, _, item)) in imports.iter().zip(REFUSED) {
        core.insert_str(
            at,
            &format!("\n  (import \"{import}\" \"{item}\" (func (result i32)))"),
        );
    }
    core_guest::encode(&core, &resolve, world)
}

// ---------------------------------------------------------------------------
// Packet round trip

/// Every variant of every packet enum, options present and absent, text the
/// canonical ABI and JSON must carry unchanged, and extreme integers.
fn full_packet() -> CheckPacket {
    let outcome = |status, failure, executed, fingerprint: Option<&str>| ObservedOutcome {
        status,
        failure,
        executed,
        result_fingerprint: fingerprint.map(str::to_owned),
    };
    let observation = |tool: &str, call: &str, effect, outcome| Observation {
        tool_name: tool.into(),
        call_id: call.into(),
        effect,
        outcome,
    };
    let failed = |kind| Some(outcome(OutcomeStatus::Failed, Some(kind), false, None));
    CheckPacket::from_parts(PacketParts {
        execution_id: "exec-\u{e9}\u{1F600}".into(),
        iteration: u32::MAX,
        output_text: "line 1\nquote \" backslash \\ nul \0 ctrl \u{1} \u{1F600} caf\u{e9}".into(),
        output_truncated: true,
        observations: vec![
            observation(
                "read_artifact",
                "c1",
                Effect::Read,
                Some(outcome(
                    OutcomeStatus::Succeeded,
                    None,
                    true,
                    Some(&"ab".repeat(32)),
                )),
            ),
            observation("write_file", "c2", Effect::Write, None),
            observation(
                "t",
                "c3",
                Effect::Unknown,
                Some(outcome(OutcomeStatus::NotStarted, None, false, None)),
            ),
            observation(
                "t",
                "c4",
                Effect::Write,
                Some(outcome(OutcomeStatus::Unknown, None, true, None)),
            ),
            observation("t", "c5", Effect::Read, failed(FailureKind::Permission)),
            observation("t", "c6", Effect::Read, failed(FailureKind::Arguments)),
            observation(
                "t",
                "c7",
                Effect::Read,
                Some(outcome(
                    OutcomeStatus::Failed,
                    Some(FailureKind::Execution),
                    true,
                    Some("00"),
                )),
            ),
            observation("t", "c8", Effect::Read, failed(FailureKind::Timeout)),
            observation("t", "c9", Effect::Read, failed(FailureKind::Cancelled)),
        ],
        observed_tool_calls: u32::MAX,
        observations_truncated: true,
        task_state: Some(TaskStateSnapshot {
            host_scope: "tenant/\u{1F600}".into(),
            revision: u64::MAX,
            generation: u64::MAX - 1,
            payload: json!({
                "step": 2,
                "ratio": 1.5,
                "negative": -7,
                "none": null,
                "list": [true, "x\u{e9}", {"nested": []}],
            }),
        }),
    })
    .unwrap()
}

/// The other extreme: everything empty, zero, false or absent.
fn empty_packet() -> CheckPacket {
    CheckPacket::from_parts(PacketParts {
        execution_id: String::new(),
        iteration: 0,
        output_text: String::new(),
        output_truncated: false,
        observations: Vec::new(),
        observed_tool_calls: 0,
        observations_truncated: false,
        task_state: None,
    })
    .unwrap()
}

/// The JSON paths at which `actual` differs from `expected`.
fn differences(expected: &Value, actual: &Value, path: &str) -> Vec<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            let mut keys: Vec<&String> = e.keys().chain(a.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .flat_map(|key| {
                    let (e, a) = (e.get(key), a.get(key));
                    let at = format!("{path}.{key}");
                    match (e, a) {
                        (Some(e), Some(a)) => differences(e, a, &at),
                        _ => vec![format!("{at}: sent {e:?}, the guest saw {a:?}")],
                    }
                })
                .collect()
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => e
            .iter()
            .zip(a)
            .enumerate()
            .flat_map(|(i, (e, a))| differences(e, a, &format!("{path}[{i}]")))
            .collect(),
        _ if expected == actual => Vec::new(),
        _ => vec![format!("{path}: sent {expected}, the guest saw {actual}")],
    }
}

#[test]
fn differences_name_the_field() {
    let sent = json!({"a": [1, {"b": "x"}], "c": true, "d": 1});
    let seen = json!({"a": [1, {"b": "y"}], "c": true, "e": 1});
    assert_eq!(
        differences(&sent, &seen, "packet"),
        [
            r#"packet.a[1].b: sent "x", the guest saw "y""#,
            "packet.d: sent Some(Number(1)), the guest saw None",
            "packet.e: sent None, the guest saw Some(Number(1))",
        ]
    );
    assert!(differences(&sent, &sent, "packet").is_empty());
}

/// The packet-echo guest loaded by the host that calls its packed entry
/// points and by the one that calls only the standard exports.
fn echo_verifiers() -> [(LoadedVerifier, bool); 2] {
    let load = |host: &VerifierHost, packed: bool| {
        let verifier = host
            .load_file(guests::PACKET_ECHO)
            .unwrap_or_else(|e| panic!("packet-echo loads: {e}"));
        for role in [Role::Completion, Role::Progress] {
            assert_eq!(verifier.calls_packed(role), packed, "{role:?}");
        }
        (verifier, packed)
    };
    [load(host(), true), load(standard_host(), false)]
}

/// What the echo guest answers for `packet`: its progress key and its
/// completion feedback (each the echo, or its digest when too long).
fn echoes(verifier: &LoadedVerifier, tenant: &Tenant, packet: &CheckPacket) -> (String, String) {
    let key = verifier
        .progress_key(tenant, packet, &CheckContext::new())
        .result
        .expect("the progress role answers");
    let verdict = verifier
        .check(tenant, packet, &CheckContext::new())
        .result
        .expect("the completion role answers");
    assert!(!verdict.complete);
    assert_eq!(verdict.reason.as_deref(), Some("echo"));
    (key, verdict.into_parts().feedback.expect("the echo"))
}

#[test]
fn a_packet_reaches_the_guest_sdk_field_by_field() {
    let (tenant, _) = ready_tenant("echo");
    for (verifier, packed) in echo_verifiers() {
        for packet in [full_packet(), empty_packet()] {
            let expected = serde_json::to_value(&packet).expect("the packet serializes");
            let (key, feedback) = echoes(&verifier, &tenant, &packet);
            for (role, echo) in [("progress", key), ("completion", feedback)] {
                let echoed: Value = serde_json::from_str(&echo).expect("the echo is JSON");
                assert_eq!(
                    differences(&expected, &echoed, "packet"),
                    [] as [String; 0],
                    "{role}, packed entry point: {packed}"
                );
            }
        }
    }
}

/// How the packet-echo guest starts the digest that stands for an echo too
/// long to answer (its `DIGEST_PREFIX`).
const ECHO_DIGEST_PREFIX: &str = "sha256:";

/// Any text, astral and multi-byte characters included.
fn text(max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(any::<char>(), 0..=max).prop_map(|c| c.into_iter().collect())
}

fn arb_outcome() -> impl Strategy<Value = ObservedOutcome> {
    let status = prop_oneof![
        Just(OutcomeStatus::Succeeded),
        Just(OutcomeStatus::Failed),
        Just(OutcomeStatus::NotStarted),
        Just(OutcomeStatus::Unknown),
    ];
    let failure = proptest::option::of(prop_oneof![
        Just(FailureKind::Permission),
        Just(FailureKind::Arguments),
        Just(FailureKind::Execution),
        Just(FailureKind::Timeout),
        Just(FailureKind::Cancelled),
    ]);
    (
        status,
        failure,
        any::<bool>(),
        proptest::option::of(text(64)),
    )
        .prop_map(
            |(status, failure, executed, result_fingerprint)| ObservedOutcome {
                status,
                failure,
                executed,
                result_fingerprint,
            },
        )
}

fn arb_observation() -> impl Strategy<Value = Observation> {
    let effect = prop_oneof![
        Just(Effect::Read),
        Just(Effect::Write),
        Just(Effect::Unknown)
    ];
    (
        text(12),
        text(12),
        effect,
        proptest::option::of(arb_outcome()),
    )
        .prop_map(|(tool_name, call_id, effect, outcome)| Observation {
            tool_name,
            call_id,
            effect,
            outcome,
        })
}

fn arb_packet() -> impl Strategy<Value = CheckPacket> {
    let observations = proptest::collection::vec(arb_observation(), 0..=MAX_OBSERVATIONS);
    let task_state = proptest::option::of((text(8), any::<u64>(), any::<u64>(), text(8)).prop_map(
        |(host_scope, revision, generation, note)| TaskStateSnapshot {
            host_scope,
            revision,
            generation,
            payload: json!({ "note": note }),
        },
    ));
    (
        text(12),
        any::<u32>(),
        text(300),
        any::<bool>(),
        observations,
        0u32..3,
        task_state,
    )
        .prop_map(
            |(
                execution_id,
                iteration,
                output_text,
                output_truncated,
                observations,
                omitted,
                task_state,
            )| {
                let carried = u32::try_from(observations.len()).expect("at most 100");
                CheckPacket::from_parts(PacketParts {
                    execution_id,
                    iteration,
                    output_text,
                    output_truncated,
                    observations,
                    observed_tool_calls: carried + omitted,
                    observations_truncated: omitted > 0,
                    task_state,
                })
                .expect("within the packet's bounds")
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The packed entry point sees exactly the packet the standard export
    /// sees (up to 100 observations of any text), and both see the host's:
    /// compared field by field when the echo fits in the answer, and as the
    /// echo's digest otherwise.
    #[test]
    fn the_packed_entry_point_sees_the_standard_packet(packet in arb_packet()) {
        let (tenant, _) = ready_tenant("echo");
        let [(packed, _), (standard, _)] = echo_verifiers();
        let via_packed = echoes(&packed, &tenant, &packet);
        let via_standard = echoes(&standard, &tenant, &packet);
        prop_assert_eq!(&via_packed, &via_standard);
        let expected = serde_json::to_value(&packet).expect("the packet serializes");
        for echo in [via_packed.0, via_packed.1] {
            if !echo.starts_with(ECHO_DIGEST_PREFIX) {
                let echoed: Value = serde_json::from_str(&echo).expect("the echo is JSON");
                prop_assert_eq!(differences(&expected, &echoed, "packet"), [] as [String; 0]);
            }
        }
    }
}
