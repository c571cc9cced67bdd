//! `verdict console`: an interactive session over one configured agent.

use super::HostArgs;
use crate::console::Console;
use crate::console::command::{Command, HELP, parse};
use crate::exit::Exit;
use crate::session::Session;
use anyhow::Context;
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Arguments of `verdict console`.
#[derive(Debug, clap::Args)]
pub struct ConsoleArgs {
    /// The configuration file (TOML, or JSON when it ends in .json).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// The tenant whose verifiers decide completion (default: the only one).
    #[arg(long, value_name = "T")]
    tenant: Option<String>,
    #[command(flatten)]
    host: HostArgs,
}

/// Runs the console until `/quit` or end of input.
pub fn run(args: ConsoleArgs) -> anyhow::Result<Exit> {
    let file = crate::config::load(&args.config)?;
    let host = args.host.host()?;
    let session = Session::build(&file, args.tenant.as_deref(), &host)?;
    let runtime = super::runtime()?;
    let mut console = Console::new(file, host, session);
    let mut editor = DefaultEditor::new().context("cannot start the line editor")?;
    // A scripted session (input not a terminal) runs each task to its end
    // before reading the next line, so its transcript is deterministic.
    let scripted = !std::io::stdin().is_terminal();
    println!("verdict console: type a task, or /help. Ctrl-C cancels a running execution.");
    loop {
        let line = match editor.readline("verdict> ") {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                if console.cancel() {
                    println!("cancelling the running execution");
                }
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e).context("cannot read the console input"),
        };
        if !line.trim().is_empty() {
            let _ = editor.add_history_entry(line.as_str());
        }
        let reply = match parse(&line) {
            Err(usage) => usage,
            Ok(Command::Nothing) => String::new(),
            Ok(Command::Task(task)) => {
                let reply = console.start(runtime.handle(), task);
                if scripted {
                    console.wait_idle();
                }
                reply
            }
            Ok(Command::ContextLoop) => console.context_loop(),
            Ok(Command::PolicyShow) => console.policy_show(),
            Ok(Command::PolicySet(path)) => console.policy_set(&path),
            Ok(Command::PolicyOff) => console.policy_off(),
            Ok(Command::Save(path)) => console.save(&path),
            Ok(Command::Load(path)) => console.load(&path),
            Ok(Command::VerifierReload) => console.verifier_reload(),
            Ok(Command::Help) => HELP.to_owned(),
            Ok(Command::Quit) => break,
        };
        if !reply.is_empty() {
            println!("{reply}");
        }
    }
    if console.cancel() {
        println!("cancelled the running execution");
    }
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    Ok(Exit::Complete)
}
