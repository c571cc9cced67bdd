//! Why a guest build failed.

use std::path::PathBuf;

/// A guest build failure, worded for the person running the build.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or process operation failed.
    #[error("guest build I/O error: {0}")]
    Io(#[source] std::io::Error),
    /// `cargo metadata` failed or printed something unexpected.
    #[error("cargo metadata failed: {0}")]
    Metadata(String),
    /// The package is not a member of the workspace.
    #[error("guest package `{0}` is not a member of the workspace")]
    UnknownPackage(String),
    /// The package has no `cdylib` library target, so no component.
    #[error("guest package `{0}` has no library with crate-type \"cdylib\"")]
    NotACdylib(String),
    /// The Rust target is not installed.
    #[error("{0} target missing: run `rustup target add {0}`")]
    TargetMissing(&'static str),
    /// The nested `cargo build` failed.
    #[error("building guests {packages} failed ({status}):\n{stderr_tail}")]
    BuildFailed {
        /// The packages requested, comma-separated.
        packages: String,
        /// How cargo exited.
        status: String,
        /// The last lines cargo printed on stderr.
        stderr_tail: String,
    },
    /// A lean guest's core module could not be made a component.
    #[error("guest `{package}` built but is not a component: {reason}")]
    Componentize {
        /// The package.
        package: String,
        /// What the component encoder said.
        reason: String,
    },
    /// Cargo succeeded but the component file is not where expected.
    #[error("guest `{package}` built but {} is missing", path.display())]
    MissingOutput {
        /// The package.
        package: String,
        /// Where the component was expected.
        path: PathBuf,
    },
}
