//! Host feedback text for the next model turn.
//!
//! Every message starts with [`FEEDBACK_LABEL`] so that neither the model
//! nor a reader mistakes it for user input. No error details, raw
//! arguments or result bodies are ever included.

use crate::packet::FailureKind;

/// The label that opens every host feedback message.
pub const FEEDBACK_LABEL: &str = "[host feedback]";

pub(crate) fn tool_failure(tool: &str, kind: Option<FailureKind>) -> String {
    let what = match kind {
        Some(FailureKind::Permission) => "was denied by permissions",
        Some(FailureKind::Arguments) => "rejected its arguments",
        Some(FailureKind::Execution) => "reported an execution error",
        Some(FailureKind::Timeout) => "timed out",
        Some(FailureKind::Cancelled) => "was cancelled",
        None => "returned no authentic outcome",
    };
    format!(
        "The tool `{tool}` {what}. It will not be replayed automatically; choose a safe correction."
    )
}

pub(crate) fn repeated_read(tool: &str) -> String {
    format!(
        "The read `{tool}` returned the same result for the same arguments again. \
         Requesting it again will stop this execution; use a different read or finish."
    )
}

pub(crate) fn duplicate_action(tool: &str) -> String {
    format!(
        "An identical `{tool}` action was already admitted in this execution, so it was not \
         executed again. Requesting it again will stop this execution."
    )
}

pub(crate) fn unchanged_progress() -> String {
    "The host's progress key has not changed over the last tool batches. \
     Choose a different step or finish."
        .to_owned()
}

pub(crate) fn incomplete(feedback: Option<&str>) -> String {
    match feedback {
        Some(text) if !text.trim().is_empty() => format!("The host's completion check: {text}"),
        _ => "The host's completion check found the required evidence missing.".to_owned(),
    }
}

/// Joins queued messages into one labelled block.
pub(crate) fn render(messages: &[String]) -> String {
    let mut text = String::from(FEEDBACK_LABEL);
    for message in messages {
        text.push('\n');
        text.push_str(message);
    }
    text
}
