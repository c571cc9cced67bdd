//! The `verdict` command-line interface.

mod builtin_tools;
mod builtin_verifiers;
mod claude_code;
mod commands;
mod config;
mod console;
mod crate_name;
mod dependency;
mod exit;
mod files;
mod mcp_tools;
mod narrate;
mod oci;
mod roots;
mod run_report;
mod session;
mod signals;
mod stdout;
mod templates;
mod tool_rows;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// verdict: an agent loop whose completion is decided by sandboxed verifiers.
#[derive(Debug, Parser)]
#[command(name = "verdict", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the feedback-agent story offline: a scripted model on loopback,
    /// the embedded artifact-ready verifier, a temporary workspace.
    Demo(commands::demo::DemoArgs),
    /// Run one managed execution from a configuration file.
    Run(commands::run::RunArgs),
    /// An interactive session: tasks, /context loop, /policy, /save,
    /// /load, /verifier reload.
    Console(commands::console::ConsoleArgs),
    /// Run a verifier's completion check (or progress key) on a packet.
    Check(commands::check::CheckArgs),
    /// Describe a .wasm file and say whether this host accepts it.
    Inspect(commands::inspect::InspectArgs),
    /// Make a verifier built lean (a core module for wasm32-unknown-unknown,
    /// with the verdict-guest SDK) a component.
    Componentize(commands::componentize::ComponentizeArgs),
    /// Serve a scripted fake model provider on 127.0.0.1 (all four wire
    /// protocols, JSON and SSE) until interrupted.
    FakeProvider(commands::fake_provider::FakeProviderArgs),
    /// Create a verifier project (Rust, Python or JavaScript) in an empty
    /// directory, with a native test, ready to build into a component.
    NewVerifier(commands::new_verifier::NewVerifierArgs),
    /// Push a verifier component to an OCI registry
    /// (oci://HOST[:PORT]/REPO:TAG); prints the pushed digest last.
    Push(commands::push::PushArgs),
    /// Pull a verifier component from an OCI registry into a file,
    /// verified against its digests.
    Pull(commands::pull::PullArgs),
    /// Re-run recorded checks in a fresh sandbox: exit 0 when every answer
    /// is identical, 1 with the differences (`--verifier`: against another
    /// build).
    Replay(commands::replay::ReplayArgs),
    /// Verify a record directory's hash-chained audit log.
    Audit(commands::audit::AuditArgs),
    /// Serve tenants' verifiers over HTTP (`serve --config FILE`), or print
    /// a token's hash (`serve hash-token TOKEN`).
    Serve(commands::serve::ServeArgs),
    /// Serve the configuration's agent as durable executions on Restate
    /// (one virtual object per conversation), registered with its admin API.
    Worker(commands::worker::WorkerArgs),
    /// Start a durable execution through Restate's ingress; prints its id
    /// (`--wait`: waits, printing notices and the summary).
    Submit(commands::submit::SubmitArgs),
    /// Show a durable execution's phase, stop reason, recovery and verdict.
    Status(commands::status::StatusArgs),
    /// MCP servers' tools: `mcp list CONFIG` prints each with its effect.
    Mcp(commands::mcp::McpArgs),
    /// Judge agents run elsewhere: `hook claude-code` is Claude Code's
    /// `Stop` hook, blocking the stop until the tenant's verifier confirms.
    Hook(commands::hook::HookArgs),
}

fn main() -> ExitCode {
    if let Some(code) = commands::compile_child::run_if_child() {
        return code;
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(usage) => return usage_exit(&usage),
    };
    let result = match cli.command {
        Command::Demo(args) => commands::demo::run(args),
        Command::Run(args) => commands::run::run(args),
        Command::Console(args) => commands::console::run(args),
        Command::Check(args) => commands::check::run(args),
        Command::Inspect(args) => commands::inspect::run(args),
        Command::Componentize(args) => commands::componentize::run(args),
        Command::FakeProvider(args) => commands::fake_provider::run(args),
        Command::NewVerifier(args) => commands::new_verifier::run(args),
        Command::Push(args) => commands::push::run(args),
        Command::Pull(args) => commands::pull::run(args),
        Command::Serve(args) => commands::serve::run(args),
        Command::Replay(args) => commands::replay::run(args),
        Command::Audit(args) => commands::audit::run(args),
        Command::Worker(args) => commands::worker::run(args),
        Command::Submit(args) => commands::submit::run(args),
        Command::Status(args) => commands::status::run(args),
        Command::Mcp(args) => commands::mcp::run(args),
        Command::Hook(args) => commands::hook::run(args),
    };
    match result {
        Ok(code) => code.into(),
        Err(err) => {
            stdout::note_line(format_args!("error: {err:#}"));
            if err.downcast_ref::<stdout::OutputError>().is_some() {
                exit::Exit::OutputFailed.into()
            } else {
                exit::Exit::InvalidInput.into()
            }
        }
    }
}

/// `--help` and `--version` go to stdout (a failed write is exit 7, like
/// every other output); a usage error goes to stderr with exit 2.
fn usage_exit(usage: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let shown = matches!(
        usage.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    );
    if shown && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        // clap's own output, in colour.
        let _ = usage.print();
        return ExitCode::SUCCESS;
    }
    if shown {
        let text = usage.render().to_string();
        return match outln!("{}", text.trim_end()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                stdout::note_line(format_args!("error: {err}"));
                exit::Exit::OutputFailed.into()
            }
        };
    }
    let _ = usage.print();
    exit::Exit::InvalidInput.into()
}
