//! An MCP `CallToolResult` as the loop's tool result.
//!
//! Text blocks are joined; `structuredContent` is kept as JSON; images and
//! audio become references (their MIME type and size, never their bytes);
//! embedded resources and resource links keep their URI. `isError: true`
//! is a failed outcome carrying the server's text. A result larger than the
//! configured bound is cut, and says so.

use serde_json::{Map, Value, json};

/// The loop's value for a successful result, or the server's message for
/// an `isError` one.
pub fn to_loop_result(result: &Value, max_bytes: usize) -> Result<Value, String> {
    let mut text = String::new();
    let mut references = Vec::new();
    for block in result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(block.get("text").and_then(Value::as_str).unwrap_or(""));
            }
            Some(kind @ ("image" | "audio")) => {
                let data = block.get("data").and_then(Value::as_str).unwrap_or("");
                references.push(json!({
                    "type": kind,
                    "mimeType": block.get("mimeType"),
                    "base64Bytes": data.len(),
                }));
            }
            Some("resource") => {
                let resource = block.get("resource");
                references.push(json!({
                    "type": "resource",
                    "uri": resource.and_then(|r| r.get("uri")),
                    "mimeType": resource.and_then(|r| r.get("mimeType")),
                }));
            }
            Some("resource_link") => references.push(json!({
                "type": "resource_link",
                "uri": block.get("uri"),
                "name": block.get("name"),
            })),
            _ => {}
        }
    }
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let message = if text.is_empty() {
            "the tool reported an error".to_owned()
        } else {
            cut(&text, max_bytes)
        };
        return Err(message);
    }
    let mut out = Map::new();
    let structured = result.get("structuredContent").filter(|v| !v.is_null());
    let structured_bytes = structured
        .and_then(|v| serde_json::to_vec(v).ok())
        .map_or(0, |b| b.len());
    if structured_bytes > max_bytes {
        out.insert(
            "structuredContent".into(),
            json!({ "cut": format!("{structured_bytes} bytes, over the {max_bytes}-byte bound") }),
        );
    } else if let Some(structured) = structured {
        out.insert("structuredContent".into(), structured.clone());
    }
    let room = max_bytes.saturating_sub(structured_bytes.min(max_bytes));
    if !text.is_empty() {
        out.insert("text".into(), Value::String(cut(&text, room)));
    }
    if !references.is_empty() {
        out.insert("references".into(), Value::Array(references));
    }
    Ok(Value::Object(out))
}

/// `text` cut to at most `max` bytes on a character boundary, saying how
/// much was left out.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[cut: {} of {} bytes shown]",
        &text[..end],
        end,
        text.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_images_and_errors() {
        let ok = json!({"content": [
            {"type": "text", "text": "a"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "text", "text": "b"}
        ]});
        let got = to_loop_result(&ok, 1024).unwrap_or_default();
        assert_eq!(got["text"], "a\nb");
        assert_eq!(got["references"][0]["base64Bytes"], 4);
        assert!(!got.to_string().contains("AAAA"));
        let failed =
            json!({"isError": true, "content": [{"type": "text", "text": "no such file"}]});
        assert_eq!(
            to_loop_result(&failed, 1024),
            Err("no such file".to_owned())
        );
    }

    #[test]
    fn a_large_text_is_cut_on_a_character_boundary() {
        let big = json!({"content": [{"type": "text", "text": "é".repeat(1000)}]});
        let got = to_loop_result(&big, 101).unwrap_or_default();
        let text = got["text"].as_str().unwrap_or_default();
        assert!(text.starts_with(&"é".repeat(50)));
        assert!(text.contains("[cut: 100 of 2000 bytes shown]"), "{text}");
    }
}
