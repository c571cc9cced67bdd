//! Finds the line of a field path in the configuration text.

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
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The 1-based line holding byte `offset` of `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The line of the deepest part of `path` found in TOML `text`.
pub fn toml_line(text: &str, path: &[Seg]) -> Option<usize> {
    let root = DeTable::parse(text).ok()?;
    let mut best = None;
    let mut value: Option<&Spanned<DeValue<'_>>> = None;
    let mut table: Option<&DeTable<'_>> = Some(root.get_ref());
    for seg in path {
        match seg {
            Seg::Key(key) => {
                let found = table.and_then(|t| t.iter().find(|(k, _)| k.get_ref().as_ref() == key));
                let Some((k, v)) = found else { break };
                best = Some(k.span().start);
                value = Some(v);
            }
            Seg::Index(i) => {
                let found = value
                    .and_then(|v| v.get_ref().as_array())
                    .and_then(|a| a.get(*i));
                let Some(v) = found else { break };
                best = Some(v.span().start);
                value = Some(v);
            }
        }
        table = value.and_then(|v| v.get_ref().as_table());
    }
    best.map(|offset| line_of(text, offset))
}

/// The line of `path` in JSON `text`: each key is searched as `"key"` after
/// the previous one (good enough for configuration files).
pub fn json_line(text: &str, path: &[Seg]) -> Option<usize> {
    let mut from = 0;
    let mut best = None;
    for seg in path {
        if let Seg::Key(key) = seg {
            let needle = format!("\"{key}\"");
            match text.get(from..).and_then(|rest| rest.find(&needle)) {
                Some(at) => {
                    from += at + needle.len();
                    best = Some(from - needle.len());
                }
                None => break,
            }
        }
    }
    best.map(|offset| line_of(text, offset))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_keys_and_indices_in_toml() {
        let text = "[agent]\nmodel = \"m\"\n\n[loop_policy]\nmax_admissions = 5\nread_allowlist = [\n  \"a\",\n  \"b\",\n]\n";
        let key = |k: &str| Seg::Key(k.into());
        assert_eq!(toml_line(text, &[key("agent"), key("model")]), Some(2));
        assert_eq!(
            toml_line(text, &[key("loop_policy"), key("max_admissions")]),
            Some(5)
        );
        assert_eq!(
            toml_line(
                text,
                &[key("loop_policy"), key("read_allowlist"), Seg::Index(1)]
            ),
            Some(8)
        );
        // A missing leaf: the deepest part found.
        assert_eq!(toml_line(text, &[key("loop_policy"), key("nope")]), Some(4));
        assert_eq!(render(&[key("a"), Seg::Index(2), key("b")]), "a[2].b");
    }

    #[test]
    fn finds_keys_in_json() {
        let text = "{\n \"agent\": {\"model\": \"m\"},\n \"loop_policy\": {\n  \"max_admissions\": 5\n }\n}";
        let key = |k: &str| Seg::Key(k.into());
        assert_eq!(
            json_line(text, &[key("loop_policy"), key("max_admissions")]),
            Some(4)
        );
    }
}
