//! Canonicalization never panics, is idempotent, agrees with an independent
//! RFC 8785 implementation, and the fingerprint is the SHA-256 of the
//! canonical bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sha2::{Digest, Sha256};
use verdict_policy::{Fingerprint, canonical_json};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let canonical = canonical_json(&value);
    let fingerprint = Fingerprint::of(&value);
    match (canonical, fingerprint) {
        (Ok(bytes), Ok(fingerprint)) => {
            assert!(bytes.len() <= verdict_policy::MAX_FINGERPRINT_INPUT_BYTES);
            assert_eq!(fingerprint.as_str(), hex::encode(Sha256::digest(&bytes)));
            let oracle = serde_json_canonicalizer::to_vec(&value).expect("oracle canonicalizes");
            assert_eq!(bytes, oracle, "differs from serde_json_canonicalizer");
            let again: serde_json::Value =
                serde_json::from_slice(&bytes).expect("canonical JSON parses");
            assert_eq!(canonical_json(&again).expect("canonical again"), bytes);
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        (a, b) => panic!("canonical_json and Fingerprint::of disagree: {a:?} / {b:?}"),
    }
});
