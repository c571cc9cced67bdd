//! What can go wrong outside a handler: building an execution's agent,
//! serving the endpoint, talking to Restate's ingress and admin APIs.

/// A durable-execution error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DurableError {
    /// The agent of an execution could not be built.
    #[error("cannot build the agent: {0}")]
    Build(String),
    /// The endpoint could not listen.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// An HTTP request to Restate failed before an answer.
    #[error("cannot reach Restate at {url}: {detail}")]
    Unreachable {
        /// The URL.
        url: String,
        /// The client's description.
        detail: String,
    },
    /// Restate answered with an error status.
    #[error("Restate answered {status} to {url}: {body}")]
    Refused {
        /// The URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// An answer did not have the expected shape.
    #[error("unexpected answer from {url}: {detail}")]
    Unexpected {
        /// The URL.
        url: String,
        /// What was wrong.
        detail: String,
    },
    /// A request-identity public key is malformed.
    #[error("invalid request identity key {key:?}: {detail}")]
    IdentityKey {
        /// The key given.
        key: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The worker may not serve with its request identity settings (no
    /// key and unsigned requests not allowed, or unsigned requests on an
    /// address other than loopback).
    #[error("{0}")]
    Identity(String),
    /// The worker's TLS certificate or key could not be used.
    #[error("TLS: {0}")]
    Tls(String),
    /// An identifier is not usable (conversation or execution id).
    #[error("invalid {what} {value:?}: use 1-128 characters of A-Z, a-z, 0-9, '.', '_' and '-'")]
    InvalidId {
        /// Which id.
        what: &'static str,
        /// The value given.
        value: String,
    },
}
