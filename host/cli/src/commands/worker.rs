//! `verdict worker`: serves the configuration's agent as durable
//! executions on Restate (the endpoint Restate invokes) to requests signed
//! by Restate's request identity, and registers itself with Restate's
//! admin API, retrying with backoff until it can (`GET /readyz` says
//! whether it is registered yet).

use super::HostArgs;
use crate::config::RestateSettings;
use crate::exit::Exit;
use crate::session::Parts;
use crate::stdout::note_line;
use anyhow::Context;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use verdict::durable::{Backoff, Blueprint, RestateClient, Tenants, Worker, register_until_done};

/// Arguments of `verdict worker`.
#[derive(Debug, clap::Args)]
pub struct WorkerArgs {
    /// The configuration file (TOML, or JSON when it ends in .json).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// Where to listen (default: `[restate] listen`, else 127.0.0.1:9080).
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// Serve only this tenant (default: every configured tenant, each with
    /// its own verifiers; `submit --tenant` picks one).
    #[arg(long, value_name = "T")]
    tenant: Option<String>,
    /// Do not register with the admin API (already registered at this URL;
    /// `/readyz` then answers ready as soon as the worker serves).
    #[arg(long)]
    no_register: bool,
    #[command(flatten)]
    host: HostArgs,
}

/// The blueprint of the configuration's agent.
pub(crate) fn blueprint(file: &crate::config::ConfigFile, parts: Parts) -> Blueprint {
    let agent = &file.config.agent;
    let mut blueprint = Blueprint::new(Arc::new(parts.connector), agent.model.clone());
    if let Some(instructions) = &agent.instructions {
        blueprint = blueprint.instructions(instructions.clone());
    }
    if let Some(n) = agent.max_iterations {
        blueprint = blueprint.max_iterations(n);
    }
    if let Some(n) = agent.max_tokens {
        blueprint = blueprint.max_tokens(n);
    }
    for tool in parts.tools {
        blueprint = blueprint.tool(tool);
    }
    // A durable execution's tools are those its servers listed at the
    // worker's start: a replay must ask the model with the tools the
    // journaled request had, so a list change is not followed here.
    for tool in parts.mcp.iter().flat_map(|set| set.tools()) {
        blueprint = blueprint.tool(tool);
    }
    if let Some(policy) = parts.policy {
        blueprint = blueprint.loop_policy(policy, parts.checkers);
    }
    blueprint
}

/// The blueprints to serve: `only` (a configured tenant), else every
/// configured tenant, else one agent without verifiers' tenant.
fn tenants(
    file: &crate::config::ConfigFile,
    only: Option<&str>,
    host: &verdict::VerifierHost,
    runtime: &tokio::runtime::Handle,
) -> anyhow::Result<Tenants> {
    let names: Vec<String> = match only {
        Some(name) => vec![name.to_owned()],
        None => file.config.tenants.keys().cloned().collect(),
    };
    if names.is_empty() {
        let parts = Parts::load(file, None, host, runtime)?;
        return Ok(Tenants::from(blueprint(file, parts)));
    }
    let mut tenants = Tenants::new();
    for name in names {
        let parts = Parts::load(file, Some(&name), host, runtime)?;
        tenants = tenants.tenant(name, blueprint(file, parts));
    }
    Ok(tenants)
}

/// Resolves when SIGINT or SIGTERM arrives.
async fn shutdown() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let terminated = async {
        match term.as_mut() {
            Some(term) => {
                term.recv().await;
            }
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminated => {}
    }
}

/// Runs `verdict worker` until SIGINT or SIGTERM (then drains).
pub fn run(args: WorkerArgs) -> anyhow::Result<Exit> {
    let file = crate::config::load(&args.config)?;
    let RestateSettings {
        ingress,
        admin,
        listen,
        advertise,
        identity,
        tls,
    } = crate::config::load_restate(&args.config, args.listen)?;
    // Before anything is loaded: who may invoke this worker.
    identity.check(listen)?;
    let host = args.host.long_lived_host()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // Each tenant's MCP servers are its own processes, tasks of this runtime.
    let tenants = tenants(&file, args.tenant.as_deref(), &host, runtime.handle())?;
    let mut worker = Worker::new(tenants).identity(identity);
    if let Some((cert, key)) = &tls {
        worker = worker.tls(cert, key)?;
    }
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("cannot listen on {listen}"))?;
        let bound = listener
            .local_addr()
            .context("cannot read the bound address")?;
        let scheme = if worker.is_tls() { "https" } else { "http" };
        note_line(format_args!("[verdict] worker listening on {bound}"));
        let readiness = worker.readiness();
        let server = tokio::spawn(worker.serve(listener, shutdown()));
        let registration = if args.no_register {
            readiness.ready("serving; registration left to the operator (--no-register)");
            None
        } else {
            let url = advertise.unwrap_or_else(|| format!("{scheme}://{bound}"));
            let client = RestateClient::new(&ingress, &admin)?;
            Some(tokio::spawn(async move {
                register(&client, &url, &admin, &readiness).await;
            }))
        };
        let served = server.await.context("the worker stopped");
        if let Some(registration) = registration {
            registration.abort();
        }
        served??;
        Ok(Exit::Complete)
    })
}

/// Registers the worker until the admin API takes it, saying so in the
/// log: the first failure, each new reason, and every tenth attempt.
async fn register(
    client: &RestateClient,
    url: &str,
    admin: &str,
    readiness: &verdict::durable::Readiness,
) {
    let mut last = String::new();
    register_until_done(client, url, readiness, Backoff::default(), |attempt, error, delay| {
        let reason = error.to_string();
        if attempt == 1 || reason != last || attempt % 10 == 0 {
            note_line(format_args!(
                "[verdict] cannot register the worker with Restate's admin API (attempt {attempt}): \
                 {reason}; serving meanwhile, next attempt in {:.1} s",
                delay.as_secs_f64()
            ));
        }
        last = reason;
    })
    .await;
    note_line(format_args!("[verdict] registered {url} with {admin}"));
}
