//! `verdict run`: one managed execution from a configuration file.

use super::HostArgs;
use crate::exit::Exit;
use crate::narrate::Narrator;
use crate::run_report;
use crate::session::Session;
use crate::signals::Signals;
use crate::stdout::{FirstError, OutputError, Watched, note_line};
use anyhow::Context;
use std::io::IsTerminal;
use std::path::PathBuf;
use verdict::RunOptions;

/// Arguments of `verdict run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The configuration file (TOML, or JSON when it ends in .json).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// The tenant whose verifiers decide completion (default: the only one).
    #[arg(long, value_name = "T")]
    tenant: Option<String>,
    /// Print one JSON result on stdout instead of the streamed text.
    #[arg(long)]
    json: bool,
    /// Record every check into this directory (see `verdict check
    /// --record`); the result's diagnostics list the record ids.
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
    /// The task for the agent.
    prompt: String,
    #[command(flatten)]
    host: HostArgs,
}

/// Runs `verdict run`: assistant text on stdout, loop notices and the
/// summary on stderr (or one JSON object on stdout with `--json`).
/// SIGINT, SIGTERM and SIGHUP cancel the run; a failed write to stdout
/// cancels it too and is an [`OutputError`].
pub fn run(args: RunArgs) -> anyhow::Result<Exit> {
    if args.prompt.trim().is_empty() {
        anyhow::bail!("the prompt is empty: give the task as the last argument");
    }
    let file = crate::config::load(&args.config)?;
    let host = args.host.host()?;
    let recorder = match &args.record {
        Some(dir) => Some(std::sync::Arc::new(
            verdict::records::Recorder::open(verdict::records::RecordDir::new(dir))
                .with_context(|| format!("--record {}", dir.display()))?,
        )),
        None => None,
    };
    let runtime = super::runtime()?;
    let session = Session::build_recording(
        &file,
        args.tenant.as_deref(),
        &host,
        recorder.as_ref(),
        runtime.handle(),
    )?;
    let stdout_failed = FirstError::default();
    let result = runtime.block_on(async {
        let options = RunOptions::default();
        // Installed before any model call: a signal from here on cancels
        // the run and the summary still prints (exit 6).
        Signals::install()
            .context("cannot install the signal handlers")?
            .cancel_on_any(options.cancel.clone());
        let cancel = options.cancel.clone();
        let events = session.agent.stream(args.prompt.clone(), options);
        // Nobody reads the text any more: stop the run.
        let mut stdout = Watched::new(std::io::stdout(), stdout_failed.clone(), move || {
            cancel.cancel()
        });
        let mut stderr = std::io::stderr();
        let text: Option<&mut (dyn std::io::Write + Send)> =
            if args.json { None } else { Some(&mut stdout) };
        let mut narrator = Narrator::new(text, &mut stderr, "[verdict] ");
        narrator.spinner = std::io::stderr().is_terminal();
        if session.policy.is_none() {
            narrator.note("no loop_policy configured: the answer will not be verified");
        }
        Ok::<_, anyhow::Error>(narrator.drive(events).await)
    })?;
    let totals = session
        .totals
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    if let Some(recorder) = &recorder {
        // Every record on disk before the result names them.
        if let Err(e) = recorder.flush() {
            note_line(format_args!("[verdict] warning: check records: {e}"));
        }
    }
    let (kind, exit) = run_report::classify(&result);
    let lost = || format!("outcome: {}, exit {}", run_report::name(kind), exit as u8);
    if let Some(error) = stdout_failed.take() {
        for line in run_report::summary(&result, &totals) {
            note_line(format_args!("[verdict] {line}"));
        }
        return Err(OutputError::from(error).into());
    }
    if args.json {
        let mut value = run_report::to_json(&result, session.tenant.as_deref(), &totals);
        // The verifiers from registries: what their tags resolved to.
        let oci = crate::oci::recorded();
        if !oci.is_empty() {
            value["oci"] = oci.into();
        }
        let text = serde_json::to_string(&value).context("cannot render the result")?;
        crate::outln!("{text}").map_err(|e| e.losing(lost()))?;
    } else {
        for line in run_report::summary(&result, &totals) {
            note_line(format_args!("[verdict] {line}"));
        }
    }
    Ok(exit)
}
