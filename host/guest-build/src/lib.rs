#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod cargo;
mod consts;
mod error;
mod lean;
mod metadata;

use std::path::{Path, PathBuf};

pub use consts::{const_name, rust_consts};
pub use error::Error;
pub use lean::{EncodeError, componentize_module};

/// The target guests are compiled for.
pub const GUEST_TARGET: &str = "wasm32-wasip2";
/// The target lean guests are compiled for ([`GuestBuilder::lean`]): Rust's
/// standard library without WASI, so the component imports verdict's own
/// interfaces and, for the SDK's panic messages, WASI's standard error.
pub const LEAN_TARGET: &str = "wasm32-unknown-unknown";
/// The directory under the workspace's `target/` that holds guest builds.
pub const GUEST_TARGET_SUBDIR: &str = "wasm-guests";

/// One compiled guest component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltGuest {
    /// The cargo package name (e.g. `artifact-ready`).
    pub package: String,
    /// Absolute path of the `.wasm` component.
    pub path: PathBuf,
}

/// Builds the given workspace packages (each a `cdylib`) for `wasm32-wasip2`.
///
/// The workspace is the one containing the calling build script's package
/// (`CARGO_MANIFEST_DIR`), or the current directory outside a build script.
/// Prints `cargo:rerun-if-changed` lines for `guest-sdk/`, `wit/`, the lock
/// file and each package's directory.
pub fn build_guests(packages: &[&str]) -> Result<Vec<BuiltGuest>, Error> {
    GuestBuilder::for_calling_workspace()?.build(packages)
}

/// A build script's whole job: builds `packages` ([`build_guests`]) and
/// writes `$OUT_DIR/guests.rs` ([`rust_consts`]: one `pub const NAME: &str`
/// path per guest, and `ALL`). Failure is one `error:` line and a failed
/// build.
pub fn write_guest_consts(packages: &[&str]) -> std::process::ExitCode {
    write_consts(false, packages, "guests.rs")
}

/// [`write_guest_consts`] for lean builds ([`GuestBuilder::lean`]), into
/// `$OUT_DIR/lean_guests.rs`.
pub fn write_lean_guest_consts(packages: &[&str]) -> std::process::ExitCode {
    write_consts(true, packages, "lean_guests.rs")
}

/// Builds `packages` (lean or not) and writes their constants to
/// `$OUT_DIR/{file}`.
fn write_consts(lean: bool, packages: &[&str], file: &str) -> std::process::ExitCode {
    let written = (|| -> Result<(), Box<dyn std::error::Error>> {
        let guests = GuestBuilder::for_calling_workspace()?
            .lean(lean)
            .build(packages)?;
        let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
        std::fs::write(out_dir.join(file), rust_consts(&guests))?;
        Ok(())
    })();
    match written {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Builds guests of one workspace; [`build_guests`] with the defaults.
#[derive(Debug, Clone)]
pub struct GuestBuilder {
    workspace: metadata::Workspace,
    target_dir: PathBuf,
    emit_rerun: bool,
    lean: bool,
}

impl GuestBuilder {
    /// A builder for the cargo workspace that contains `dir`.
    pub fn for_workspace_of(dir: &Path) -> Result<Self, Error> {
        let workspace = metadata::Workspace::load(dir)?;
        let target_dir = workspace.target_dir.join(GUEST_TARGET_SUBDIR);
        Ok(Self {
            workspace,
            target_dir,
            emit_rerun: std::env::var_os("OUT_DIR").is_some(),
            lean: false,
        })
    }

    /// A builder for the workspace of the calling build script's package
    /// (`CARGO_MANIFEST_DIR`), or of the current directory outside one.
    fn for_calling_workspace() -> Result<Self, Error> {
        let start = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .map_or_else(std::env::current_dir, Ok)
            .map_err(Error::Io)?;
        Self::for_workspace_of(&start)
    }

    /// Uses another target directory for the nested build.
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = dir.into();
        self
    }

    /// Whether to print `cargo:rerun-if-changed` lines (default: only when
    /// running inside a build script).
    pub fn emit_rerun_if_changed(mut self, emit: bool) -> Self {
        self.emit_rerun = emit;
        self
    }

    /// Builds lean guests (default: off): for [`LEAN_TARGET`] instead of
    /// [`GUEST_TARGET`], each core module then made a component
    /// (`<lib>.component.wasm` beside it). A lean SDK verifier imports only
    /// standard error from WASI, so it is smaller and loads and checks
    /// faster; what it loses is the rest of WASI (clocks, random bytes).
    pub fn lean(mut self, lean: bool) -> Self {
        self.lean = lean;
        self
    }

    /// The Rust target this builder compiles for.
    fn target(&self) -> &'static str {
        if self.lean { LEAN_TARGET } else { GUEST_TARGET }
    }

    /// The workspace root.
    pub fn workspace_root(&self) -> &Path {
        &self.workspace.root
    }

    /// Builds `packages` and returns their components, in the given order.
    pub fn build(&self, packages: &[&str]) -> Result<Vec<BuiltGuest>, Error> {
        let libs = packages
            .iter()
            .map(|name| self.workspace.cdylib(name))
            .collect::<Result<Vec<_>, _>>()?;
        if self.emit_rerun {
            self.print_rerun_if_changed(&libs);
        }
        let target = self.target();
        cargo::check_target_installed(target)?;
        cargo::build(&self.workspace.root, &self.target_dir, target, packages)?;
        let out_dir = self.target_dir.join(target).join("release");
        libs.into_iter()
            .map(|lib| {
                let path = out_dir.join(format!("{}.wasm", lib.lib_name));
                if !path.is_file() {
                    return Err(Error::MissingOutput {
                        package: lib.package.clone(),
                        path,
                    });
                }
                let path = if self.lean {
                    let component = out_dir.join(format!("{}.component.wasm", lib.lib_name));
                    lean::componentize(&lib.package, &path, &component)?;
                    component
                } else {
                    path
                };
                Ok(BuiltGuest {
                    package: lib.package.clone(),
                    path,
                })
            })
            .collect()
    }

    fn print_rerun_if_changed(&self, libs: &[&metadata::GuestLib]) {
        let root = &self.workspace.root;
        let shared = ["guest-sdk", "wit", "Cargo.lock", "Cargo.toml"].map(|p| root.join(p));
        for path in shared.iter().chain(libs.iter().map(|lib| &lib.dir)) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}
