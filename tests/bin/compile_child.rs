//! The compile child the integration tests start (a verdict host's
//! `ChildCompiler::program`): what an embedder's hidden subcommand does.

fn main() -> std::process::ExitCode {
    verdict_sandbox::compile_child_main()
}
