//! The hidden `__compile-child` subcommand: this binary, re-executed by its
//! own verifier host to compile a component in a child process bounded in
//! memory and time (`verdict::CompileIn::Child`).

use std::ffi::OsString;
use std::process::ExitCode;
use verdict::{ChildCompiler, CompileIn};

/// The subcommand's name (not listed in `--help`).
pub const SUBCOMMAND: &str = "__compile-child";

/// Runs the child when this process was started as one.
pub fn run_if_child() -> Option<ExitCode> {
    (std::env::args_os().nth(1)? == SUBCOMMAND).then(verdict::compile_child_main)
}

/// Where the CLI's hosts compile: in a child (this binary re-executed) with
/// the default bounds, or in this process if this binary cannot be found.
pub fn compile_in() -> CompileIn {
    match std::env::current_exe() {
        Ok(exe) => CompileIn::Child(ChildCompiler {
            timeout: std::time::Duration::from_secs(15),
            ..ChildCompiler::new(exe, vec![OsString::from(SUBCOMMAND)])
        }),
        Err(_) => CompileIn::Process,
    }
}
