//! The built-in workspace tools: read, write and list artifacts in one
//! directory, each with its declared effect.
//!
//! Artifact ids are relative paths of `[A-Za-z0-9._-]` segments (no `..`,
//! no hidden segments); a path that resolves outside the workspace (a
//! symlink) is refused. Reads and writes are capped at [`MAX_ARTIFACT_BYTES`].

use crate::config::ToolName;
use crate::files::read::Why;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use verdict::Effect;
use verdict::{Tool, ToolError};

/// Largest artifact read or written, in bytes.
pub const MAX_ARTIFACT_BYTES: u64 = 1024 * 1024;
/// Most ids `list_artifacts` returns.
pub const MAX_LIST: usize = 1_000;

/// What the model is told when artifact `id` cannot be used: a missing
/// artifact and a refused one are different answers.
fn io_error(id: &str, error: &std::io::Error) -> ToolError {
    ToolError::new(match error.kind() {
        std::io::ErrorKind::NotFound => format!("artifact {id} does not exist"),
        std::io::ErrorKind::PermissionDenied => format!("artifact {id}: permission denied"),
        _ => format!("artifact {id}: {error}"),
    })
}

/// A workspace directory.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// The workspace at `root` (which must exist).
    pub fn open(root: &Path) -> std::io::Result<Self> {
        Ok(Self {
            root: root.canonicalize()?,
        })
    }

    /// The file of artifact `id`, refused when the id is not a plain
    /// relative path or resolves outside the workspace.
    fn path(&self, id: &str) -> Result<PathBuf, ToolError> {
        let valid = !id.is_empty()
            && id.len() <= 200
            && id.split('/').all(|seg| {
                !seg.is_empty()
                    && !seg.starts_with('.')
                    && seg
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
            });
        if !valid {
            return Err(ToolError::new(format!(
                "invalid artifact id {id:?}: use letters, digits, '.', '_', '-' and '/'"
            )));
        }
        let path = self.root.join(id);
        // A symlink must not lead out of the workspace.
        let mut probe = path.clone();
        while !probe.exists() {
            if !probe.pop() {
                break;
            }
        }
        let real = probe
            .canonicalize()
            .map_err(|e| ToolError::new(format!("artifact {id}: {e}")))?;
        if !real.starts_with(&self.root) {
            return Err(ToolError::new(format!(
                "artifact {id} is outside the workspace"
            )));
        }
        Ok(path)
    }

    fn read(&self, id: &str) -> Result<Value, ToolError> {
        let path = self.path(id)?;
        let bound = crate::files::Bound {
            bytes: MAX_ARTIFACT_BYTES,
            what: "artifact",
        };
        let bytes = crate::files::read::read(&path, bound).map_err(|e| match e.why {
            Why::Io(e) => io_error(id, &e),
            Why::NotRegular(_) => ToolError::new(format!("artifact {id} is not a file")),
            Why::TooLarge { .. } => ToolError::new(format!(
                "artifact {id} is larger than {MAX_ARTIFACT_BYTES} bytes"
            )),
            Why::NotText => ToolError::new(format!("artifact {id} is not UTF-8 text")),
        })?;
        let text = String::from_utf8(bytes)
            .map_err(|_| ToolError::new(format!("artifact {id} is not UTF-8 text")))?;
        let content = serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text));
        Ok(json!({"id": id, "content": content}))
    }

    fn write(&self, id: &str, content: &Value) -> Result<Value, ToolError> {
        let path = self.path(id)?;
        let text = match content {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if text.len() as u64 > MAX_ARTIFACT_BYTES {
            return Err(ToolError::new(format!(
                "content is larger than {MAX_ARTIFACT_BYTES} bytes"
            )));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| ToolError::new(format!("artifact {id}: {e}")))?;
        }
        std::fs::write(&path, &text).map_err(|e| ToolError::new(format!("artifact {id}: {e}")))?;
        Ok(json!({"id": id, "bytes": text.len()}))
    }

    fn list(&self) -> Result<Value, ToolError> {
        let mut ids = Vec::new();
        let mut stack = vec![(self.root.clone(), String::new())];
        // Walk no further than needed to know the list is truncated.
        while let Some((dir, prefix)) = stack.pop() {
            if ids.len() > MAX_LIST {
                break;
            }
            let entries =
                std::fs::read_dir(&dir).map_err(|e| ToolError::new(format!("list: {e}")))?;
            for entry in entries.flatten() {
                if ids.len() > MAX_LIST {
                    break;
                }
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') {
                    continue;
                }
                let id = format!("{prefix}{name}");
                match entry.file_type() {
                    Ok(t) if t.is_dir() => stack.push((entry.path(), format!("{id}/"))),
                    Ok(t) if t.is_file() => ids.push(id),
                    _ => {}
                }
            }
        }
        ids.sort();
        let truncated = ids.len() > MAX_LIST;
        ids.truncate(MAX_LIST);
        Ok(json!({"ids": ids, "truncated": truncated}))
    }

    /// The built-in tool `name` over this workspace.
    pub fn tool(&self, name: ToolName) -> Result<Tool, verdict::ToolDefinitionError> {
        let ws = self.clone();
        let tool = match name {
            ToolName::ReadArtifact => Tool::new(
                "read_artifact",
                json!({"type": "object", "properties": {"id": {"type": "string"}},
                       "required": ["id"], "additionalProperties": false}),
                move |args, _| {
                    let result = ws.read(args["id"].as_str().unwrap_or_default());
                    async move { result }
                },
            )?
            .with_description("Read an artifact from the workspace by id.")
            .with_effect(Effect::Read),
            ToolName::WriteArtifact => Tool::new(
                "write_artifact",
                json!({"type": "object", "properties": {"id": {"type": "string"}, "content": {}},
                       "required": ["id", "content"], "additionalProperties": false}),
                move |args, _| {
                    let result =
                        ws.write(args["id"].as_str().unwrap_or_default(), &args["content"]);
                    async move { result }
                },
            )?
            .with_description("Write an artifact (text, or JSON stored as text) to the workspace.")
            .with_effect(Effect::Write),
            ToolName::ListArtifacts => Tool::new(
                "list_artifacts",
                json!({"type": "object", "properties": {}, "additionalProperties": false}),
                move |_, _| {
                    let result = ws.list();
                    async move { result }
                },
            )?
            .with_description("List the artifact ids in the workspace.")
            .with_effect(Effect::Read),
        };
        Ok(tool)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn reads_writes_and_lists_inside_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        ws.write("A42", &json!({"ready": true})).unwrap();
        ws.write("notes/today.txt", &json!("hello")).unwrap();
        assert_eq!(ws.read("A42").unwrap()["content"], json!({"ready": true}));
        assert_eq!(
            ws.read("notes/today.txt").unwrap()["content"],
            json!("hello")
        );
        assert_eq!(ws.list().unwrap()["ids"], json!(["A42", "notes/today.txt"]));
        assert!(
            ws.read("missing")
                .unwrap_err()
                .message
                .contains("does not exist")
        );
    }

    #[test]
    fn denied_is_never_reported_as_missing() {
        use std::io::{Error, ErrorKind};
        let said = |kind| io_error("A42", &Error::from(kind)).message;
        assert_eq!(said(ErrorKind::NotFound), "artifact A42 does not exist");
        assert_eq!(
            said(ErrorKind::PermissionDenied),
            "artifact A42: permission denied"
        );
        assert!(said(ErrorKind::IsADirectory).starts_with("artifact A42: "));
    }

    #[test]
    fn refuses_ids_that_escape() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(&dir.path().join(".")).unwrap();
        for id in [
            "../x",
            "/etc/passwd",
            "a/../../b",
            ".hidden",
            "",
            "a//b",
            "a b",
        ] {
            assert!(ws.read(id).is_err(), "{id}");
            assert!(ws.write(id, &json!("x")).is_err(), "{id}");
        }
        #[cfg(unix)]
        {
            let outside = tempfile::tempdir().unwrap();
            std::fs::write(outside.path().join("secret"), "s").unwrap();
            std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
            let err = ws.read("link/secret").unwrap_err();
            assert!(err.message.contains("outside the workspace"), "{err:?}");
        }
    }

    #[test]
    fn long_listings_are_truncated() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..=MAX_LIST {
            std::fs::write(dir.path().join(format!("a{i:04}")), "x").unwrap();
        }
        let ws = Workspace::open(dir.path()).unwrap();
        let listed = ws.list().unwrap();
        assert_eq!(listed["ids"].as_array().unwrap().len(), MAX_LIST);
        assert_eq!(listed["truncated"], true);
    }

    #[test]
    fn tools_declare_their_effects() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let effects: Vec<(String, Effect)> = ToolName::ALL
            .iter()
            .map(|n| {
                let t = ws.tool(*n).unwrap();
                (t.name().to_owned(), t.effect())
            })
            .collect();
        assert_eq!(
            effects,
            vec![
                ("read_artifact".to_owned(), Effect::Read),
                ("write_artifact".to_owned(), Effect::Write),
                ("list_artifacts".to_owned(), Effect::Read),
            ]
        );
    }
}
