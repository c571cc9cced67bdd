//! Finds a field path in the configuration text: the byte range of its
//! deepest part, from the TOML parser's spans or the JSON parser's ranges.
//! [`super::ConfigError`] turns the range into a line (with `miette`).

use jsonc_parser::ast::{ObjectPropName, Value};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};
use std::ops::Range;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// A table key.
    Key(String),
    /// An array index.
    Index(usize),
}

impl From<&str> for Seg {
    fn from(key: &str) -> Self {
        Seg::Key(key.to_owned())
    }
}

/// Renders a path as `a.b[3].c`.
pub fn render(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                // An empty key, as TOML writes it.
                out.push_str(if k.is_empty() { "\"\"" } else { k });
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The span of the deepest part of `path` found in TOML `text`: a key, or
/// an array element.
pub fn toml_span(text: &str, path: &[Seg]) -> Option<Range<usize>> {
    let root = DeTable::parse(text).ok()?;
    let mut best = None;
    let mut value: Option<&Spanned<DeValue<'_>>> = None;
    let mut table: Option<&DeTable<'_>> = Some(root.get_ref());
    for seg in path {
        match seg {
            Seg::Key(key) => {
                let found = table.and_then(|t| t.iter().find(|(k, _)| k.get_ref().as_ref() == key));
                let Some((k, v)) = found else { break };
                best = Some(k.span());
                value = Some(v);
            }
            Seg::Index(i) => {
                let found = value
                    .and_then(|v| v.get_ref().as_array())
                    .and_then(|a| a.get(*i));
                let Some(v) = found else { break };
                best = Some(v.span());
                value = Some(v);
            }
        }
        table = value.and_then(|v| v.get_ref().as_table());
    }
    best
}

/// The span of the deepest part of `path` found in JSON `text`: a key (with
/// its quotes), or an array element.
pub fn json_span(text: &str, path: &[Seg]) -> Option<Range<usize>> {
    let parsed =
        jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &ParseOptions::default())
            .ok()?;
    let mut value = parsed.value.as_ref()?;
    let mut best = None;
    for seg in path {
        let (range, next) = match (seg, value) {
            (Seg::Key(key), Value::Object(object)) => {
                let Some(prop) = object.properties.iter().find(|p| p.name.as_str() == key) else {
                    break;
                };
                let range = match &prop.name {
                    ObjectPropName::String(name) => name.range(),
                    ObjectPropName::Word(name) => name.range(),
                };
                (range, &prop.value)
            }
            (Seg::Index(i), Value::Array(array)) => {
                let Some(element) = array.elements.get(*i) else {
                    break;
                };
                (element.range(), element)
            }
            _ => break,
        };
        best = Some(range.start..range.end);
        value = next;
    }
    best
}

/// The byte offset of 1-based `line` and `column` (bytes into the line, as
/// `serde_json` counts), kept within the line.
pub fn offset(text: &str, line: usize, column: usize) -> usize {
    let mut start = 0;
    for (number, text_line) in text.split_inclusive('\n').enumerate() {
        if number + 1 == line {
            let content = text_line.trim_end_matches('\n').len();
            return start + column.saturating_sub(1).min(content);
        }
        start += text_line.len();
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 1-based line a span starts on.
    fn line(text: &str, span: Option<Range<usize>>) -> Option<usize> {
        span.map(|span| text[..span.start].matches('\n').count() + 1)
    }

    #[test]
    fn finds_nested_keys_and_indices_in_toml() {
        let text = "[agent]\nmodel = \"m\"\n\n[loop_policy]\nmax_admissions = 5\nread_allowlist = [\n  \"a\",\n  \"b\",\n]\n";
        let key = |k: &str| Seg::Key(k.into());
        let at = |path: &[Seg]| line(text, toml_span(text, path));
        assert_eq!(at(&[key("agent"), key("model")]), Some(2));
        assert_eq!(at(&[key("loop_policy"), key("max_admissions")]), Some(5));
        assert_eq!(
            at(&[key("loop_policy"), key("read_allowlist"), Seg::Index(1)]),
            Some(8)
        );
        // A missing leaf: the deepest part found.
        assert_eq!(at(&[key("loop_policy"), key("nope")]), Some(4));
        let span = toml_span(text, &[key("agent"), key("model")]).unwrap();
        assert_eq!(&text[span], "model");
        assert_eq!(render(&[key("a"), Seg::Index(2), key("b")]), "a[2].b");
    }

    #[test]
    fn finds_keys_and_indices_in_json() {
        let text = "{\n \"agent\": {\"model\": \"m\"},\n \"loop_policy\": {\n  \"max_admissions\": 5,\n  \"read_allowlist\": [\"a\",\n   \"b\"]\n }\n}";
        let key = |k: &str| Seg::Key(k.into());
        let at = |path: &[Seg]| line(text, json_span(text, path));
        assert_eq!(at(&[key("loop_policy"), key("max_admissions")]), Some(4));
        assert_eq!(
            at(&[key("loop_policy"), key("read_allowlist"), Seg::Index(1)]),
            Some(6)
        );
        assert_eq!(at(&[key("loop_policy"), key("nope")]), Some(3));
        let span = json_span(text, &[key("agent"), key("model")]).unwrap();
        assert_eq!(&text[span], "\"model\"");
        assert_eq!(json_span("{ not json", &[key("agent")]), None);
    }

    /// A key's name as a string value earlier in the file, and the same key
    /// under another parent, are not the key.
    #[test]
    fn a_json_key_is_found_under_its_parent_only() {
        let text = "{\n \"tenants\": {\n  \"a\": {\n   \"artifact_root\": \"b\",\n   \"completion\": \"a.wasm\"\n  },\n  \"b\": {\n   \"artifact_root\": \"art\",\n   \"completion\": \"b.wasm\"\n  }\n }\n}";
        let key = |k: &str| Seg::Key(k.into());
        let path = [key("tenants"), key("b"), key("completion")];
        assert_eq!(line(text, json_span(text, &path)), Some(9));
    }

    #[test]
    fn offsets_of_lines_and_columns() {
        let text = "ab\ncdé\n\nx";
        assert_eq!(offset(text, 1, 1), 0);
        assert_eq!(offset(text, 2, 2), 4);
        assert_eq!(offset(text, 2, 99), 7, "kept within the line");
        assert_eq!(offset(text, 3, 1), 8);
        assert_eq!(offset(text, 4, 0), 9);
        assert_eq!(offset(text, 9, 1), text.len());
    }
}
