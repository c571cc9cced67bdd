//! One module per subcommand.

pub mod audit;
pub mod check;
pub mod compile_child;
pub mod componentize;
pub mod console;
pub mod demo;
pub mod fake_provider;
pub mod hook;
pub mod inspect;
pub mod mcp;
pub mod new_verifier;
pub mod pull;
pub mod push;
pub mod replay;
pub mod run;
pub mod serve;
pub mod status;
pub mod submit;
pub mod worker;

use anyhow::Context;
use std::path::PathBuf;
use verdict::{HostConfig, VerifierHost};

/// Options shared by commands that load verifiers.
#[derive(Debug, clap::Args)]
pub struct HostArgs {
    /// Directory for compiled components (default: $VERDICT_CACHE_DIR,
    /// else $XDG_CACHE_HOME/verdict, else ~/.cache/verdict).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Compile every time; never read or write the cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Fetch `oci://` verifiers only from the local cache; never contact
    /// a registry.
    #[arg(long)]
    pub offline: bool,
}

impl HostArgs {
    pub(crate) fn cache_dir(&self) -> Option<PathBuf> {
        if self.no_cache {
            return None;
        }
        if let Some(dir) = &self.cache_dir {
            return Some(dir.clone());
        }
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        env("VERDICT_CACHE_DIR")
            .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("verdict")))
            .or_else(|| env("HOME").map(|d| d.join(".cache").join("verdict")))
    }

    /// Builds the verifier host of a one-shot command: a large component
    /// loaded with Winch stays on it (a background Cranelift compile would
    /// be killed with the process before it reached the cache).
    pub fn host(&self) -> anyhow::Result<VerifierHost> {
        self.build_host(false)
    }

    /// Builds the verifier host of a long-lived process (`console`,
    /// `worker`): a large component loaded with Winch is compiled with
    /// Cranelift in the background and its next checks use that code.
    pub fn long_lived_host(&self) -> anyhow::Result<VerifierHost> {
        self.build_host(true)
    }

    fn build_host(&self, optimize_in_background: bool) -> anyhow::Result<VerifierHost> {
        crate::oci::set_defaults(crate::oci::Defaults {
            cache_dir: self.cache_dir(),
            offline: self.offline,
        });
        let config = HostConfig {
            cache_dir: self.cache_dir(),
            // One-shot CLI calls gain nothing from a pool.
            pooling: false,
            // The user's own cache, for one short-lived process: a cached
            // 12 MB verifier loads in ~1 ms instead of ~80 (see
            // `HostConfig::map_cache_entries` for what it trusts).
            map_cache_entries: true,
            // Compiles bounded in memory and time, in this binary re-run.
            compile_in: compile_child::compile_in(),
            optimize_in_background,
            ..HostConfig::default()
        };
        VerifierHost::new(config).context("cannot start the verifier host")
    }
}

/// Reads a verifier's bytes: a path, or `builtin:NAME` for a sample verifier
/// embedded in this binary.
pub fn read_verifier(spec: &str) -> anyhow::Result<Vec<u8>> {
    if let Some(name) = spec.strip_prefix("builtin:") {
        return crate::builtin_verifiers::get(name)
            .map(<[u8]>::to_vec)
            .with_context(|| {
                format!(
                    "no built-in verifier `{name}` (available: {})",
                    crate::builtin_verifiers::names().join(", ")
                )
            });
    }
    // Regular files only, opened without blocking and read up to the load
    // limit: a FIFO or a huge file is refused, never waited on.
    Ok(crate::files::read::read(
        std::path::Path::new(spec),
        crate::files::Bound::component(),
    )?)
}

/// A small multi-threaded runtime for one command.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}
