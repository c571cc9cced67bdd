//! Property tests for canonical JSON and fingerprints.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use verdict_policy::{CanonicalError, Fingerprint};
use verdict_policy::{MAX_FINGERPRINT_INPUT_BYTES, canonical_json};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        any::<u64>().prop_map(|u| json!(u)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "\\PC{0,12}".prop_map(Value::String),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 96, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((any::<String>(), inner), 0..8)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// Renders `value` as JSON text with object members in an order picked by
/// `seed` (rotated, possibly reversed) and with optional whitespace.
fn render(value: &Value, seed: usize, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(if seed.is_multiple_of(3) { ", " } else { "," });
                }
                render(item, seed / 2 + i, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut members: Vec<_> = map.iter().collect();
            if !members.is_empty() {
                let len = members.len();
                members.rotate_left(seed % len);
            }
            if !seed.is_multiple_of(2) {
                members.reverse();
            }
            out.push_str(if seed.is_multiple_of(5) { "{ " } else { "{" });
            for (i, (key, item)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(key).unwrap());
                out.push_str(if seed.is_multiple_of(7) { " : " } else { ":" });
                render(item, seed / 3 + i, out);
            }
            out.push('}');
        }
        leaf => out.push_str(&serde_json::to_string(leaf).unwrap()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn key_order_never_changes_a_fingerprint(value in json_value(), seed in any::<usize>()) {
        let mut text = String::new();
        render(&value, seed, &mut text);
        let reparsed: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(Fingerprint::of(&reparsed), Fingerprint::of(&value));
        prop_assert_eq!(canonical_json(&reparsed), canonical_json(&value));
    }

    #[test]
    fn fingerprints_are_stable_across_runs(value in json_value()) {
        // Same value, fresh computations and a serialize/parse round trip:
        // the same fingerprint, which is the SHA-256 of the canonical bytes.
        let first = Fingerprint::of(&value);
        let copy: Value = serde_json::from_str(&serde_json::to_string(&value).unwrap()).unwrap();
        prop_assert_eq!(&Fingerprint::of(&copy), &first);
        if let (Ok(bytes), Ok(fingerprint)) = (canonical_json(&value), &first) {
            prop_assert_eq!(fingerprint.as_str(), hex::encode(Sha256::digest(&bytes)));
            // Canonical form is a fixed point.
            let again: Value = serde_json::from_slice(&bytes).unwrap();
            prop_assert_eq!(canonical_json(&again).unwrap(), bytes);
        }
    }

    #[test]
    fn agrees_with_serde_json_canonicalizer(value in json_value()) {
        if let Ok(ours) = canonical_json(&value) {
            let oracle = serde_json_canonicalizer::to_vec(&value).unwrap();
            prop_assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(oracle).unwrap());
        }
    }

    #[test]
    fn any_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        if let Ok(value) = serde_json::from_slice::<Value>(&bytes) {
            let _ = Fingerprint::of(&value);
            let _ = canonical_json(&value);
        }
    }

    #[test]
    fn bound_holds_for_any_size(len in 0usize..(3 * MAX_FINGERPRINT_INPUT_BYTES), quote in any::<bool>()) {
        // Quotes escape to two bytes: the bound is on canonical bytes.
        let unit = if quote { "\"" } else { "a" };
        let value = Value::String(unit.repeat(len));
        let canonical_len = len * unit.len() * if quote { 2 } else { 1 } + 2;
        let result = Fingerprint::of(&value);
        if canonical_len <= MAX_FINGERPRINT_INPUT_BYTES {
            prop_assert!(result.is_ok());
        } else {
            prop_assert_eq!(result, Err(CanonicalError::TooLarge));
        }
    }
}

#[test]
fn golden_fingerprints_do_not_drift() {
    // Pinned (the hex is `sha256sum` of the canonical text, computed outside
    // Rust) so that any change of canonical form or hash shows up.
    let value: Value =
        serde_json::from_str(r#"{"b": [1, 2.50, "x\u0001"], "a": null, "é": 1e21}"#).unwrap();
    let canonical = canonical_json(&value).unwrap();
    assert_eq!(
        String::from_utf8(canonical).unwrap(),
        r#"{"a":null,"b":[1,2.5,"x\u0001"],"é":1e+21}"#
    );
    assert_eq!(
        Fingerprint::of(&value).unwrap().as_str(),
        "7107ded88b22157b8a34c954ed7a0cc58ea39b30a04d714377bcedae23ece3f3"
    );
}

#[test]
fn float_text_reparses_to_the_same_canonical_form() {
    // Found by the `canonical` fuzz target before exact float parsing.
    let value: Value = serde_json::from_str("[1e21,-0.0,9025493,90741.5e57]").unwrap();
    let bytes = canonical_json(&value).unwrap();
    let again: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(canonical_json(&again).unwrap(), bytes);
}
