//! `verdict fake-provider`: serve a scripted model on loopback.

use crate::exit::Exit;
use crate::signals::Signals;
use anyhow::Context;
use std::path::PathBuf;
use verdict::Protocol;
use verdict::fake::{FakeProvider, Script};

/// Arguments of `verdict fake-provider`.
#[derive(Debug, clap::Args)]
pub struct FakeProviderArgs {
    /// The script: conversations of scripted turns and faults (JSON; see
    /// host/providers/README.md and examples/scripts/).
    #[arg(long, value_name = "FILE")]
    script: PathBuf,
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
}

/// Serves until SIGINT, SIGTERM or SIGHUP (then exits 0); prints one
/// `<protocol> <base-url>` line per protocol first.
pub fn run(args: FakeProviderArgs) -> anyhow::Result<Exit> {
    let text = crate::files::read_text(&args.script, crate::files::Bound::SCRIPT)?;
    let script = Script::from_json(&text)
        .with_context(|| format!("{} is not a valid script", args.script.display()))?;
    let runtime = super::runtime()?;
    runtime.block_on(async {
        let mut signals = Signals::install().context("cannot install the signal handlers")?;
        let fake = FakeProvider::start_on(([127, 0, 0, 1], args.port).into(), script).await?;
        for protocol in Protocol::ALL {
            crate::outln!("{protocol:?} {}", fake.base_url(protocol))?;
        }
        tokio::select! {
            () = fake.wait() => {}
            _ = signals.recv() => {}
        }
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(Exit::Complete)
}
