//! Why the fake provider could not start.

use thiserror::Error;

/// Why the fake provider could not start.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum FakeServerError {
    /// It only binds loopback addresses.
    #[error("the fake provider binds loopback addresses only, not {0}")]
    NotLoopback(std::net::SocketAddr),
    /// Binding failed.
    #[error("cannot bind the fake provider: {0}")]
    Bind(#[source] std::io::Error),
    /// The script file could not be read or parsed.
    #[error("bad fake provider script: {0}")]
    Script(String),
}
