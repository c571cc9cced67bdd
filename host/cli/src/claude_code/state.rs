//! How many times the hook blocked the current stop of a session: a small
//! file per session id, so the recovery bound holds across the separate
//! processes Claude Code starts for each stop.

use std::path::{Path, PathBuf};

/// The blocks of one session.
#[derive(Debug)]
pub struct BlockCount {
    path: PathBuf,
}

impl BlockCount {
    /// The count of `session` kept under `dir` (a session id that is not
    /// a plain name is hashed into one).
    pub fn of(dir: &Path, session: &str) -> Self {
        let plain = !session.is_empty()
            && session.len() <= 128
            && session
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        let name = if plain {
            session.to_owned()
        } else {
            verdict::records::sha256_hex(session.as_bytes())
        };
        Self {
            path: dir.join(format!("{name}.blocks")),
        }
    }

    /// The blocks so far (0 when none were kept or the file is unreadable).
    pub fn get(&self) -> u32 {
        std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Keeps `n` blocks.
    pub fn set(&self, n: u32) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = self.path.with_extension("blocks.tmp");
        std::fs::write(&tmp, n.to_string())?;
        std::fs::rename(&tmp, &self.path)
    }

    /// Forgets the session's blocks (its stop was allowed).
    pub fn clear(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn counts_are_kept_per_session_and_odd_ids_hashed() {
        let dir = tempfile::tempdir().unwrap();
        let a = BlockCount::of(dir.path(), "abc-1");
        assert_eq!(a.get(), 0);
        a.set(2).unwrap();
        assert_eq!(BlockCount::of(dir.path(), "abc-1").get(), 2);
        let odd = BlockCount::of(dir.path(), "../../etc/passwd");
        assert!(odd.path.starts_with(dir.path()));
        assert_eq!(odd.get(), 0);
        a.clear();
        assert_eq!(a.get(), 0);
    }
}
