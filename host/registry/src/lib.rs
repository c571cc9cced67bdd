//! Verifier components from OCI registries: `oci://HOST[:PORT]/REPO[:TAG|@sha256:DIGEST]`.
//!
//! [`Registry::push`] stores a component as a wasm OCI artifact (one
//! `application/wasm` layer, config `application/vnd.wasm.config.v0+json`,
//! annotations naming its WIT package, roles and the verdict version) and
//! returns the manifest digest. [`Registry::fetch`] resolves a tag to a
//! manifest digest once, verifies the manifest and the layer against their
//! digests (and a pin, and an allowlist), and keeps both in a local
//! content-addressed [`Cache`]: a pinned digest found there is served
//! without contacting the registry, and `offline` serves only the cache.
//!
//! Loopback registries (`localhost`, 127.0.0.0/8, `::1`) are reached over
//! plain HTTP; others over TLS (with [`RegistrySettings::ca_file`]'s roots
//! too); [`RegistrySettings::insecure`] overrides either way.
//! Credentials come from [`RegistrySettings`], else the Docker credentials
//! file. Every operation is bounded: [`Options::connect_timeout`] and
//! [`Options::timeout`] in time, [`settings::MAX_MANIFEST_BYTES`] and
//! [`Options::max_blob_bytes`] in size.
#![deny(missing_docs)]

pub mod artifact;
mod auth;
mod cache;
mod client;
mod error;
mod reference;
pub mod settings;

pub use artifact::ComponentInfo;
pub use auth::docker_config_path;
pub use cache::{Cache, sha256};
pub use client::{Fetched, Origin, Pushed, Registry};
pub use error::RegistryError;
pub use reference::{OciRef, SCHEME, check_digest, is_oci};
pub use settings::{Options, RegistrySettings};
