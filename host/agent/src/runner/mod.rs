//! The agent: a model, tools and a default loop policy, run as a managed
//! loop ([`Agent::run`]).

mod async_results;
mod batch;
mod builder;
mod call_ids;
mod continuation;
mod direct;
mod events;
mod execution;
mod finish;
mod lease;
mod managed;
mod options;
mod registry;
mod response;
mod routing;
mod run;
mod steps;
mod stream;
mod structured;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use verdict_policy::{LoopDiagnostics, LoopPolicy};
use verdict_providers::{Message, Model};

pub use async_results::AsyncDelivery;
pub use builder::AgentBuilder;
pub use direct::DirectStream;
pub use events::AgentEvent;
pub use options::{CallBudget, DEFAULT_CHECKER_TIMEOUT, PolicyChoice, RunOptions};
pub use registry::ConnectorRegistry;
pub use response::{AgentResponse, RunError, RunOutcome, RunStatus, SettledRun, SuspendedRun};
pub use routing::{Route, RouteDiagnostics, RouteRequest, Router, RouterFn};
pub use stream::AgentStream;

use crate::checkers::Checkers;
use crate::error::AgentError;
use crate::host::HostContext;
use crate::task_state::TaskStateStore;
use crate::tools::ToolManager;
use async_results::AsyncQueue;
use lease::Lease;
use managed::DiagnosticsSlot;

/// Numbers agents within the process (owner identities).
static NEXT_AGENT: AtomicU64 = AtomicU64::new(1);

/// The default `max_iterations`.
pub const DEFAULT_MAX_ITERATIONS: u32 = 10;

/// An agent. Cheap to clone; clones share the conversation, the lease and
/// the diagnostics.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<Inner>,
}

struct Inner {
    id: String,
    model: Arc<dyn Model>,
    model_name: String,
    instructions: Option<String>,
    max_tokens: Option<u32>,
    max_iterations: u32,
    tools: ToolManager,
    policy: Option<LoopPolicy>,
    checkers: Checkers,
    host: Arc<dyn HostContext>,
    task_state: Option<TaskStateStore>,
    routing: Option<routing::Routing>,
    lease: Arc<AtomicBool>,
    diagnostics: DiagnosticsSlot,
    state: Mutex<State>,
    async_queue: Mutex<AsyncQueue>,
}

struct State {
    conversation: Vec<Message>,
    /// Changes whenever the conversation is replaced.
    conversation_generation: u64,
    executions: u64,
    /// The routed binding of the latest execution (kept by continuations).
    binding: Option<routing::Binding>,
    /// Checkpoints of suspended executions by correlation id, oldest first.
    checkpoints: std::collections::VecDeque<(String, String)>,
    /// The call budget of the latest execution (kept by continuations).
    budget: Option<CallBudget>,
}

/// How many suspension checkpoints an agent keeps.
const MAX_CHECKPOINTS: usize = 16;

impl State {
    fn save_checkpoint(&mut self, correlation_id: &str, checkpoint: &str) {
        self.checkpoints.retain(|(id, _)| id != correlation_id);
        if self.checkpoints.len() == MAX_CHECKPOINTS {
            self.checkpoints.pop_front();
        }
        self.checkpoints
            .push_back((correlation_id.to_owned(), checkpoint.to_owned()));
    }
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("id", &self.inner.id)
            .field("model", &self.inner.model_name)
            .field("max_iterations", &self.inner.max_iterations)
            .field("tools", &self.inner.tools.definitions().len())
            .field("policy", &self.inner.policy.is_some())
            .field("checkers", &self.inner.checkers)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// Starts building an agent.
    pub fn builder() -> AgentBuilder {
        AgentBuilder::default()
    }

    /// A detached snapshot of the active or latest managed policy
    /// execution; `None` before any, and after a run without a policy.
    pub fn loop_diagnostics(&self) -> Option<LoopDiagnostics> {
        self.inner
            .diagnostics
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// How the latest execution was routed; `None` without a router.
    pub fn last_route(&self) -> Option<RouteDiagnostics> {
        self.state().binding.as_ref().map(|b| b.diagnostics.clone())
    }

    /// The checkpoint saved when a tool suspended an execution with
    /// `correlation_id` (the latest 16 are kept).
    pub fn checkpoint(&self, correlation_id: &str) -> Option<String> {
        self.state()
            .checkpoints
            .iter()
            .find(|(id, _)| id == correlation_id)
            .map(|(_, checkpoint)| checkpoint.clone())
    }

    /// The agent's task-state store, when built with one.
    pub fn task_state(&self) -> Option<TaskStateStore> {
        self.inner.task_state.clone()
    }

    /// The conversation so far (user input, model turns, tool results,
    /// host feedback).
    pub fn conversation(&self) -> Vec<Message> {
        self.state().conversation.clone()
    }

    /// The conversation as JSON. No policy or checker is ever stored in it.
    pub fn save_conversation(&self) -> String {
        // Messages are plain data with string keys: serialization cannot fail.
        serde_json::to_string(&self.state().conversation).unwrap_or_else(|_| "[]".to_owned())
    }

    /// Replaces the conversation with one saved by
    /// [`Agent::save_conversation`]. It never installs a policy or checker;
    /// the agent keeps its own. Refused with [`AgentError::Busy`] while an
    /// execution runs.
    pub fn load_conversation(&self, json: &str) -> Result<(), AgentError> {
        let _lease = Lease::take(&self.inner.lease)?;
        let messages: Vec<Message> =
            serde_json::from_str(json).map_err(|e| AgentError::Conversation(e.to_string()))?;
        let mut state = self.state();
        state.conversation = messages;
        state.conversation_generation += 1;
        Ok(())
    }

    /// Empties the conversation. Refused with [`AgentError::Busy`] while an
    /// execution runs.
    pub fn clear_conversation(&self) -> Result<(), AgentError> {
        let _lease = Lease::take(&self.inner.lease)?;
        let mut state = self.state();
        state.conversation.clear();
        state.conversation_generation += 1;
        Ok(())
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn async_queue(&self) -> std::sync::MutexGuard<'_, AsyncQueue> {
        self.inner
            .async_queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    fn new_id() -> String {
        format!("agent-{}", NEXT_AGENT.fetch_add(1, Ordering::Relaxed))
    }
}
