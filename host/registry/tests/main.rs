//! The registry client against a real registry on 127.0.0.1 (Debian's
//! docker-registry, through `scripts/registry-dev.sh`) and against
//! loopback listeners that hang: `cargo test -p verdict-registry --test
//! registry`. A test that cannot install the registry says SKIPPED.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod auth;
mod failures;
mod push_pull;
#[path = "support/dev_registry.rs"]
mod support;

use std::path::Path;
use std::time::Duration;
use verdict_registry::{ComponentInfo, Options, Registry};

/// Component-like bytes (the client does not parse them), distinct per `seed`.
pub fn component(seed: u8, len: usize) -> Vec<u8> {
    let mut bytes = b"\0asm\x0d\0\x01\0".to_vec();
    bytes.extend((0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)));
    bytes
}

/// A client caching in `cache` (none when `None`), with a short bound.
pub fn client(cache: Option<&Path>) -> Registry {
    Registry::new(Options {
        cache_dir: cache.map(Path::to_owned),
        timeout: Duration::from_secs(20),
        // Credentials only from what a test configures.
        docker_config: Some("/nonexistent/config.json".into()),
        ..Options::default()
    })
}

pub fn info() -> ComponentInfo {
    ComponentInfo::default()
}
