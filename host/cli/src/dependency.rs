//! The `verdict-guest` dependency of a Rust project (`new-verifier
//! --verdict-guest`): a TOML dependency value, parsed and written back as
//! parsed, so that nothing but one dependency reaches `Cargo.toml`.

use toml::Value;

/// What a dependency value may be, as stated when it is not.
pub const FORM: &str = "a version string (\"0.1\") or an inline table with `path`, `version` \
     or `git` (with at most one of `branch`, `tag`, `rev`), e.g. '{ path = \"/src/verdict/guest-sdk\" }'";

/// `text` as one dependency value, rendered for `Cargo.toml`; `Err` says
/// what is wrong.
pub fn parse(text: &str) -> Result<String, String> {
    let doc: toml::Table = toml::from_str(&format!("v = {text}"))
        .map_err(|e| format!("not a TOML value: {}", e.message()))?;
    if doc.len() != 1 {
        return Err("more than one value".into());
    }
    let Some(value) = doc.get("v") else {
        return Err("not a TOML value".into());
    };
    match value {
        Value::String(version) if !version.trim().is_empty() => Ok(value.to_string()),
        Value::String(_) => Err("an empty version".into()),
        Value::Table(table) => inline(table),
        other => Err(format!("a {}, not a dependency", other.type_str())),
    }
}

/// An inline table of string fields, re-rendered with its keys in the
/// order `path`, `version`, `git`, `branch`, `tag`, `rev`.
fn inline(table: &toml::Table) -> Result<String, String> {
    const SOURCES: &[&str] = &["path", "version", "git"];
    const GIT_REFS: &[&str] = &["branch", "tag", "rev"];
    for (key, value) in table {
        if !SOURCES.contains(&key.as_str()) && !GIT_REFS.contains(&key.as_str()) {
            return Err(format!("unknown key `{key}`"));
        }
        if !matches!(value, Value::String(s) if !s.trim().is_empty()) {
            return Err(format!("`{key}` must be a non-empty string"));
        }
    }
    let fields: Vec<String> = SOURCES
        .iter()
        .chain(GIT_REFS)
        .filter_map(|key| table.get(*key).map(|value| format!("{key} = {value}")))
        .collect();
    if !SOURCES.iter().any(|k| table.contains_key(*k)) {
        return Err("no `path`, `version` or `git`".into());
    }
    let refs = GIT_REFS.iter().filter(|k| table.contains_key(**k)).count();
    if refs > 0 && !table.contains_key("git") {
        return Err("`branch`, `tag` and `rev` go with `git`".into());
    }
    if refs > 1 {
        return Err("at most one of `branch`, `tag`, `rev`".into());
    }
    Ok(format!("{{ {} }}", fields.join(", ")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn dependency_values() {
        assert_eq!(parse("\"0.1\"").unwrap(), "\"0.1\"");
        assert_eq!(
            parse("{path='/x'}").unwrap(),
            "{ path = \"/x\" }",
            "re-rendered"
        );
        for bad in [
            "x = [",
            "{ path = 1 }",
            "{}",
            "[1]",
            "\"1\"\n[x]\ny = 1",
            "{ rev = \"a\" }",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
