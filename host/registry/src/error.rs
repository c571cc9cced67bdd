//! Everything a registry operation can fail with, each saying what to do.

use std::path::PathBuf;
use std::time::Duration;

/// Why a push, a pull or a cache lookup failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The reference is not `oci://HOST[:PORT]/REPO[:TAG|@sha256:DIGEST]`.
    #[error("{reference} is not a valid OCI reference: {why}")]
    InvalidReference {
        /// The reference as written.
        reference: String,
        /// What is wrong with it.
        why: String,
    },
    /// The registry answered 401: no credentials, or rejected ones.
    #[error("{registry} answered 401 Unauthorized{}: {hint}", match .credentials { Some(from) => format!(" to the credentials from {from}"), None => " (no credentials were sent)".to_owned() })]
    Unauthorized {
        /// `HOST[:PORT]`.
        registry: String,
        /// Where the credentials sent came from, if any were.
        credentials: Option<String>,
        /// How to log in.
        hint: String,
    },
    /// The registry answered 403: the credentials may not do this.
    #[error(
        "{registry} denied access to {reference} (403 Forbidden): the account may not {operation} this repository"
    )]
    Denied {
        /// `HOST[:PORT]`.
        registry: String,
        /// The reference.
        reference: String,
        /// `pull` or `push`.
        operation: &'static str,
    },
    /// The registry has no such repository, tag, manifest or blob.
    #[error("{reference} was not found on {registry}: {what}")]
    NotFound {
        /// `HOST[:PORT]`.
        registry: String,
        /// The reference.
        reference: String,
        /// What is missing.
        what: String,
    },
    /// The registry cannot be reached.
    #[error("cannot connect to {registry}: {why}")]
    Connect {
        /// `HOST[:PORT]`.
        registry: String,
        /// The transport's reason.
        why: String,
    },
    /// The operation did not finish in time (a registry that hangs or
    /// stalls mid-blob); nothing was written to the cache.
    #[error("{operation} of {reference} did not finish within {} ms (a registry that hangs or stalls); nothing was cached", .after.as_millis())]
    Timeout {
        /// `pull` or `push`.
        operation: &'static str,
        /// The reference.
        reference: String,
        /// The bound that expired.
        after: Duration,
    },
    /// Content does not hash to the digest that names it: a tampered blob,
    /// a corrupt download or a wrong pin.
    #[error("{what} of {reference} does not match its digest: expected {expected}, got {actual}")]
    DigestMismatch {
        /// What was checked (`manifest`, `layer`, `cached layer`, …).
        what: &'static str,
        /// The reference.
        reference: String,
        /// The digest that names the content.
        expected: String,
        /// The digest of the bytes received.
        actual: String,
    },
    /// A tag resolved to a digest the tenant's allowlist does not hold.
    #[error("{reference} resolved to {digest}, which is not in allowed_digests ({})", .allowed.join(", "))]
    NotAllowed {
        /// The reference.
        reference: String,
        /// The digest it resolved to.
        digest: String,
        /// The digests allowed.
        allowed: Vec<String>,
    },
    /// A manifest or blob larger than the bound.
    #[error("the {what} of {reference} is {size} bytes, over the {max}-byte bound")]
    TooLarge {
        /// `manifest` or `layer`.
        what: &'static str,
        /// The reference.
        reference: String,
        /// Its size (declared or received so far).
        size: u64,
        /// The bound.
        max: u64,
    },
    /// The artifact is not a wasm component artifact.
    #[error("{reference} is not a wasm component artifact: {why}")]
    NotWasm {
        /// The reference.
        reference: String,
        /// What is wrong with its manifest.
        why: String,
    },
    /// `--offline` and the reference is not in the cache.
    #[error("{reference} is not in the local cache ({}) and --offline forbids pulling it: run once online, or pin a digest that was pulled before", .cache.display())]
    NotCached {
        /// The reference.
        reference: String,
        /// The cache directory searched.
        cache: PathBuf,
    },
    /// `--offline` without a cache directory.
    #[error(
        "--offline needs the local cache, but the cache is off (--no-cache or no cache directory)"
    )]
    OfflineWithoutCache,
    /// Credentials that cannot be used (an unset variable, a malformed
    /// Docker credentials file).
    #[error("credentials for {registry}: {why}")]
    Credentials {
        /// `HOST[:PORT]`.
        registry: String,
        /// What is wrong.
        why: String,
    },
    /// The registry's `ca_file` cannot be used.
    #[error("[registries.\"{registry}\"] ca_file {}: {why}", .path.display())]
    CaFile {
        /// `HOST[:PORT]`.
        registry: String,
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The local cache could not be read or written.
    #[error("the OCI cache at {}: {source}", .path.display())]
    Cache {
        /// The file or directory.
        path: PathBuf,
        /// The IO error.
        source: std::io::Error,
    },
    /// Pushing needs a tag to push to.
    #[error("{0}: push to a tag (oci://HOST/REPO:TAG); the digest is what the push prints")]
    PushNeedsTag(String),
    /// Any other answer of the registry.
    #[error("{registry}: {message}")]
    Registry {
        /// `HOST[:PORT]`.
        registry: String,
        /// The client's description.
        message: String,
    },
    /// The async runtime for a blocking call could not start.
    #[error("cannot start the registry client: {0}")]
    Runtime(std::io::Error),
}
