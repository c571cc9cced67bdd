//! The workspace facts a guest build needs, from `cargo metadata`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

use crate::Error;

/// A workspace: its root, target directory and guest-capable packages.
#[derive(Debug, Clone)]
pub(crate) struct Workspace {
    pub(crate) root: PathBuf,
    pub(crate) target_dir: PathBuf,
    libs: Vec<GuestLib>,
    members: Vec<String>,
}

/// A workspace package with a `cdylib` library target.
#[derive(Debug, Clone)]
pub(crate) struct GuestLib {
    pub(crate) package: String,
    /// The library's crate name: the stem of its `.wasm` file.
    pub(crate) lib_name: String,
    /// The package directory.
    pub(crate) dir: PathBuf,
}

#[derive(Deserialize)]
struct Metadata {
    workspace_root: PathBuf,
    target_directory: PathBuf,
    packages: Vec<Package>,
}

#[derive(Deserialize)]
struct Package {
    name: String,
    manifest_path: PathBuf,
    targets: Vec<Target>,
}

#[derive(Deserialize)]
struct Target {
    name: String,
    crate_types: Vec<String>,
}

impl Workspace {
    /// Runs `cargo metadata --no-deps` in `dir`.
    pub(crate) fn load(dir: &Path) -> Result<Self, Error> {
        let output = Command::new(crate::cargo::cargo_program())
            .args(["metadata", "--no-deps", "--format-version", "1"])
            .current_dir(dir)
            .env_remove("CARGO_TARGET_DIR")
            .output()
            .map_err(Error::Io)?;
        if !output.status.success() {
            return Err(Error::Metadata(crate::cargo::tail(&output.stderr)));
        }
        let metadata: Metadata = serde_json::from_slice(&output.stdout)
            .map_err(|error| Error::Metadata(error.to_string()))?;
        Ok(Self::from_metadata(metadata))
    }

    fn from_metadata(metadata: Metadata) -> Self {
        let members = metadata.packages.iter().map(|p| p.name.clone()).collect();
        let libs = metadata
            .packages
            .into_iter()
            .filter_map(|package| {
                let lib = package
                    .targets
                    .iter()
                    .find(|target| target.crate_types.iter().any(|t| t == "cdylib"))?;
                Some(GuestLib {
                    lib_name: lib.name.replace('-', "_"),
                    dir: package.manifest_path.parent()?.to_path_buf(),
                    package: package.name,
                })
            })
            .collect();
        Self {
            root: metadata.workspace_root,
            target_dir: metadata.target_directory,
            libs,
            members,
        }
    }

    /// The `cdylib` library of member `package`.
    pub(crate) fn cdylib(&self, package: &str) -> Result<&GuestLib, Error> {
        if let Some(lib) = self.libs.iter().find(|lib| lib.package == package) {
            Ok(lib)
        } else if self.members.iter().any(|member| member == package) {
            Err(Error::NotACdylib(package.to_owned()))
        } else {
            Err(Error::UnknownPackage(package.to_owned()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> Workspace {
        let json = r#"{
            "workspace_root": "/w",
            "target_directory": "/w/target",
            "packages": [
                {"name": "hostile-spin", "manifest_path": "/w/tests/guests/spin/Cargo.toml",
                 "targets": [{"name": "hostile-spin", "crate_types": ["cdylib", "rlib"]}]},
                {"name": "verdict-cli", "manifest_path": "/w/host/cli/Cargo.toml",
                 "targets": [{"name": "verdict", "crate_types": ["bin"]}]}
            ]
        }"#;
        Workspace::from_metadata(serde_json::from_str(json).unwrap())
    }

    #[test]
    fn finds_cdylib_packages_and_their_file_stem() {
        let workspace = workspace();
        let lib = workspace.cdylib("hostile-spin").unwrap();
        assert_eq!(lib.lib_name, "hostile_spin");
        assert_eq!(lib.dir, Path::new("/w/tests/guests/spin"));
        assert_eq!(workspace.target_dir, Path::new("/w/target"));
    }

    #[test]
    fn names_why_a_package_cannot_be_a_guest() {
        let workspace = workspace();
        assert!(matches!(
            workspace.cdylib("verdict-cli"),
            Err(Error::NotACdylib(_))
        ));
        assert!(matches!(
            workspace.cdylib("nope"),
            Err(Error::UnknownPackage(_))
        ));
    }
}
