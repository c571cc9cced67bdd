//! Verdict parsing never panics, and an accepted verdict is within every
//! bound and round-trips.
#![no_main]

use libfuzzer_sys::fuzz_target;
use verdict_policy::Verdict;
use verdict_policy::{MAX_FEEDBACK_CHARS, MAX_REASON_CHARS, MAX_VERDICT_BYTES};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(verdict) = Verdict::from_json(text) {
        assert!(verdict.validate().is_ok());
        // Strict JSON: only an object is a verdict (serde would also take `[true]`).
        let value: serde_json::Value = serde_json::from_str(text).expect("accepted text is JSON");
        assert!(value.is_object(), "accepted a non-object: {text}");
        assert!(verdict.reason.as_ref().is_none_or(|r| r.chars().count() <= MAX_REASON_CHARS));
        assert!(verdict.feedback.as_ref().is_none_or(|f| f.chars().count() <= MAX_FEEDBACK_CHARS));
        let json = serde_json::to_string(&verdict).expect("serializes");
        assert!(json.len() <= MAX_VERDICT_BYTES);
        assert_eq!(Verdict::from_json(&json).expect("round-trips"), verdict);
    }
});
