//! Vertex AI's streamed function-call arguments (`streamFunctionCallArguments`):
//! a `functionCall` with a `name` and `willContinue: true` opens a call, later
//! `functionCall`s carry `partialArgs` (a JSON path and a typed value, string
//! values continued while `willContinue`), and an empty `functionCall` closes it.

use serde_json::{Map, Value};

use crate::errors::ProviderError;

/// Apply one `partialArgs` entry to `args`.
pub(super) fn apply(args: &mut Value, partial: &Value) -> Result<(), ProviderError> {
    let path = partial
        .get("jsonPath")
        .and_then(Value::as_str)
        .ok_or_else(|| ProviderError::malformed("partialArgs entry without jsonPath"))?;
    let slot = slot(args, path)?;
    if let Some(piece) = partial.get("stringValue").and_then(Value::as_str) {
        match slot {
            Value::String(s) => s.push_str(piece),
            other => *other = Value::String(piece.to_owned()),
        }
    } else if let Some(n) = partial.get("numberValue") {
        *slot = n.clone();
    } else if let Some(b) = partial.get("boolValue") {
        *slot = b.clone();
    } else if partial.get("nullValue").is_some() {
        *slot = Value::Null;
    }
    Ok(())
}

/// The value at `path` (`$.a.b[2].c`), created as needed.
fn slot<'a>(root: &'a mut Value, path: &str) -> Result<&'a mut Value, ProviderError> {
    let bad = || ProviderError::malformed(format!("unsupported jsonPath {path:?}"));
    let rest = path.strip_prefix('$').ok_or_else(bad)?;
    let mut current = root;
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                let mut key = String::new();
                while let Some(&n) = chars.peek() {
                    if n == '.' || n == '[' {
                        break;
                    }
                    key.push(n);
                    chars.next();
                }
                if !current.is_object() {
                    *current = Value::Object(Map::new());
                }
                let Value::Object(map) = current else {
                    return Err(bad());
                };
                current = map.entry(key).or_insert(Value::Null);
            }
            '[' => {
                let mut digits = String::new();
                for n in chars.by_ref() {
                    if n == ']' {
                        break;
                    }
                    digits.push(n);
                }
                let index: usize = digits.parse().map_err(|_| bad())?;
                if index > 10_000 {
                    return Err(bad());
                }
                if !current.is_array() {
                    *current = Value::Array(Vec::new());
                }
                let Value::Array(items) = current else {
                    return Err(bad());
                };
                if items.len() <= index {
                    items.resize(index + 1, Value::Null);
                }
                current = &mut items[index];
            }
            _ => return Err(bad()),
        }
    }
    Ok(current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_continue_and_paths_nest() {
        let mut args = json!({});
        for p in [
            json!({"jsonPath": "$.location", "stringValue": "San ", "willContinue": true}),
            json!({"jsonPath": "$.location", "stringValue": "Francisco"}),
            json!({"jsonPath": "$.opts.days[1]", "numberValue": 3}),
            json!({"jsonPath": "$.opts.metric", "boolValue": true}),
        ] {
            assert!(apply(&mut args, &p).is_ok());
        }
        assert_eq!(
            args,
            json!({"location": "San Francisco", "opts": {"days": [null, 3], "metric": true}})
        );
        assert!(
            apply(
                &mut args,
                &json!({"jsonPath": "location", "stringValue": "x"})
            )
            .is_err()
        );
    }
}
