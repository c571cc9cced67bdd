//! Read-only access to the calling tenant's artifacts.

use thiserror::Error;

/// Why an artifact operation was refused. Failures are values, never traps.
/// Mirrors the WIT's `artifact-error`, which a later WIT version may extend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
#[non_exhaustive]
pub enum ArtifactError {
    /// No artifact with that id in this tenant's scope.
    #[error("artifact not found")]
    NotFound,
    /// The id is malformed or outside this tenant's scope.
    #[error("artifact access denied")]
    Denied,
    /// The artifact is larger than the per-read byte limit (its size).
    #[error("artifact too large ({0} bytes)")]
    TooLarge(u64),
    /// This call has used all the reads it is allowed.
    #[error("artifact read limit reached")]
    LimitReached,
}

impl ArtifactError {
    /// A stable kebab-case code, as spelled in the WIT (`not-found`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            Self::NotFound => "not-found",
            Self::Denied => "denied",
            Self::TooLarge(_) => "too-large",
            Self::LimitReached => "limit-reached",
        }
    }
}

/// Why an artifact could not be read as JSON: the read was refused, or the
/// bytes are not JSON. Closed by design (not `#[non_exhaustive]`), so a
/// verifier matches both without a fallback arm; a new way to refuse a read
/// is an [`ArtifactError`].
#[derive(Debug, Error)]
pub enum JsonReadError {
    /// The read itself was refused.
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    /// The bytes are not valid JSON.
    #[error("artifact is not valid JSON: {0}")]
    InvalidJson(#[from] serde_json::Error),
}

/// One artifact's content and metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    /// The id it was read by.
    pub id: String,
    /// Opaque revision: changes whenever the content changes.
    pub revision: String,
    /// Size in bytes.
    pub size: u64,
    /// The content.
    pub bytes: Vec<u8>,
}

impl Artifact {
    /// The content parsed as JSON.
    pub fn json(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_slice(&self.bytes)
    }

    /// The content as UTF-8 text, if it is.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }
}

/// The artifacts a verifier may read. In a component this is the host's
/// `artifacts` import; in native tests it is usually [`crate::MemoryArtifacts`].
pub trait Artifacts {
    /// Reads one artifact by id (a relative, `/`-separated path).
    fn read(&self, id: &str) -> Result<Artifact, ArtifactError>;

    /// Lists artifact ids that start with `prefix`, sorted, bounded by the host.
    fn list(&self, prefix: &str) -> Result<Vec<String>, ArtifactError>;

    /// Reads an artifact and parses it as JSON.
    fn read_json(&self, id: &str) -> Result<serde_json::Value, JsonReadError> {
        Ok(self.read(id)?.json()?)
    }

    /// True when the artifact exists; `NotFound` becomes `Ok(false)`.
    fn exists(&self, id: &str) -> Result<bool, ArtifactError> {
        match self.read(id) {
            Ok(_) => Ok(true),
            Err(ArtifactError::NotFound) => Ok(false),
            Err(error) => Err(error),
        }
    }
}
