//! `ConfigError`: one line naming the file, the line and the field, and a
//! [`miette::Diagnostic`] whose label spans the offending text.

use miette::{Diagnostic, LabeledSpan, SourceCode, SourceSpan};
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    /// Where in the file's text, when known (boxed: errors stay small).
    located: Option<Box<Located>>,
}

/// The offending text: a span of the file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Located {
    span: SourceSpan,
    text: Arc<str>,
}

impl ConfigError {
    /// An error about the file as a whole (e.g. it cannot be read).
    pub fn whole_file(file: &Path, message: impl Into<String>) -> Self {
        Self {
            file: file.to_owned(),
            line: None,
            field: String::new(),
            message: message.into(),
            located: None,
        }
    }

    /// The offending text as a byte range of the file, when known.
    pub fn span(&self) -> Option<SourceSpan> {
        self.located.as_ref().map(|located| located.span)
    }

    /// An error about `span` of the file's `text`; the line is the one the
    /// span starts on.
    pub(crate) fn at(
        file: &Path,
        text: &Arc<str>,
        span: Option<Range<usize>>,
        field: String,
        message: String,
    ) -> Self {
        let located = span.map(|span| {
            let start = span.start.min(text.len());
            Box::new(Located {
                span: SourceSpan::from(start..span.end.clamp(start, text.len())),
                text: Arc::clone(text),
            })
        });
        let line = located.as_ref().and_then(|located| {
            located
                .text
                .read_span(&located.span, 0, 0)
                .ok()
                .map(|contents| contents.line() + 1)
        });
        Self {
            file: file.to_owned(),
            line,
            field,
            message,
            located,
        }
    }
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

impl Diagnostic for ConfigError {
    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.located
            .as_ref()
            .map(|located| &located.text as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let span = self.span()?;
        let label = if self.field.is_empty() {
            one_line(&self.message)
        } else {
            self.field.clone()
        };
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(
            Some(label),
            span,
        ))))
    }
}

/// Collapses a multi-line message to one line.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_and_the_label_come_from_the_span() {
        let text: Arc<str> = Arc::from("[agent]\nmodel = \"m\"\nmax = 0\n");
        let err = ConfigError::at(
            Path::new("v.toml"),
            &text,
            Some(20..23),
            "agent.max".into(),
            "must be\n at least 1".into(),
        );
        assert_eq!(err.line, Some(3));
        assert_eq!(err.to_string(), "v.toml:3: agent.max: must be at least 1");
        let source = err.source_code().expect("the text");
        let span = err.labels().and_then(|mut l| l.next()).expect("a label");
        assert_eq!(span.label(), Some("agent.max"));
        let contents = source.read_span(span.inner(), 0, 0).expect("in the text");
        assert_eq!(contents.data(), b"max");
    }

    #[test]
    fn a_span_past_the_end_is_kept_in_the_text() {
        let text: Arc<str> = Arc::from("a = 1\nb = [");
        let err = ConfigError::at(
            Path::new("v.toml"),
            &text,
            Some(40..50),
            "".into(),
            "eof".into(),
        );
        assert_eq!(err.line, Some(2));
        assert_eq!(err.to_string(), "v.toml:2: eof");
        let whole = ConfigError::whole_file(Path::new("v.toml"), "cannot read");
        assert_eq!((whole.line, whole.span()), (None, None));
        assert!(whole.source_code().is_none());
        assert!(whole.labels().is_none());
    }
}
