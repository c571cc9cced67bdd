//! The nested `cargo build` for guests, with a clean environment.

use std::path::Path;
use std::process::Command;

use crate::Error;

/// Variables the outer build sets for itself that would break or redirect
/// the nested build: host rustflags, wrappers (clippy sets
/// `RUSTC_WORKSPACE_WRAPPER`), target and target-dir overrides.
const SCRUBBED_ENV: &[&str] = &[
    "CARGO_ENCODED_RUSTFLAGS",
    "RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
    "CARGO_BUILD_TARGET",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_LLVM_COV",
    "LLVM_PROFILE_FILE",
];

/// Lines of cargo's stderr kept in a build error.
const STDERR_TAIL_LINES: usize = 40;

/// The cargo that runs this build script, or `cargo` from `PATH`.
pub(crate) fn cargo_program() -> std::ffi::OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// The rustc cargo would use.
fn rustc_program() -> std::ffi::OsString {
    std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into())
}

/// Fails with [`Error::TargetMissing`] unless `target`'s standard library
/// is installed.
pub(crate) fn check_target_installed(target: &'static str) -> Result<(), Error> {
    target_installed(&rustc_program(), target)
}

/// [`check_target_installed`] with the given rustc.
fn target_installed(rustc: &std::ffi::OsStr, target: &'static str) -> Result<(), Error> {
    let output = Command::new(rustc)
        .args(["--print", "target-libdir", "--target", target])
        .output()
        .map_err(Error::Io)?;
    let libdir = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let has_std = std::fs::read_dir(&libdir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|entry| entry.file_name().to_string_lossy().starts_with("libstd-"))
    });
    if output.status.success() && has_std {
        Ok(())
    } else {
        Err(Error::TargetMissing(target))
    }
}

/// Variables with this prefix tune the outer build's profiles (a
/// profiling run's `CARGO_PROFILE_RELEASE_DEBUG=true`, an `OPT_LEVEL`, `LTO`).
/// The nested build's release profile is the workspace's: passed on, one
/// such run once made every guest 4.3 MB instead of 126 KB (debug info),
/// and the load benchmarks hashed and mapped that.
const SCRUBBED_PREFIX: &str = "CARGO_PROFILE_";

/// Runs `cargo build --release --target <target> -p ...` in `workspace`.
pub(crate) fn build(
    workspace: &Path,
    target_dir: &Path,
    target: &str,
    packages: &[&str],
) -> Result<(), Error> {
    let output = command(workspace, target_dir, target, packages, std::env::vars_os())
        .output()
        .map_err(Error::Io)?;
    if output.status.success() {
        Ok(())
    } else {
        Err(Error::BuildFailed {
            packages: packages.join(", "),
            status: output.status.to_string(),
            stderr_tail: tail(&output.stderr),
        })
    }
}

/// The nested build's command, under an outer environment `outer`.
fn command(
    workspace: &Path,
    target_dir: &Path,
    target: &str,
    packages: &[&str],
    outer: impl IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> Command {
    let mut command = Command::new(cargo_program());
    command
        .current_dir(workspace)
        .args(["build", "--release", "--target", target, "--target-dir"])
        .arg(target_dir);
    for package in packages {
        command.args(["-p", package]);
    }
    for var in SCRUBBED_ENV {
        command.env_remove(var);
    }
    for (var, _) in outer {
        if var.to_string_lossy().starts_with(SCRUBBED_PREFIX) {
            command.env_remove(var);
        }
    }
    command
}

/// The last [`STDERR_TAIL_LINES`] lines of `bytes`, lossily decoded.
pub(crate) fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(STDERR_TAIL_LINES);
    lines[start..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_installed_target_is_found_and_a_missing_one_named() {
        assert!(target_installed(&rustc_program(), crate::GUEST_TARGET).is_ok());
        // `echo` prints no library directory: the target counts as missing.
        let missing = target_installed("echo".as_ref(), crate::LEAN_TARGET).unwrap_err();
        assert!(matches!(missing, Error::TargetMissing(crate::LEAN_TARGET)));
        assert!(
            missing
                .to_string()
                .contains("rustup target add wasm32-unknown-unknown")
        );
    }

    #[test]
    fn the_outer_builds_profile_settings_do_not_reach_the_guests() {
        let outer = [
            ("CARGO_PROFILE_RELEASE_DEBUG", "true"),
            ("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0"),
            ("PATH", "/usr/bin"),
        ]
        .map(|(k, v)| (k.into(), v.into()));
        let command = command(
            Path::new("."),
            Path::new("t"),
            crate::GUEST_TARGET,
            &["a"],
            outer,
        );
        let removed: Vec<_> = command
            .get_envs()
            .filter(|(_, value)| value.is_none())
            .map(|(var, _)| var.to_string_lossy().into_owned())
            .collect();
        assert!(removed.iter().any(|v| v == "CARGO_PROFILE_RELEASE_DEBUG"));
        assert!(
            removed
                .iter()
                .any(|v| v == "CARGO_PROFILE_RELEASE_OPT_LEVEL")
        );
        assert!(removed.iter().any(|v| v == "RUSTFLAGS"));
        assert!(!removed.iter().any(|v| v == "PATH"));
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let kept = tail(text.as_bytes());
        assert!(kept.starts_with("line 60\n"));
        assert!(kept.ends_with("line 99"));
        assert_eq!(tail(b"one"), "one");
    }
}
