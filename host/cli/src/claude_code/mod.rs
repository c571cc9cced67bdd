//! verdict as Claude Code's completion judge: a `Stop` / `SubagentStop`
//! command hook that turns the session's transcript into a check packet,
//! asks the tenant's verifier, and blocks the stop with the verifier's
//! feedback until it confirms, within the loop policy's recovery bound.

pub mod packet;
pub mod state;
pub mod transcript;

use serde::Deserialize;
use serde_json::json;
use std::path::PathBuf;

/// What Claude Code sends a `Stop` or `SubagentStop` hook on stdin (the
/// fields the hook reads; others are ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct HookInput {
    /// The session.
    pub session_id: String,
    /// The session's transcript (JSONL).
    #[serde(default)]
    pub transcript_path: Option<PathBuf>,
    /// A subagent's own transcript (`SubagentStop`).
    #[serde(default)]
    pub agent_transcript_path: Option<PathBuf>,
    /// `Stop` or `SubagentStop`.
    #[serde(default)]
    pub hook_event_name: Option<String>,
    /// True when Claude goes on because a stop hook blocked before.
    #[serde(default)]
    pub stop_hook_active: bool,
    /// The final assistant text (newer Claude Code versions; the
    /// transcript may not hold it yet).
    #[serde(default)]
    pub last_assistant_message: Option<String>,
}

impl HookInput {
    /// The transcript this stop is about.
    pub fn transcript(&self) -> Option<&PathBuf> {
        match self.hook_event_name.as_deref() {
            Some("SubagentStop") => self
                .agent_transcript_path
                .as_ref()
                .or(self.transcript_path.as_ref()),
            _ => self.transcript_path.as_ref(),
        }
    }
}

/// The hook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Let Claude stop; `note` goes to stderr.
    Allow {
        /// Why, in one line.
        note: String,
    },
    /// Keep Claude going with `reason` as its next instruction; `note`
    /// goes to stderr.
    Block {
        /// The feedback.
        reason: String,
        /// Why, in one line.
        note: String,
    },
}

impl Decision {
    /// Claude Code's documented hook output on stdout (none to allow).
    pub fn stdout(&self) -> Option<String> {
        match self {
            Self::Allow { .. } => None,
            Self::Block { reason, .. } => {
                Some(json!({"decision": "block", "reason": reason}).to_string())
            }
        }
    }
}

/// What the check said.
#[derive(Debug, Clone)]
pub enum Judgement {
    /// Complete, with the verifier's reason.
    Complete(Option<String>),
    /// Not complete: the feedback for Claude and the reason.
    Incomplete {
        /// Feedback for the model.
        feedback: Option<String>,
        /// The verifier's reason.
        reason: Option<String>,
    },
    /// The check could not be made (verifier error or timeout, unreadable
    /// transcript, a packet out of bounds).
    Error(String),
}

/// Decides the answer from the judgement, the blocks of this stop so far
/// and the bound; returns the decision and the blocks to keep.
pub fn decide(
    judgement: &Judgement,
    blocks: u32,
    max_blocks: u32,
    on_error: crate::config::OnError,
) -> (Decision, u32) {
    let exhausted = blocks >= max_blocks;
    match judgement {
        Judgement::Complete(reason) => (
            Decision::Allow {
                note: format!(
                    "verdict: complete{}",
                    reason
                        .as_deref()
                        .map(|r| format!(" - {r}"))
                        .unwrap_or_default()
                ),
            },
            0,
        ),
        Judgement::Incomplete { feedback, reason } => {
            let why = reason.as_deref().unwrap_or("not complete");
            if exhausted {
                return (
                    Decision::Allow {
                        note: format!(
                            "verdict: not complete ({why}) after {blocks} block(s), the recovery bound (max_recovery_attempts = {max_blocks}): allowing the stop"
                        ),
                    },
                    0,
                );
            }
            let text = feedback.clone().unwrap_or_else(|| why.to_owned());
            (
                Decision::Block {
                    reason: format!("The host's completion check: {text}"),
                    note: format!(
                        "verdict: not complete - {why} (blocking the stop, {} of {max_blocks})",
                        blocks + 1
                    ),
                },
                blocks + 1,
            )
        }
        Judgement::Error(error) => match on_error {
            crate::config::OnError::Allow => (
                Decision::Allow {
                    note: format!(
                        "verdict: could not check completion ({error}); on_error = \"allow\": allowing the stop"
                    ),
                },
                0,
            ),
            crate::config::OnError::Block if exhausted => (
                Decision::Allow {
                    note: format!(
                        "verdict: could not check completion ({error}) after {blocks} block(s), the recovery bound (max_recovery_attempts = {max_blocks}): allowing the stop"
                    ),
                },
                0,
            ),
            crate::config::OnError::Block => (
                Decision::Block {
                    note: format!(
                        "verdict: could not check completion ({error}) (blocking the stop, {} of {max_blocks})",
                        blocks + 1
                    ),
                    reason: format!(
                        "The host could not check completion: {error}. (on_error = \"block\": the stop is held until the check can be made, at most {max_blocks} time(s).)"
                    ),
                },
                blocks + 1,
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::OnError;

    fn incomplete() -> Judgement {
        Judgement::Incomplete {
            feedback: Some("Read A42 first.".into()),
            reason: Some("no read".into()),
        }
    }

    #[test]
    fn blocks_with_the_feedback_until_the_bound_then_allows() {
        let (d, kept) = decide(&incomplete(), 0, 2, OnError::Block);
        assert_eq!(
            d.stdout().as_deref(),
            Some(r#"{"decision":"block","reason":"The host's completion check: Read A42 first."}"#)
        );
        assert_eq!(kept, 1);
        let (d, kept) = decide(&incomplete(), 2, 2, OnError::Block);
        assert!(
            matches!(&d, Decision::Allow { note } if note.contains("recovery bound")),
            "{d:?}"
        );
        assert_eq!((d.stdout(), kept), (None, 0));
        let (d, _) = decide(
            &Judgement::Complete(Some("ready".into())),
            1,
            2,
            OnError::Block,
        );
        assert_eq!(
            d,
            Decision::Allow {
                note: "verdict: complete - ready".into()
            }
        );
    }

    #[test]
    fn an_error_blocks_or_allows_as_configured() {
        let error = Judgement::Error("checker timed out".into());
        let (d, kept) = decide(&error, 0, 2, OnError::Block);
        assert!(
            matches!(&d, Decision::Block { reason, .. } if reason.contains("checker timed out"))
        );
        assert_eq!(kept, 1);
        let (d, _) = decide(&error, 0, 2, OnError::Allow);
        assert!(matches!(&d, Decision::Allow { note } if note.contains("on_error")));
        let (d, _) = decide(&error, 2, 2, OnError::Block);
        assert!(matches!(d, Decision::Allow { .. }));
    }
}
