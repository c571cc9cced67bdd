//! Tenant artifact stores: what a verifier may read through the read-only
//! `artifacts` import.
//!
//! Every store refuses ids that are absolute, contain `..` or `.` segments,
//! empty segments, backslashes or NUL, before touching any storage, so both
//! implementations give the same answer for the same hostile id.

mod cache;
mod dir;
mod memory;

pub use dir::DirStore;
pub use memory::MemoryStore;

/// Longest artifact id accepted, in bytes.
pub const MAX_ARTIFACT_ID_BYTES: usize = 1024;

/// One artifact's content and metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactData {
    /// The id it was read by.
    pub id: String,
    /// Opaque revision; changes whenever the content changes.
    pub revision: String,
    /// Size in bytes.
    pub size: u64,
    /// The content.
    pub bytes: Vec<u8>,
}

/// Why an artifact operation was refused. Mirrors the WIT `artifact-error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArtifactError {
    /// No artifact with that id in this tenant's scope.
    #[error("artifact not found")]
    NotFound,
    /// The id is malformed or outside this tenant's scope.
    #[error("artifact access denied")]
    Denied,
    /// The artifact is larger than the per-read limit (its size in bytes).
    #[error("artifact is too large ({0} bytes)")]
    TooLarge(u64),
    /// The call used all the artifact operations it is allowed.
    #[error("artifact read limit reached")]
    LimitReached,
}

/// A tenant's artifact storage. Implementations must be read-only from the
/// verifier's point of view and must keep every id inside the tenant's scope.
pub trait ArtifactStore: Send + Sync + std::fmt::Debug {
    /// Reads one artifact, refusing with `TooLarge` anything over `max_bytes`.
    fn read(&self, id: &str, max_bytes: u64) -> Result<ArtifactData, ArtifactError>;

    /// Lists ids starting with `prefix`, sorted, at most `max_entries`.
    fn list(&self, prefix: &str, max_entries: usize) -> Result<Vec<String>, ArtifactError>;
}

/// Checks that `id` is a relative, `/`-separated path with no `.`/`..` or
/// empty segments, no backslash and no NUL.
pub fn validate_artifact_id(id: &str) -> Result<(), ArtifactError> {
    if id.is_empty()
        || id.len() > MAX_ARTIFACT_ID_BYTES
        || id.starts_with('/')
        || id.contains('\\')
        || id.contains('\0')
    {
        return Err(ArtifactError::Denied);
    }
    if id
        .split('/')
        .any(|seg| seg.is_empty() || seg == "." || seg == "..")
    {
        return Err(ArtifactError::Denied);
    }
    Ok(())
}

/// Checks a list prefix: empty, or a valid id prefix (a trailing `/` allowed).
pub(crate) fn validate_prefix(prefix: &str) -> Result<(), ArtifactError> {
    if prefix.is_empty() {
        return Ok(());
    }
    validate_artifact_id(prefix.strip_suffix('/').unwrap_or(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_ids_are_denied() {
        for id in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a/./b",
            "a//b",
            "a\\b",
            "a\0b",
            "..",
            ".",
            "a/",
        ] {
            assert_eq!(
                validate_artifact_id(id),
                Err(ArtifactError::Denied),
                "{id:?}"
            );
        }
        let long = "a".repeat(MAX_ARTIFACT_ID_BYTES + 1);
        assert_eq!(validate_artifact_id(&long), Err(ArtifactError::Denied));
    }

    #[test]
    fn plain_ids_are_accepted() {
        for id in ["A42", "receipts/call-1.json", "a.b/c-d_e", "..a", "a.."] {
            assert_eq!(validate_artifact_id(id), Ok(()), "{id:?}");
        }
        assert_eq!(validate_prefix(""), Ok(()));
        assert_eq!(validate_prefix("receipts/"), Ok(()));
        assert_eq!(validate_prefix("../"), Err(ArtifactError::Denied));
    }
}
