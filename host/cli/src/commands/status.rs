//! `verdict status`: an execution's record from its conversation object's
//! state — phase, stop reason, recovery used, verdict.

use crate::exit::Exit;
use crate::stdout::note_line;
use anyhow::Context;
use std::path::PathBuf;
use verdict::durable::{ExecutionRef, RestateClient};

/// Arguments of `verdict status`.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// The configuration file whose `[restate]` section says where Restate
    /// is (default: the ingress at 127.0.0.1:8080).
    #[arg(long, value_name = "FILE", conflicts_with = "ingress")]
    config: Option<PathBuf>,
    /// Restate's ingress base URL.
    #[arg(long, value_name = "URL")]
    ingress: Option<String>,
    /// Print the record as one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// The execution, as `submit` printed it (CONVERSATION/EXECUTION).
    id: String,
}

/// Runs `verdict status`: the summary on stdout (or `--json`); exit 2
/// when there is no such execution.
pub fn run(args: StatusArgs) -> anyhow::Result<Exit> {
    let execution: ExecutionRef = args.id.parse()?;
    let (ingress, admin) = match (&args.config, &args.ingress) {
        (Some(path), _) => {
            let settings = crate::config::load_restate(path, None)?;
            (settings.ingress, settings.admin)
        }
        (None, Some(url)) => (url.clone(), String::new()),
        (None, None) => (crate::config::DEFAULT_INGRESS.to_owned(), String::new()),
    };
    let client = RestateClient::new(&ingress, &admin)?;
    let runtime = super::runtime()?;
    let record = runtime
        .block_on(client.status(&execution))
        .context("cannot read the execution's record")?;
    let Some(record) = record else {
        note_line(format_args!(
            "error: no execution {execution} (not started yet, or unknown)"
        ));
        return Ok(Exit::InvalidInput);
    };
    let lost = || format!("status of {execution}");
    if args.json {
        let text = serde_json::to_string(&record).context("cannot render the record")?;
        crate::outln!("{text}").map_err(|e| e.losing(lost()))?;
    } else {
        for line in super::submit::summary(&record) {
            crate::outln!("{line}").map_err(|e| e.losing(lost()))?;
        }
    }
    Ok(Exit::Complete)
}
