//! Builds the agent of one configuration: its connector, built-in and MCP
//! tools, loop policy and the chosen tenant's verifiers.

use crate::builtin_tools::Workspace;
use crate::config::locate::Seg;
use crate::config::{
    ConfigError, ConfigFile, RemoteSection, TenantsConfig, VerifierRef, VerifierSource,
};
use std::sync::{Arc, Mutex};
use verdict::LoopPolicy;
use verdict::RemoteChecker;
use verdict::mcp::McpToolset;
use verdict::records::{Recorder, RecordingChecker};
use verdict::{Agent, CheckerTotals, Checkers, ConnectorRegistry};
use verdict::{Connector, ConnectorConfig, Credential};
use verdict::{DirStore, LoadError, LoadedVerifier, Tenant, VerifierHost, WasmChecker};

/// Checker metrics shared by a session's wasm checkers: each
/// [`verdict::WasmChecker`] adds its calls to them (cloned into the
/// checkers), and the run summary reads them.
pub type Totals = Arc<Mutex<CheckerTotals>>;

/// Why a session could not be set up; nothing ran.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The configuration names something that cannot be used.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `--tenant` does not name a configured tenant, or is needed.
    #[error("{0}")]
    Tenant(String),
}

/// An agent ready to run, with what the summary reports.
pub struct Session {
    /// The agent.
    pub agent: Agent,
    /// The tenant whose verifiers check completion, if any.
    pub tenant: Option<String>,
    /// Whether the run is managed by a loop policy.
    pub policy: Option<LoopPolicy>,
    /// The tenant's checkers (the agent's default checkers too).
    pub checkers: Checkers,
    /// Checker metrics of the runs.
    pub totals: Totals,
    /// The built-in tools' rows (the MCP servers' are listed when asked:
    /// their lists may change between turns).
    builtin: Vec<crate::tool_rows::ToolRow>,
    /// The MCP servers' tools, refreshed by the agent before each model call.
    mcp: Option<Arc<McpToolset>>,
}

impl Session {
    /// Every tool of the agent now, with its effect and where it came from.
    pub fn tools(&self) -> Vec<crate::tool_rows::ToolRow> {
        let mut rows = self.builtin.clone();
        if let Some(set) = &self.mcp {
            rows.extend(set.listing().iter().map(crate::tool_rows::mcp_row));
        }
        rows
    }
}

fn key(k: &str) -> Seg {
    Seg::Key(k.to_owned())
}

/// Picks the tenant: the named one, else the only one, else none.
fn pick_tenant(file: &ConfigFile, wanted: Option<&str>) -> Result<Option<String>, SessionError> {
    let tenants = &file.config.tenants;
    match wanted {
        Some(name) if tenants.contains_key(name) => Ok(Some(name.to_owned())),
        Some(name) => Err(SessionError::Tenant(format!(
            "{}: no tenant named {name:?} (configured: {})",
            file.path.display(),
            if tenants.is_empty() {
                "none".to_owned()
            } else {
                tenants.keys().cloned().collect::<Vec<_>>().join(", ")
            }
        ))),
        None if tenants.len() <= 1 => Ok(tenants.keys().next().cloned()),
        None => Err(SessionError::Tenant(format!(
            "{} configures {} tenants: choose one with --tenant",
            file.path.display(),
            tenants.len()
        ))),
    }
}

