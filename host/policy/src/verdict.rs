//! Completion verdicts and their strict validation.

use std::ops::Deref;

use serde::{Deserialize, Deserializer, Serialize};

/// `reason` is at most this many characters (Unicode scalar values).
pub const MAX_REASON_CHARS: usize = 400;
/// `feedback` is at most this many characters (Unicode scalar values).
pub const MAX_FEEDBACK_CHARS: usize = 2_000;
/// A verdict serializes to at most this many bytes of JSON.
pub const MAX_VERDICT_BYTES: usize = 16 * 1024;

/// The fields of a verdict, as plain data: what a checker means to answer.
/// Building one proves nothing; the loop receives a [`Verdict`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerdictParts {
    /// True only when the host's required evidence is present.
    pub complete: bool,
    /// A short, host-facing reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Feedback for the model's next turn when not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
}

/// A completion checker's answer, within every bound. Only `complete: true`
/// completes a workflow. Only the validating constructors below make one
/// ([`Verdict::new`], [`Verdict::from_parts`], [`Verdict::from_json`],
/// deserializing); its fields are read through [`VerdictParts`] (it
/// dereferences to them) and cannot be changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Verdict(VerdictParts);

/// Why a verdict was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
#[non_exhaustive]
pub enum VerdictError {
    /// `reason` is longer than [`MAX_REASON_CHARS`].
    #[error("verdict reason has {chars} characters (limit {MAX_REASON_CHARS})")]
    ReasonTooLong {
        /// Characters found.
        chars: usize,
    },
    /// `feedback` is longer than [`MAX_FEEDBACK_CHARS`].
    #[error("verdict feedback has {chars} characters (limit {MAX_FEEDBACK_CHARS})")]
    FeedbackTooLong {
        /// Characters found.
        chars: usize,
    },
    /// The serialized verdict is larger than [`MAX_VERDICT_BYTES`].
    #[error("verdict is {bytes} bytes as JSON (limit {MAX_VERDICT_BYTES})")]
    TooLarge {
        /// Bytes found (or a lower bound when reading stopped early).
        bytes: usize,
    },
    /// The verdict is not strict JSON of the allowed shape.
    #[error("verdict is not a JSON object with only complete, reason and feedback: {0}")]
    Malformed(String),
}

impl VerdictParts {
    /// Checks every bound. Parts that fail make no [`Verdict`].
    pub fn validate(&self) -> Result<(), VerdictError> {
        if let Some(reason) = &self.reason {
            let chars = reason.chars().count();
            if chars > MAX_REASON_CHARS {
                return Err(VerdictError::ReasonTooLong { chars });
            }
        }
        if let Some(feedback) = &self.feedback {
            let chars = feedback.chars().count();
            if chars > MAX_FEEDBACK_CHARS {
                return Err(VerdictError::FeedbackTooLong { chars });
            }
        }
        let bytes = serde_json::to_vec(self)
            .map_err(|e| VerdictError::Malformed(e.to_string()))?
            .len();
        if bytes > MAX_VERDICT_BYTES {
            return Err(VerdictError::TooLarge { bytes });
        }
        Ok(())
    }
}

impl Verdict {
    /// A verdict without reason or feedback: always within the bounds.
    pub fn bare(complete: bool) -> Self {
        Self(VerdictParts {
            complete,
            reason: None,
            feedback: None,
        })
    }

    /// Accepts the three fields when they are within every bound.
    pub fn new(
        complete: bool,
        reason: Option<String>,
        feedback: Option<String>,
    ) -> Result<Self, VerdictError> {
        Self::from_parts(VerdictParts {
            complete,
            reason,
            feedback,
        })
    }

    /// Accepts `parts` when they are within every bound (nothing is cut).
    pub fn from_parts(parts: VerdictParts) -> Result<Self, VerdictError> {
        parts.validate()?;
        Ok(Self(parts))
    }

    /// Parses strict JSON (only the three allowed fields) and validates it.
    pub fn from_json(text: &str) -> Result<Self, VerdictError> {
        if text.len() > MAX_VERDICT_BYTES {
            return Err(VerdictError::TooLarge { bytes: text.len() });
        }
        // serde's derive also accepts a struct as a sequence (`[true]`):
        // strict JSON here means an object.
        if !text.trim_start().starts_with('{') {
            return Err(VerdictError::Malformed("not a JSON object".to_owned()));
        }
        let parts: VerdictParts =
            serde_json::from_str(text).map_err(|e| VerdictError::Malformed(e.to_string()))?;
        Self::from_parts(parts)
    }

    /// The fields, to change and validate again.
    pub fn into_parts(self) -> VerdictParts {
        self.0
    }
}

impl Deref for Verdict {
    type Target = VerdictParts;

    fn deref(&self) -> &VerdictParts {
        &self.0
    }
}

impl TryFrom<VerdictParts> for Verdict {
    type Error = VerdictError;

    fn try_from(parts: VerdictParts) -> Result<Self, VerdictError> {
        Self::from_parts(parts)
    }
}

/// Deserializing validates, as [`Verdict::from_parts`].
impl<'de> Deserialize<'de> for Verdict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let parts = VerdictParts::deserialize(deserializer)?;
        Self::from_parts(parts).map_err(serde::de::Error::custom)
    }
}
