//! `LoopPolicy`: the configuration of one policy execution, and its
//! validation.
//!
//! Every threshold has a documented default; all are at most
//! [`MAX_THRESHOLD`] and all except `max_recovery_attempts` must be positive.

use serde::{Deserialize, Serialize};

/// Every integer threshold is at most this.
pub const MAX_THRESHOLD: u32 = 1_000;
/// The read allowlist holds at most this many names.
pub const MAX_ALLOWLIST_LEN: usize = 100;
/// An allowlisted tool name is at most this many characters (Unicode scalar
/// values).
pub const MAX_TOOL_NAME_CHARS: usize = 256;

/// The loop policy: thresholds and the read allowlist, plain data. An
/// empty JSON object `{}` is a valid policy: bounded failure/repetition
/// tracking. Checkers are not part of it: the loop is given them apart
/// (the engine sees only their identities, see
/// [`crate::CheckerIdentities`]), so a policy read from a file or saved
/// with an agent never carries one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoopPolicy {
    /// Host-feedback turns allowed before a recovery trigger stops the
    /// execution (0 = stop at the first trigger). Default 2.
    pub max_recovery_attempts: u32,
    /// Identical repeats of a read (same tool and argument fingerprint, and
    /// the same result fingerprint as its previous execution) that make it a
    /// repeated read: feedback is given, and asking for it again stops.
    /// Default 1 (the second identical execution triggers feedback).
    pub repeated_read_limit: u32,
    /// Consecutive progress samples equal to the previous key that trigger
    /// an intervention. Default 2.
    pub unchanged_progress_limit: u32,
    /// Tracking bound: admissions per execution, pending async calls
    /// included. Default 1000.
    pub max_admissions: u32,
    /// Tracking bound: distinct call signatures (tool + argument
    /// fingerprint) per execution. Default 1000.
    pub max_call_signatures: u32,
    /// Tracking bound: observations and distinct failure identities per
    /// execution (each counted on its own). Default 1000.
    pub max_observations: u32,
    /// Read tools that may repeat an identical read (status polls): they are
    /// exempt from repeated-read accounting but not from tracking bounds. A
    /// tool whose effect is write or unknown gains nothing from being listed.
    pub read_allowlist: Vec<String>,
}

impl Default for LoopPolicy {
    fn default() -> Self {
        Self {
            max_recovery_attempts: 2,
            repeated_read_limit: 1,
            unchanged_progress_limit: 2,
            max_admissions: MAX_THRESHOLD,
            max_call_signatures: MAX_THRESHOLD,
            max_observations: MAX_THRESHOLD,
            read_allowlist: Vec::new(),
        }
    }
}

/// One configuration rule a policy breaks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyViolation {
    /// The field, e.g. `max_admissions` or `read_allowlist[3]`.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

/// Every violation found in a policy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid loop policy: {}", summary(.0))]
pub struct PolicyError(pub Vec<PolicyViolation>);

/// Loading a policy from JSON failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyLoadError {
    /// The text is not a policy object.
    #[error("loop policy JSON is malformed: {0}")]
    Malformed(#[from] serde_json::Error),
    /// The policy parsed but breaks its rules.
    #[error(transparent)]
    Invalid(#[from] PolicyError),
}

fn summary(violations: &[PolicyViolation]) -> String {
    violations
        .iter()
        .map(|v| format!("{}: {}", v.field, v.message))
        .collect::<Vec<_>>()
        .join("; ")
}

impl LoopPolicy {
    /// Parses and validates a policy from JSON.
    pub fn from_json(text: &str) -> Result<Self, PolicyLoadError> {
        let policy: Self = serde_json::from_str(text)?;
        policy.validate()?;
        Ok(policy)
    }

    /// Checks every rule and returns every violation with its field.
    pub fn validate(&self) -> Result<(), PolicyError> {
        let mut violations = Vec::new();
        let mut bound = |field: &str, value: u32, positive: bool| {
            if value > MAX_THRESHOLD {
                violations.push(PolicyViolation {
                    field: field.to_owned(),
                    message: format!("{value} exceeds {MAX_THRESHOLD}"),
                });
            } else if positive && value == 0 {
                violations.push(PolicyViolation {
                    field: field.to_owned(),
                    message: "must be positive".to_owned(),
                });
            }
        };
        bound("max_recovery_attempts", self.max_recovery_attempts, false);
        bound("repeated_read_limit", self.repeated_read_limit, true);
        bound(
            "unchanged_progress_limit",
            self.unchanged_progress_limit,
            true,
        );
        bound("max_admissions", self.max_admissions, true);
        bound("max_call_signatures", self.max_call_signatures, true);
        bound("max_observations", self.max_observations, true);
        if self.read_allowlist.len() > MAX_ALLOWLIST_LEN {
            violations.push(PolicyViolation {
                field: "read_allowlist".to_owned(),
                message: format!(
                    "{} names exceed {MAX_ALLOWLIST_LEN}",
                    self.read_allowlist.len()
                ),
            });
        }
        for (index, name) in self.read_allowlist.iter().enumerate() {
            let chars = name.chars().count();
            let message = if name.trim().is_empty() {
                "must be a nonempty tool name".to_owned()
            } else if chars > MAX_TOOL_NAME_CHARS {
                format!("{chars} characters exceed {MAX_TOOL_NAME_CHARS}")
            } else {
                continue;
            };
            violations.push(PolicyViolation {
                field: format!("read_allowlist[{index}]"),
                message,
            });
        }
        if violations.is_empty() {
            Ok(())
        } else {
            Err(PolicyError(violations))
        }
    }
}
