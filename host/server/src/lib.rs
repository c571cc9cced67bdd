//! The verifier service behind `verdict serve`: tenants' verifiers over a
//! versioned JSON API (`/v1/...`), with per-tenant bearer tokens, bounded
//! concurrency, Prometheus metrics, atomic verifier swaps and a graceful
//! drain; and [`RemoteChecker`](client::RemoteChecker), the loop's checker
//! over that API.
//!
//! Features: `report` (the JSON object of one check, shared with `verdict
//! check --json`), `server` (the HTTP service; default) and `client` (the
//! remote checker).
#![deny(missing_docs)]

#[cfg(feature = "report")]
pub mod report;

#[cfg(feature = "server")]
mod access;
#[cfg(feature = "server")]
mod auth;
#[cfg(feature = "server")]
mod catalog;
#[cfg(feature = "server")]
mod error;
#[cfg(feature = "server")]
mod lifecycle;
#[cfg(feature = "server")]
mod limits;
#[cfg(feature = "server")]
mod listen;
#[cfg(feature = "server")]
mod metrics;
#[cfg(feature = "server")]
mod recording;
#[cfg(feature = "server")]
mod reload;
#[cfg(feature = "server")]
mod routes;
#[cfg(feature = "server")]
mod settings;
#[cfg(feature = "server")]
mod state;
#[cfg(feature = "server")]
mod threads;
#[cfg(feature = "server")]
mod tls;
#[cfg(feature = "server")]
mod token;

#[cfg(feature = "client")]
pub mod client;

#[cfg(feature = "server")]
pub use error::{ApiError, ServeError};
#[cfg(feature = "server")]
pub use lifecycle::{Server, ServerHandle};
#[cfg(feature = "server")]
pub use token::hash_token;
/// The OpenAPI document `GET /v1/openapi.json` serves (`openapi.json`).
#[cfg(feature = "server")]
pub const OPENAPI: &str = routes::OPENAPI;
#[cfg(feature = "server")]
pub use routes::ROUTES;
#[cfg(feature = "server")]
pub use settings::{Reloader, ServerSettings, Settings, TenantSettings, TlsFiles, VerifierSpec};

/// The version of the verifier interface the service runs
/// (`verdict:verifier@0.1.1`: 0.1.0 and its optional `warm-up` export),
/// reported with every check.
pub const WIT_VERSION: &str = "verdict:verifier@0.1.1";

/// The header carrying a call's deadline: milliseconds left, as decimal.
/// The server takes the earlier of it and the tenant's own timeout.
pub const DEADLINE_HEADER: &str = "x-verdict-deadline-ms";

/// The header carrying the id the server gave a check (also in its body).
pub const CHECK_ID_HEADER: &str = "x-verdict-check-id";