fn load_verifier<C: TenantsConfig>(
    file: &ConfigFile<C>,
    host: &VerifierHost,
    tenant: &str,
    field: &str,
    spec: &str,
    recorder: Option<&Recorder>,
) -> Result<LoadedVerifier, ConfigError> {
    let at = [key("tenants"), key(tenant), key(field)];
    let rejected = |e: LoadError| file.error(&at, format!("{spec} is rejected: {e}"));
    // A recorded session keeps each component in the record store, so its
    // records replay without the file.
    let keep = |bytes: &[u8]| match recorder {
        Some(recorder) => recorder
            .keep_component(bytes.into())
            .map_err(|e| file.error(&at, e.to_string())),
        None => Ok(()),
    };
    let verifier = match file.verifier_source(spec) {
        VerifierSource::Builtin(name) => {
            let bytes = crate::builtin_verifiers::get(&name)
                .ok_or_else(|| file.error(&at, format!("no built-in verifier `{name}`")))?;
            keep(bytes)?;
            host.load_bytes(bytes).map_err(rejected)?.0
        }
        // A file loaded before and unchanged is neither read nor hashed
        // again (the compile cache's index).
        VerifierSource::File(path) => {
            let verifier = host.load_file(&path).map_err(|e| match e {
                LoadError::Io(why) => {
                    file.error(&at, format!("cannot read {}: {why}", path.display()))
                }
                other => rejected(other),
            })?;
            if recorder.is_some() {
                let bytes = crate::files::read::read(&path, crate::files::Bound::component())
                    .map_err(|e| file.error(&at, e.to_string()))?;
                keep(&bytes)?;
            }
            verifier
        }
        // Resolved to a digest now, pulled unless cached, verified.
        VerifierSource::Oci(text) => {
            let reference = verdict::registry::OciRef::parse(&text)
                .map_err(|e| file.error(&at, e.to_string()))?;
            let allowed = file
                .config
                .tenants()
                .get(tenant)
                .map(|t| t.allowed_digests.as_slice())
                .unwrap_or_default();
            let registries = crate::oci::registries(file);
            let loaded = crate::oci::load(host, &registries, &reference, allowed)
                .map_err(|e| file.error(&at, e.to_string()))?;
            crate::stdout::note_line(format_args!(
                "note: tenant {tenant} {field}: {}",
                loaded.describe(&reference)
            ));
            crate::oci::record(tenant, field, &loaded, &reference);
            keep(&loaded.fetched.bytes)?;
            loaded.verifier
        }
    };
    let has_role = match field {
        "completion" => verifier.has_completion(),
        _ => verifier.has_progress(),
    };
    if !has_role {
        return Err(file.error(&at, format!("{spec} does not export `{field}`")));
    }
    Ok(verifier)
}

fn connector(file: &ConfigFile) -> Result<Connector, ConfigError> {
    let name = &file.config.agent.connector;
    let at = [key("connectors"), key(name)];
    let section = file
        .config
        .connectors
        .get(name)
        .ok_or_else(|| file.error(&[key("agent"), key("connector")], "unknown connector"))?;
    let mut config = ConnectorConfig::new(name.clone(), section.protocol.into());
    if let Some(url) = &section.base_url {
        config = config.with_base_url(url.clone());
    }
    if section.no_api_key {
        config = config.with_credential(Credential::None);
    } else if let Some(var) = &section.api_key_env {
        config = config.with_credential(Credential::Env(var.clone()));
    }
    Connector::new(config).map_err(|e| file.error(&at, e.to_string()))
}

/// A checker of verifiers served by `verdict serve`, its token read from
/// `token_env` now.
fn remote_checker<C>(
    file: &ConfigFile<C>,
    tenant: &str,
    field: &str,
    remote: &RemoteSection,
) -> Result<RemoteChecker, ConfigError> {
    let at = [key("tenants"), key(tenant), key(field)];
    let token = match &remote.token_env {
        Some(var) => Some(std::env::var(var).map_err(|_| {
            file.error(
                &[key("tenants"), key(tenant), key(field), key("token_env")],
                format!("the environment variable {var} is not set"),
            )
        })?),
        None => None,
    };
    RemoteChecker::new(&remote.url, token).map_err(|e| file.error(&at, e.to_string()))
}

/// A checker of `verifier` for `tenant` in both roles, recording every
/// call when there is a `recorder`.
enum SessionChecker {
    Plain(Arc<WasmChecker>),
    Recording(Arc<RecordingChecker>),
}

