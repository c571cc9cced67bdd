//! A tool's own error, and why a tool could not be defined.

/// A tool's own error. Its message is shown to the model after
/// sanitization ([`crate::tools::sanitize_error`]); keep secrets out of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// What went wrong, for the model.
    pub message: String,
}

impl ToolError {
    /// A tool error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// A tool could not be defined.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolDefinitionError {
    /// Tool names are 1 to 64 characters of `[A-Za-z0-9_-]`.
    #[error("invalid tool name {0:?}: use 1-64 characters of A-Z, a-z, 0-9, _ and -")]
    InvalidName(String),
    /// A tool with this name is already registered.
    #[error("a tool named {0} is already registered")]
    Duplicate(String),
    /// The argument schema does not compile.
    #[error("tool {name}: invalid argument schema: {detail}")]
    InvalidSchema {
        /// The tool.
        name: String,
        /// The validator's message.
        detail: String,
    },
}
