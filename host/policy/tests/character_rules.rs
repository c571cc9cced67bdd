//! "Characters" in every bound are Unicode scalar values (Rust `char`, what
//! a WIT `string` carries), not UTF-16 code units as in the TypeScript
//! spec: an astral character such as an emoji counts as one, where UTF-16
//! would count two. Each bound is tested with emoji exactly at the bound and
//! one past it.

use crate::common;

use common::{call, start, with_completion, with_progress};
use serde_json::json;
use verdict_policy::MAX_OUTPUT_CHARS;
use verdict_policy::MAX_PROGRESS_KEY_CHARS;
use verdict_policy::MAX_TOOL_NAME_CHARS;
use verdict_policy::{
    BatchDecision, CheckDecision, CheckerErrorKind, Effect, FinalDecision, LoopPolicy,
    VerdictError, VerdictParts,
};
use verdict_policy::{MAX_FEEDBACK_CHARS, MAX_REASON_CHARS};

/// An astral character: one scalar value, two UTF-16 units, four bytes.
const EMOJI: &str = "\u{1F600}";

fn emoji(n: usize) -> String {
    EMOJI.repeat(n)
}

#[test]
fn an_emoji_is_one_character() {
    assert_eq!(EMOJI.chars().count(), 1);
    assert_eq!(EMOJI.encode_utf16().count(), 2);
}

#[test]
fn verdict_reason_and_feedback_count_scalar_values() {
    let verdict = |reason: usize, feedback: usize| VerdictParts {
        complete: false,
        reason: Some(emoji(reason)),
        feedback: Some(emoji(feedback)),
    };
    assert_eq!(
        verdict(MAX_REASON_CHARS, MAX_FEEDBACK_CHARS).validate(),
        Ok(())
    );
    assert_eq!(
        verdict(MAX_REASON_CHARS + 1, 0).validate(),
        Err(VerdictError::ReasonTooLong {
            chars: MAX_REASON_CHARS + 1
        })
    );
    assert_eq!(
        verdict(0, MAX_FEEDBACK_CHARS + 1).validate(),
        Err(VerdictError::FeedbackTooLong {
            chars: MAX_FEEDBACK_CHARS + 1
        })
    );
}

#[test]
fn the_output_bound_counts_scalar_values() {
    let check = |text: &str| {
        let mut exec = start(&with_completion(LoopPolicy::default()));
        match exec.final_candidate(text, &common::view(), None) {
            FinalDecision::Check(request) => request.packet,
            other => panic!("expected a check: {other:?}"),
        }
    };
    let at = check(&emoji(MAX_OUTPUT_CHARS));
    assert_eq!(at.output_text, emoji(MAX_OUTPUT_CHARS));
    assert!(!at.output_truncated);
    // One more: cut to the bound on a character boundary, flagged.
    let over = check(&emoji(MAX_OUTPUT_CHARS + 1));
    assert_eq!(over.output_text, emoji(MAX_OUTPUT_CHARS));
    assert!(over.output_truncated);
}

#[test]
fn the_progress_key_bound_counts_scalar_values() {
    let sample = |key: String| {
        let mut exec = start(&with_progress(LoopPolicy::default()));
        let BatchDecision::SampleProgress(request) = exec.after_batch(&common::view(), None) else {
            panic!("expected a progress sample");
        };
        let decision = exec.progress_key(request.ticket, &common::view(), Ok(key));
        (decision, exec.diagnostics().checker_error)
    };
    assert_eq!(
        sample(emoji(MAX_PROGRESS_KEY_CHARS)),
        (CheckDecision::Continue, None)
    );
    let (decision, error) = sample(emoji(MAX_PROGRESS_KEY_CHARS + 1));
    assert!(matches!(decision, CheckDecision::Stop { .. }));
    assert_eq!(error, Some(CheckerErrorKind::InvalidProgressKey));
}

#[test]
fn allowlisted_tool_names_count_scalar_values() {
    let policy = |name: String| LoopPolicy {
        read_allowlist: vec![name],
        ..LoopPolicy::default()
    };
    let at = emoji(MAX_TOOL_NAME_CHARS);
    assert!(policy(at.clone()).validate().is_ok());
    assert!(policy(emoji(MAX_TOOL_NAME_CHARS + 1)).validate().is_err());
    // The name at the bound works as a tool name too.
    let mut exec = start(&policy(at.clone()));
    let args = json!({});
    assert_eq!(
        exec.admit(&call("a", &at, Effect::Read, &args)),
        verdict_policy::Admission::Run
    );
}
