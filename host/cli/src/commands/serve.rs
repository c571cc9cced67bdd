//! `verdict serve`: the verifier service over HTTP (see `verdict-server`),
//! and `verdict serve hash-token` for the configuration's token hashes.

use super::HostArgs;
use crate::exit::Exit;
use anyhow::Context;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use verdict::HostConfig;
use verdict_server::{Reloader, Server};

/// Arguments of `verdict serve`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ServeArgs {
    #[command(subcommand)]
    action: Option<ServeAction>,
    /// The configuration file: `[server]` and `[tenants.*]`.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Listen here instead of `[server] listen` (port 0: any free port).
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// The access log's format on stderr.
    #[arg(long, value_enum, default_value = "text")]
    log_format: LogFormat,
    #[command(flatten)]
    host: HostArgs,
}

#[derive(Debug, clap::Subcommand)]
enum ServeAction {
    /// Print the hash of a bearer token for `token_hash` or
    /// `admin_token_hash` (its last line).
    HashToken {
        /// The token (at least 128 random bits, e.g. `openssl rand -hex 32`).
        token: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

/// Runs `verdict serve`.
pub fn run(args: ServeArgs) -> anyhow::Result<Exit> {
    if let Some(ServeAction::HashToken { token }) = args.action {
        if token.len() < 32 {
            crate::stdout::note_line(format_args!(
                "warning: a token of {} characters is short: the hash is SHA-256, safe for \
                 high-entropy tokens only (use at least 32 random hex digits)",
                token.len()
            ));
        }
        crate::outln!("{}", verdict_server::hash_token(&token))?;
        return Ok(Exit::Complete);
    }
    let Some(config) = args.config.clone() else {
        anyhow::bail!("give the configuration with --config FILE");
    };
    let settings = crate::config::load_serve(&config, args.listen)?;
    let listen = args.listen;
    let reloader: Reloader =
        Arc::new(move || crate::config::load_serve(&config, listen).map_err(|e| format!("{e}")));
    let host = verdict::VerifierHost::new(HostConfig {
        cache_dir: args.host.cache_dir(),
        // A long-lived service: pooled instances pay off, as many as checks
        // may run at once.
        pooling: true,
        pool_instances: u32::try_from(settings.server.max_concurrent_checks)
            .unwrap_or(u32::MAX)
            .max(HostConfig::default().pool_instances),
        pool_keep_resident_bytes: settings.server.keep_resident_bytes,
        compile_in: super::compile_child::compile_in(),
        ..HostConfig::default()
    })
    .context("cannot start the verifier host")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let json = args.log_format == LogFormat::Json;
    runtime.block_on(async move {
        let server = Server::bind(settings, host, Some(reloader), json).await?;
        let addr = server.local_addr()?;
        let handle = server.handle();
        signals(handle.clone(), json)?;
        crate::stdout::note_line(format_args!("verdict serve: listening on {addr}"));
        let drained = server.run().await;
        if !drained {
            crate::stdout::note_line(format_args!(
                "verdict serve: the drain timeout passed with requests still running"
            ));
        }
        crate::stdout::note_line(format_args!("verdict serve: stopped"));
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(Exit::Complete)
}

/// SIGTERM and SIGINT drain and stop; SIGHUP reloads the configuration.
fn signals(handle: verdict_server::ServerHandle, json: bool) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("cannot handle SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("cannot handle SIGINT")?;
    let mut hup = signal(SignalKind::hangup()).context("cannot handle SIGHUP")?;
    tokio::spawn(async move {
        // SIGTERM (a supervisor, a load balancer's drain) keeps accepting
        // for the grace period; SIGINT (a terminal) does not wait.
        let grace = loop {
            tokio::select! {
                _ = term.recv() => break None,
                _ = int.recv() => break Some(std::time::Duration::ZERO),
                _ = hup.recv() => {
                    let line = match handle.reload().await {
                        Ok(n) => reload_line(json, true, &format!("{n} tenants")),
                        Err(e) => reload_line(json, false, &e),
                    };
                    crate::stdout::note_line(format_args!("{line}"));
                }
            }
        };
        match grace {
            None => handle.shutdown(),
            Some(grace) => handle.shutdown_after(grace),
        }
        crate::stdout::note_line(format_args!("verdict serve: draining"));
    });
    Ok(())
}

fn reload_line(json: bool, ok: bool, detail: &str) -> String {
    if json {
        serde_json::json!({ "msg": "reload", "ok": ok, "detail": detail }).to_string()
    } else if ok {
        format!("verdict serve: configuration reloaded ({detail})")
    } else {
        format!("verdict serve: reload refused, the running configuration stays: {detail}")
    }
}
