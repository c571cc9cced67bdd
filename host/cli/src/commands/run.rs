//! `verdict run`: one managed execution from a configuration file.

use super::HostArgs;
use crate::exit::Exit;
use crate::narrate::Narrator;
use crate::outcome;
use crate::session::Session;
use anyhow::Context;
use std::io::IsTerminal;
use std::path::PathBuf;
use verdict_agent::RunOptions;

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
    /// The task for the agent.
    prompt: String,
    #[command(flatten)]
    host: HostArgs,
}

/// Runs `verdict run`: assistant text on stdout, loop notices and the
/// summary on stderr (or one JSON object on stdout with `--json`).
pub fn run(args: RunArgs) -> anyhow::Result<Exit> {
    let file = crate::config::load(&args.config)?;
    let host = args.host.host()?;
    let session = Session::build(&file, args.tenant.as_deref(), &host)?;
    let runtime = super::runtime()?;
    let result = runtime.block_on(async {
        let options = RunOptions::default();
        // Ctrl-C cancels the run; the summary still prints (exit 6).
        let cancel = options.cancel.clone();
        let mut ctrl_c = Box::pin(tokio::signal::ctrl_c());
        // The first poll installs the handler, before any model call.
        if let std::task::Poll::Ready(Ok(())) = futures::poll!(&mut ctrl_c) {
            cancel.cancel();
        }
        tokio::spawn(async move {
            if ctrl_c.await.is_ok() {
                cancel.cancel();
            }
        });
        let events = session.agent.stream(args.prompt.clone(), options);
        let mut stdout = std::io::stdout();
        let mut stderr = std::io::stderr();
        let text: Option<&mut (dyn std::io::Write + Send)> =
            if args.json { None } else { Some(&mut stdout) };
        let mut narrator = Narrator::new(text, &mut stderr, "[verdict] ");
        narrator.spinner = std::io::stderr().is_terminal();
        if session.policy.is_none() {
            narrator.note("no loop_policy configured: the answer will not be verified");
        }
        narrator.drive(events).await
    });
    let totals = session
        .totals
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let (_, exit) = outcome::classify(&result);
    if args.json {
        let value = outcome::to_json(&result, session.tenant.as_deref(), &totals);
        println!(
            "{}",
            serde_json::to_string(&value).context("cannot render the result")?
        );
    } else {
        for line in outcome::summary(&result, &totals) {
            eprintln!("[verdict] {line}");
        }
    }
    Ok(exit)
}
