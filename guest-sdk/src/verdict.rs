//! The completion verdict a verifier returns, and the host's bounds on it.
//!
//! Characters are Unicode scalar values (`str::chars`), the units of a WIT
//! `string`: an emoji is one character, not the two UTF-16 units the
//! TypeScript spec would count.

/// The host rejects a verdict whose reason is longer than this (characters:
/// Unicode scalar values).
pub const MAX_REASON_CHARS: usize = 400;
/// The host rejects a verdict whose feedback is longer than this
/// (characters: Unicode scalar values).
pub const MAX_FEEDBACK_CHARS: usize = 2_000;
/// The host rejects a progress key longer than this (characters: Unicode
/// scalar values).
pub const MAX_PROGRESS_KEY_CHARS: usize = 4_000;
/// The host rejects a verdict larger than this many bytes as JSON. A verdict
/// within the character bounds always fits, whatever it escapes.
pub const MAX_VERDICT_BYTES: usize = 16 * 1024;

/// A completion verdict. The SDK passes it to the host unchanged: the host
/// enforces the bounds, so check [`Verdict::within_bounds`] in your tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// True only when the execution is really complete.
    pub complete: bool,
    /// Why, for diagnostics (at most [`MAX_REASON_CHARS`]).
    pub reason: Option<String>,
    /// Guidance shown to the model when not complete (at most [`MAX_FEEDBACK_CHARS`]).
    pub feedback: Option<String>,
}

impl Verdict {
    /// The execution is complete.
    pub fn complete() -> Self {
        Self {
            complete: true,
            ..Self::default()
        }
    }

    /// The execution is not complete; `feedback` tells the model what to do.
    pub fn incomplete(feedback: impl Into<String>) -> Self {
        Self {
            complete: false,
            reason: None,
            feedback: Some(feedback.into()),
        }
    }

    /// Sets the reason.
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// Sets the feedback.
    pub fn with_feedback(mut self, feedback: impl Into<String>) -> Self {
        self.feedback = Some(feedback.into());
        self
    }

    /// True when reason and feedback fit the host's character bounds.
    pub fn within_bounds(&self) -> bool {
        let fits = |text: &Option<String>, max: usize| {
            text.as_deref()
                .is_none_or(|text| text.chars().count() <= max)
        };
        fits(&self.reason, MAX_REASON_CHARS) && fits(&self.feedback, MAX_FEEDBACK_CHARS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_set_the_fields() {
        let verdict = Verdict::incomplete("do more").with_reason("no receipt");
        assert!(!verdict.complete);
        assert_eq!(verdict.feedback.as_deref(), Some("do more"));
        assert_eq!(verdict.reason.as_deref(), Some("no receipt"));
        assert!(Verdict::complete().complete);
    }

    #[test]
    fn bounds_count_characters_not_bytes() {
        let at_limit = Verdict::complete().with_reason("é".repeat(MAX_REASON_CHARS));
        assert!(at_limit.within_bounds());
        let over = Verdict::complete().with_reason("x".repeat(MAX_REASON_CHARS + 1));
        assert!(!over.within_bounds());
        let long_feedback = Verdict::incomplete("y".repeat(MAX_FEEDBACK_CHARS + 1));
        assert!(!long_feedback.within_bounds());
    }

    #[test]
    fn an_emoji_is_one_character_at_every_bound() {
        // One scalar value, two UTF-16 units, four bytes.
        let emoji = "\u{1F600}";
        let at = Verdict::incomplete(emoji.repeat(MAX_FEEDBACK_CHARS))
            .with_reason(emoji.repeat(MAX_REASON_CHARS));
        assert!(at.within_bounds());
        let reason_over = Verdict::complete().with_reason(emoji.repeat(MAX_REASON_CHARS + 1));
        assert!(!reason_over.within_bounds());
        let feedback_over = Verdict::incomplete(emoji.repeat(MAX_FEEDBACK_CHARS + 1));
        assert!(!feedback_over.within_bounds());
    }
}
