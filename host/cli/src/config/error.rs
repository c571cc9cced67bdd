//! `ConfigError`: one line naming the file, the line and the field.

use std::fmt;
use std::path::PathBuf;

/// A configuration file was rejected; nothing was run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    /// The file.
    pub file: PathBuf,
    /// The 1-based line of the offending field, when known.
    pub line: Option<usize>,
    /// The field's dotted path, e.g. `loop_policy.max_admissions`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if self.field.is_empty() {
            write!(f, ": {}", one_line(&self.message))
        } else {
            write!(f, ": {}: {}", self.field, one_line(&self.message))
        }
    }
}

/// Collapses a multi-line message to one line.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
