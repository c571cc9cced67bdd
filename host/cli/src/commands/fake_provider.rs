//! `verdict fake-provider`: serve a scripted model on loopback.

use crate::exit::Exit;
use anyhow::Context;
use std::io::Write;
use std::path::PathBuf;
use verdict_providers::Protocol;
use verdict_providers::fake::{FakeProvider, Script};

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

/// Serves until the process is interrupted; prints one
/// `<protocol> <base-url>` line per protocol first.
pub fn run(args: FakeProviderArgs) -> anyhow::Result<Exit> {
    let script = Script::from_file(&args.script)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let fake = FakeProvider::start_on(([127, 0, 0, 1], args.port).into(), script).await?;
        let mut out = std::io::stdout().lock();
        for protocol in Protocol::ALL {
            writeln!(out, "{protocol:?} {}", fake.base_url(protocol))?;
        }
        out.flush()?;
        drop(out);
        fake.wait().await;
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(Exit::Complete)
}
