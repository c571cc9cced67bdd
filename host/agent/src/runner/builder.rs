//! `AgentBuilder`.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use verdict_policy::{CompletionChecker, LoopPolicy, ProgressChecker};
use verdict_providers::Model;

use super::registry::ConnectorRegistry;
use super::routing::{Router, Routing};
use super::{Agent, DEFAULT_MAX_ITERATIONS, Inner, State};
use crate::checkers::Checkers;
use crate::error::BuildError;
use crate::host::{HostContext, StaticHost};
use crate::task_state::{TaskStateStore, WithTaskState};
use crate::tools::Hooks;
use crate::tools::{PermissionPolicy, Tool, ToolManager, ToolSource};

/// Builds an [`Agent`].
#[derive(Default)]
pub struct AgentBuilder {
    model: Option<Arc<dyn Model>>,
    connector_error: Option<BuildError>,
    model_name: String,
    instructions: Option<String>,
    max_tokens: Option<u32>,
    max_iterations: Option<u32>,
    tools: Vec<Tool>,
    sources: Vec<Arc<dyn ToolSource>>,
    permissions: PermissionPolicy,
    hooks: Hooks,
    policy: Option<LoopPolicy>,
    checkers: Checkers,
    host: Option<Arc<dyn HostContext>>,
    task_state: Option<TaskStateStore>,
    routing: Option<Routing>,
}

impl std::fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("model_name", &self.model_name)
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

impl AgentBuilder {
    /// Uses the connector named `name` from `registry`.
    pub fn connector(mut self, registry: &ConnectorRegistry, name: &str) -> Self {
        match registry.get(name) {
            Some(model) => self.model = Some(model),
            None => self.connector_error = Some(BuildError::UnknownConnector(name.to_owned())),
        }
        self
    }

    /// Uses `model` directly.
    pub fn model(mut self, model: Arc<dyn Model>) -> Self {
        self.model = Some(model);
        self
    }

    /// The provider's model id sent with every request.
    pub fn model_name(mut self, name: impl Into<String>) -> Self {
        self.model_name = name.into();
        self
    }

    /// System instructions.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Upper bound on generated tokens per call.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Model turns per run (default [`DEFAULT_MAX_ITERATIONS`]).
    pub fn max_iterations(mut self, max_iterations: u32) -> Self {
        self.max_iterations = Some(max_iterations);
        self
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds a source of tools whose list may change: refreshed before
    /// each model call, its current tools offered after the fixed ones.
    pub fn tool_source(mut self, source: Arc<dyn ToolSource>) -> Self {
        self.sources.push(source);
        self
    }

    /// Sets the permission policy.
    pub fn permissions(mut self, permissions: PermissionPolicy) -> Self {
        self.permissions = permissions;
        self
    }

    /// Sets the before/after tool hooks.
    pub fn hooks(mut self, hooks: Hooks) -> Self {
        self.hooks = hooks;
        self
    }

    /// The default loop policy of every run (validated at build).
    pub fn loop_policy(mut self, policy: LoopPolicy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// The default checkers of every run with a policy (a run may bring
    /// its own: [`crate::RunOptions::with_checkers`]). Checkers run only
    /// under a loop policy: building without [`AgentBuilder::loop_policy`]
    /// is [`BuildError::CheckersWithoutPolicy`].
    pub fn checkers(mut self, checkers: Checkers) -> Self {
        self.checkers = checkers;
        self
    }

    /// The default completion checker.
    pub fn completion_checker(mut self, checker: Arc<dyn CompletionChecker>) -> Self {
        self.checkers.completion = Some(checker);
        self
    }

    /// The default progress checker.
    pub fn progress_checker(mut self, checker: Arc<dyn ProgressChecker>) -> Self {
        self.checkers.progress = Some(checker);
        self
    }

    /// The host context checks capture (default: an empty fixed scope).
    pub fn host(mut self, host: Arc<dyn HostContext>) -> Self {
        self.host = Some(host);
        self
    }

    /// Keeps task state in `store`: its snapshot goes into every check
    /// packet, and its generation (bumped by a restore) is part of the task
    /// generation the stale-view guard compares. It overrides the host
    /// context's own task state.
    pub fn task_state(mut self, store: TaskStateStore) -> Self {
        self.task_state = Some(store);
        self
    }

    /// Routes every new execution: `router` chooses a connector of
    /// `registry` and a model id once, before the execution starts.
    /// Recovery, retries, tool iterations and continuations keep that
    /// binding; a routing error or an unknown connector falls back to the
    /// agent's own model (recorded in the route diagnostics).
    pub fn router(mut self, registry: &ConnectorRegistry, router: Arc<dyn Router>) -> Self {
        self.routing = Some(Routing {
            registry: registry.clone(),
            router,
        });
        self
    }

    /// Builds the agent.
    pub fn build(self) -> Result<Agent, BuildError> {
        if let Some(error) = self.connector_error {
            return Err(error);
        }
        let model = self.model.ok_or(BuildError::NoModel)?;
        let max_iterations = self.max_iterations.unwrap_or(DEFAULT_MAX_ITERATIONS);
        if max_iterations == 0 {
            return Err(BuildError::ZeroIterations);
        }
        match &self.policy {
            Some(policy) => policy.validate()?,
            // Checkers run only under a policy: without one they would be
            // silently unused.
            None if self.checkers.completion.is_some() || self.checkers.progress.is_some() => {
                return Err(BuildError::CheckersWithoutPolicy);
            }
            None => {}
        }
        let mut tools = ToolManager::new();
        for tool in self.tools {
            tools.register(tool)?;
        }
        for source in self.sources {
            tools.add_source(source);
        }
        tools.set_permissions(self.permissions);
        tools.set_hooks(self.hooks);
        let host = self.host.unwrap_or_else(|| Arc::new(StaticHost::default()));
        let host: Arc<dyn HostContext> = match &self.task_state {
            Some(store) => Arc::new(WithTaskState {
                host,
                store: store.clone(),
            }),
            None => host,
        };
        Ok(Agent {
            inner: Arc::new(Inner {
                id: Agent::new_id(),
                model,
                model_name: self.model_name,
                instructions: self.instructions,
                max_tokens: self.max_tokens,
                max_iterations,
                tools,
                policy: self.policy,
                checkers: self.checkers,
                host,
                task_state: self.task_state,
                routing: self.routing,
                lease: Arc::new(AtomicBool::new(false)),
                diagnostics: Arc::new(Mutex::new(None)),
                state: Mutex::new(State {
                    conversation: Vec::new(),
                    conversation_generation: 0,
                    executions: 0,
                    binding: None,
                    checkpoints: Default::default(),
                    budget: None,
                }),
                async_queue: Mutex::default(),
            }),
        })
    }
}
