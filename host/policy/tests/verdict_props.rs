//! Verdict validation: strict shape and bounds, for any input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use verdict_policy::{MAX_FEEDBACK_CHARS, MAX_REASON_CHARS, MAX_VERDICT_BYTES};
use verdict_policy::{Verdict, VerdictError, VerdictParts};

#[test]
fn strict_shape_is_enforced() {
    assert!(Verdict::from_json(r#"{"complete": true}"#).is_ok());
    for bad in [
        r#"{"complete": true, "extra": 1}"#,
        r#"{"complete": "yes"}"#,
        r#"{"reason": "no complete field"}"#,
        r#"[true]"#,
        r#"{"complete": true} trailing"#,
        "",
    ] {
        assert!(
            matches!(Verdict::from_json(bad), Err(VerdictError::Malformed(_))),
            "{bad}"
        );
    }
    let huge = format!(
        r#"{{"complete": true, "reason": "{}"}}"#,
        " ".repeat(MAX_VERDICT_BYTES)
    );
    assert!(matches!(
        Verdict::from_json(&huge),
        Err(VerdictError::TooLarge { .. })
    ));
}

#[test]
fn a_verdict_is_made_only_within_its_bounds() {
    assert!(Verdict::bare(true).into_parts().complete);
    let long = Some("r".repeat(MAX_REASON_CHARS + 1));
    assert_eq!(
        Verdict::new(false, long, None),
        Err(VerdictError::ReasonTooLong {
            chars: MAX_REASON_CHARS + 1
        })
    );
    let parts = VerdictParts {
        complete: false,
        reason: None,
        feedback: Some("f".repeat(MAX_FEEDBACK_CHARS + 1)),
    };
    assert!(matches!(
        Verdict::try_from(parts),
        Err(VerdictError::FeedbackTooLong { .. })
    ));
    // Deserializing validates too.
    let json = format!(r#"{{"complete": false, "reason": "{}"}}"#, "r".repeat(401));
    assert!(serde_json::from_str::<Verdict>(&json).is_err());
    let fine = Verdict::new(false, Some("why".into()), Some("do this".into())).unwrap();
    assert_eq!(fine.feedback.as_deref(), Some("do this"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_text_never_panics_and_accepted_is_bounded(text in any::<String>()) {
        if let Ok(verdict) = Verdict::from_json(&text) {
            prop_assert!(verdict.validate().is_ok());
        }
    }

    #[test]
    fn reason_and_feedback_bounds_are_exact(
        reason in 0usize..(MAX_REASON_CHARS + 3),
        feedback in 0usize..(MAX_FEEDBACK_CHARS + 3),
        wide in any::<bool>(),
    ) {
        // Characters, not bytes: a 2-byte character counts once.
        let unit = if wide { "é" } else { "r" };
        let verdict = VerdictParts {
            complete: false,
            reason: Some(unit.repeat(reason)),
            feedback: Some(unit.repeat(feedback)),
        };
        let result = verdict.validate();
        if reason > MAX_REASON_CHARS {
            prop_assert_eq!(result, Err(VerdictError::ReasonTooLong { chars: reason }));
        } else if feedback > MAX_FEEDBACK_CHARS {
            prop_assert_eq!(result, Err(VerdictError::FeedbackTooLong { chars: feedback }));
        } else {
            prop_assert!(result.is_ok());
            let json = serde_json::to_string(&verdict).unwrap();
            prop_assert_eq!(Verdict::from_json(&json).map(Verdict::into_parts), Ok(verdict));
        }
    }
}