impl SessionChecker {
    fn new(
        verifier: LoadedVerifier,
        tenant: Tenant,
        totals: &Totals,
        recorder: Option<&Arc<Recorder>>,
    ) -> Self {
        match recorder {
            Some(recorder) => Self::Recording(Arc::new(
                RecordingChecker::new(verifier, tenant, Arc::clone(recorder))
                    .with_totals(totals.clone()),
            )),
            None => Self::Plain(Arc::new(
                WasmChecker::new(verifier, tenant).with_totals(totals.clone()),
            )),
        }
    }

    fn completion(self) -> Arc<dyn verdict::CompletionChecker> {
        match self {
            Self::Plain(c) => c,
            Self::Recording(c) => c,
        }
    }

    fn progress(self) -> Arc<dyn verdict::ProgressChecker> {
        match self {
            Self::Plain(c) => c,
            Self::Recording(c) => c,
        }
    }
}

/// Loads the checkers of `tenant` (none without a tenant) from its `.wasm`
/// files; every `.wasm` is read and compiled now.
pub fn load_checkers<C: TenantsConfig>(
    file: &ConfigFile<C>,
    host: &VerifierHost,
    tenant: Option<&str>,
    totals: &Totals,
    recorder: Option<&Arc<Recorder>>,
) -> Result<Checkers, ConfigError> {
    let Some(name) = tenant else {
        return Ok(Checkers::default());
    };
    let Some(section) = file.config.tenants().get(name) else {
        return Ok(Checkers::default());
    };
    let root = file.resolve(&section.artifact_root);
    let store = DirStore::open(&root).map_err(|e| {
        file.error(
            &[key("tenants"), key(name), key("artifact_root")],
            format!("cannot open {}: {e}", root.display()),
        )
    })?;
    let limits = section.limits.to_limits();
    let tenant = Tenant::new(name.to_owned(), limits, Arc::new(store)).with_ready_instances(
        section
            .ready_instances
            .unwrap_or(verdict::DEFAULT_READY_INSTANCES),
    );
    let mut checkers = Checkers::default();
    match &section.completion {
        Some(VerifierRef::Local(spec)) => {
            let verifier =
                load_verifier(file, host, name, "completion", spec, recorder.map(|r| &**r))?;
            checkers.completion =
                Some(SessionChecker::new(verifier, tenant.clone(), totals, recorder).completion());
        }
        Some(VerifierRef::Remote(remote)) => {
            checkers.completion = Some(Arc::new(remote_checker(file, name, "completion", remote)?));
        }
        None => {}
    }
    match &section.progress {
        Some(VerifierRef::Local(spec)) => {
            let verifier =
                load_verifier(file, host, name, "progress", spec, recorder.map(|r| &**r))?;
            checkers.progress =
                Some(SessionChecker::new(verifier, tenant, totals, recorder).progress());
        }
        Some(VerifierRef::Remote(remote)) => {
            checkers.progress = Some(Arc::new(remote_checker(file, name, "progress", remote)?));
        }
        None => {}
    }
    Ok(checkers)
}

/// What an agent of one configuration is made of, before it is built:
/// `run` builds one agent of them, `worker` a blueprint for every
/// durable execution.
pub struct Parts {
    /// The tenant whose verifiers check completion, if any.
    pub tenant: Option<String>,
    /// The loop policy, if any.
    pub policy: Option<LoopPolicy>,
    /// The tenant's checkers.
    pub checkers: Checkers,
    /// Checker metrics.
    pub totals: Totals,
    /// The agent's connector.
    pub connector: Connector,
    /// The built-in tools.
    pub tools: Vec<verdict::Tool>,
    /// The MCP servers' tools (none without `[mcp.*]`).
    pub mcp: Option<Arc<McpToolset>>,
}

impl Parts {
    /// Loads the connector, tools, policy and the checkers of `tenant`
    /// (see [`pick_tenant`]); every `.wasm` is loaded and checked now, and
    /// the MCP servers are started on `runtime` (the run's own).
    pub fn load(
        file: &ConfigFile,
        tenant: Option<&str>,
        host: &VerifierHost,
        runtime: &tokio::runtime::Handle,
    ) -> Result<Self, SessionError> {
        Self::load_recording(file, tenant, host, None, runtime)
    }

