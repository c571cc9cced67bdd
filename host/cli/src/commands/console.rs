//! `verdict console`: an interactive session over one configured agent.
//!
//! On a terminal, lines come from rustyline and a task runs in the
//! background (Ctrl-C cancels it). When the input is not a terminal, each
//! task runs to its end before the next line is read, so a piped session is
//! deterministic; there SIGINT cancels the running task and the session
//! goes on with the queued lines, and SIGTERM or SIGHUP cancel it and end
//! the session (exit 6). A line that is not UTF-8 is refused alone.

use super::HostArgs;
use crate::console::Console;
use crate::console::command::{Command, HELP, parse};
use crate::console::input::{self, Input, MAX_LINE_BYTES};
use crate::exit::Exit;
use crate::session::Session;
use crate::signals::{Kind, Signals};
use crate::stdout::OutputError;
use anyhow::Context;
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

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

const BANNER: &str = "verdict console: type a task, or /help. Ctrl-C cancels a running execution.";
const NOT_UTF8: &str = "refused: the line is not valid UTF-8 text (nothing ran)";
/// How often a waiting piped session looks at the signal flags.
const POLL: Duration = Duration::from_millis(10);

/// Runs the console until `/quit` or end of input.
pub fn run(args: ConsoleArgs) -> anyhow::Result<Exit> {
    let file = crate::config::load(&args.config)?;
    let host = args.host.long_lived_host()?;
    let runtime = super::runtime()?;
    let session = Session::build(&file, args.tenant.as_deref(), &host, runtime.handle())?;
    let mut console = Console::new(file, host, session);
    let result = if std::io::stdin().is_terminal() {
        terminal(&mut console, &runtime)
    } else {
        piped(&mut console, &runtime)
    };
    let ended = match result {
        Ok(exit) => {
            if console.cancel() {
                crate::outln!("cancelled the running execution")?;
            }
            Ok(exit)
        }
        Err(error) => {
            console.cancel();
            Err(error)
        }
    };
    runtime.shutdown_timeout(Duration::from_secs(2));
    ended
}

/// What a line did.
enum Step {
    /// A command ran (or nothing did).
    Done,
    /// A task started.
    Started,
    /// `/quit`.
    Quit,
}

/// Runs one line and prints its reply.
fn run_line(
    console: &mut Console,
    runtime: &tokio::runtime::Runtime,
    line: &str,
) -> Result<Step, OutputError> {
    let (reply, step) = match parse(line) {
        Err(usage) => (usage, Step::Done),
        Ok(Command::Nothing) => (String::new(), Step::Done),
        Ok(Command::Task(task)) => (console.start(runtime.handle(), task), Step::Started),
        Ok(Command::ContextLoop) => (console.context_loop(), Step::Done),
        Ok(Command::PolicyShow) => (console.policy_show(), Step::Done),
        Ok(Command::PolicySet(path)) => (console.policy_set(&path), Step::Done),
        Ok(Command::PolicyOff) => (console.policy_off(), Step::Done),
        Ok(Command::Save(path)) => (console.save(&path), Step::Done),
        Ok(Command::Load(path)) => (console.load(&path), Step::Done),
        Ok(Command::VerifierReload) => (console.verifier_reload(), Step::Done),
        Ok(Command::Tools) => (console.tools(), Step::Done),
        Ok(Command::Help) => (HELP.to_owned(), Step::Done),
        Ok(Command::Quit) => (String::new(), Step::Quit),
    };
    if !reply.is_empty() {
        crate::outln!("{reply}")?;
    }
    output_ok(console)?;
    Ok(step)
}

/// Fails once an execution's output could not be written.
fn output_ok(console: &Console) -> Result<(), OutputError> {
    match console.output_error() {
        Some(error) => Err(error.into()),
        None => Ok(()),
    }
}

/// A terminal session: rustyline, tasks in the background.
fn terminal(console: &mut Console, runtime: &tokio::runtime::Runtime) -> anyhow::Result<Exit> {
    let mut editor = DefaultEditor::new().context("cannot start the line editor")?;
    crate::outln!("{BANNER}")?;
    loop {
        let line = match editor.readline("verdict> ") {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                if console.cancel() {
                    crate::outln!("cancelling the running execution")?;
                }
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(ReadlineError::Io(e)) if e.kind() == std::io::ErrorKind::InvalidData => {
                crate::outln!("{NOT_UTF8}")?;
                continue;
            }
            Err(e) => return Err(e).context("cannot read the console input"),
        };
        if !line.trim().is_empty() {
            let _ = editor.add_history_entry(line.as_str());
        }
        if let Step::Quit = run_line(console, runtime, &line)? {
            break;
        }
    }
    output_ok(console)?;
    Ok(Exit::Complete)
}

/// Signals seen by a piped session, set by a task on the runtime.
#[derive(Default, Clone)]
struct Flags {
    interrupted: Arc<AtomicBool>,
    terminated: Arc<AtomicBool>,
}

/// A piped session: one task at a time, each to its end.
fn piped(console: &mut Console, runtime: &tokio::runtime::Runtime) -> anyhow::Result<Exit> {
    let flags = Flags::default();
    let mut signals = {
        let _enter = runtime.enter();
        Signals::install().context("cannot install the signal handlers")?
    };
    let seen = flags.clone();
    runtime.spawn(async move {
        loop {
            let flag = match signals.recv().await {
                Kind::Interrupt => &seen.interrupted,
                Kind::Terminate => &seen.terminated,
            };
            flag.store(true, Ordering::SeqCst);
        }
    });
    let lines = input::spawn_reader(std::io::BufReader::new(std::io::stdin()));
    crate::outln!("{BANNER}")?;
    while let Some(input) = next_input(&lines, &flags) {
        match input {
            Input::Line(line) => {
                // A Ctrl-C while idle (as at a terminal's prompt) does not
                // reach the next task.
                flags.interrupted.store(false, Ordering::SeqCst);
                match run_line(console, runtime, &line)? {
                    Step::Quit => break,
                    Step::Started => wait_task(console, &flags)?,
                    Step::Done => {}
                }
            }
            Input::NotUtf8 => crate::outln!("{NOT_UTF8}")?,
            Input::TooLong => crate::outln!(
                "refused: the line is longer than {MAX_LINE_BYTES} bytes (nothing ran)"
            )?,
            Input::Eof => break,
            Input::Failed(e) => return Err(e).context("cannot read the console input"),
        }
        if flags.terminated.load(Ordering::SeqCst) {
            break;
        }
    }
    output_ok(console)?;
    if flags.terminated.load(Ordering::SeqCst) {
        crate::outln!("session ended by a signal")?;
        return Ok(Exit::RunFailed);
    }
    Ok(Exit::Complete)
}

/// The next input, or `None` once a terminating signal came.
fn next_input(lines: &Receiver<Input>, flags: &Flags) -> Option<Input> {
    loop {
        if flags.terminated.load(Ordering::SeqCst) {
            return None;
        }
        match lines.recv_timeout(POLL) {
            Ok(input) => return Some(input),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return Some(Input::Eof),
        }
    }
}

/// Waits for the running task to end (its summary printed); a signal
/// cancels it.
fn wait_task(console: &Console, flags: &Flags) -> Result<(), OutputError> {
    let mut cancelled = false;
    while console.is_busy() {
        let interrupted = flags.interrupted.swap(false, Ordering::SeqCst);
        if (interrupted || flags.terminated.load(Ordering::SeqCst))
            && !cancelled
            && console.cancel()
        {
            cancelled = true;
            crate::outln!("cancelling the running execution")?;
        }
        std::thread::sleep(POLL);
    }
    Ok(())
}
