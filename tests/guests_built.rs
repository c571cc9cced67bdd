//! Every guest the build script compiled is a WebAssembly component.

use verdict_test_support::guests;

/// `\0asm`, then component-model version 0x0d and layer 1 (a core module
/// has version 1, layer 0).
const COMPONENT_HEADER: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

#[test]
fn every_guest_is_a_component() {
    assert_eq!(guests::ALL.len(), 18);
    for (package, path) in guests::ALL {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{package}: {path}: {e}"));
        assert!(
            bytes.starts_with(&COMPONENT_HEADER),
            "{package} is not a component: header {:02x?}",
            &bytes[..bytes.len().min(8)]
        );
    }
}

#[test]
fn named_constants_point_at_distinct_files() {
    let named = [
        guests::ARTIFACT_READY,
        guests::RECEIPT_REQUIRED,
        guests::REVISION_PROGRESS,
        guests::GOOD_BOTH,
        guests::HOSTILE_SPIN,
        guests::HOSTILE_ALLOC_BOMB,
        guests::HOSTILE_DEEP_RECURSION,
        guests::HOSTILE_PANIC,
        guests::HOSTILE_HUGE_REASON,
        guests::HOSTILE_HUGE_FEEDBACK,
        guests::HOSTILE_HUGE_PROGRESS_KEY,
        guests::HOSTILE_CROSS_TENANT,
        guests::HOSTILE_FORBIDDEN_IMPORT,
        guests::HOSTILE_READ_MANY,
        guests::HOSTILE_HOST_CALLS,
        guests::HOSTILE_WASI_DENY,
        guests::PACKET_ECHO,
    ];
    let mut unique: Vec<&str> = named.to_vec();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), named.len());
    for path in named {
        assert!(std::path::Path::new(path).is_absolute(), "{path}");
        assert!(path.ends_with(".wasm"), "{path}");
    }
}