    /// [`Parts::load`], every check recorded into `recorder` when given.
    pub fn load_recording(
        file: &ConfigFile,
        tenant: Option<&str>,
        host: &VerifierHost,
        recorder: Option<&Arc<Recorder>>,
        runtime: &tokio::runtime::Handle,
    ) -> Result<Self, SessionError> {
        let config = &file.config;
        let tenant = pick_tenant(file, tenant)?;
        let totals = Totals::default();
        let checkers = if config.loop_policy.is_some() {
            load_checkers(file, host, tenant.as_deref(), &totals, recorder)?
        } else {
            Checkers::default()
        };
        let connector = connector(file)?;
        let mut tools = Vec::new();
        if let Some(section) = &config.tools {
            let at = [key("tools"), key("workspace")];
            let dir = file.resolve(&section.workspace);
            let workspace = Workspace::open(&dir)
                .map_err(|e| file.error(&at, format!("cannot open {}: {e}", dir.display())))?;
            let mut seen = std::collections::HashSet::new();
            for name in &section.builtin {
                if seen.insert(*name) {
                    let tool = workspace
                        .tool(*name)
                        .map_err(|e| file.error(&[key("tools"), key("builtin")], e.to_string()))?;
                    tools.push(tool);
                }
            }
        }
        let mcp = crate::mcp_tools::start(file, tenant.as_deref(), runtime)?.map(Arc::new);
        Ok(Self {
            tenant,
            policy: config.loop_policy.clone(),
            checkers,
            totals,
            connector,
            tools,
            mcp,
        })
    }
}

impl Session {
    /// Builds the agent for `tenant` (see [`pick_tenant`]); every `.wasm`
    /// is loaded and checked now and the MCP servers started on `runtime`,
    /// before anything runs.
    pub fn build(
        file: &ConfigFile,
        tenant: Option<&str>,
        host: &VerifierHost,
        runtime: &tokio::runtime::Handle,
    ) -> Result<Self, SessionError> {
        Self::build_recording(file, tenant, host, None, runtime)
    }

    /// [`Session::build`], every check recorded into `recorder` when given.
    pub fn build_recording(
        file: &ConfigFile,
        tenant: Option<&str>,
        host: &VerifierHost,
        recorder: Option<&Arc<Recorder>>,
        runtime: &tokio::runtime::Handle,
    ) -> Result<Self, SessionError> {
        let Parts {
            tenant,
            policy,
            checkers,
            totals,
            connector,
            tools,
            mcp,
        } = Parts::load_recording(file, tenant, host, recorder, runtime)?;
        let mut registry = ConnectorRegistry::new();
        registry.register_connector(connector);
        let agent_section = &file.config.agent;
        let mut builder = Agent::builder()
            .connector(&registry, &agent_section.connector)
            .model_name(agent_section.model.clone());
        if let Some(instructions) = &agent_section.instructions {
            builder = builder.instructions(instructions.clone());
        }
        if let Some(n) = agent_section.max_iterations {
            builder = builder.max_iterations(n);
        }
        if let Some(n) = agent_section.max_tokens {
            builder = builder.max_tokens(n);
        }
        let builtin = crate::tool_rows::rows(&tools, &[]);
        for tool in tools {
            builder = builder.tool(tool);
        }
        if let Some(set) = &mcp {
            builder = builder.tool_source(set.clone());
        }
        if let Some(policy) = &policy {
            builder = builder
                .loop_policy(policy.clone())
                .checkers(checkers.clone());
        }
        let agent = builder
            .build()
            .map_err(|e| file.error(&[key("agent")], e.to_string()))?;
        Ok(Self {
            agent,
            tenant,
            policy,
            checkers,
            totals,
            builtin,
            mcp,
        })
    }
}
