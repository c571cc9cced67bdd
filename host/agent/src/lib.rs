//! The verdict managed agent loop.
//!
//! An [`Agent`] calls a model ([`verdict_providers::Model`]: an HTTP
//! connector or a scripted fake), executes the tool calls of each response
//! through a [`ToolManager`] (JSON Schema validation, permissions, hooks,
//! deadlines, outcome normalization), and — when a loop policy is
//! configured — drives a [`verdict_policy::PolicyExecution`] at every
//! decision point: admission before each dispatch, observation after each
//! settled call, a progress sample after each batch, and a completion check
//! on each final candidate, run by the run's [`Checkers`] within a
//! [`verdict_policy::CheckContext`].
//!
//! | module | holds |
//! |---|---|
//! | `agent/builder.rs` | [`AgentBuilder`] |
//! | `agent/options.rs` | [`RunOptions`], [`PolicyChoice`], [`CallBudget`] |
//! | `agent/run.rs` | [`Agent::run`] and the loop: a short loop over the steps of an execution |
//! | `agent/execution.rs` | the execution object: progress, binding, call context, options, mode, events, managed policy |
//! | `agent/steps.rs` | the steps of a turn: begin, model call, final answer, tool batch |
//! | `agent/finish.rs` | the suspension wrap-up and the tool-free repair/formatting calls |
//! | `agent/structured.rs` | output-schema checks and the repair/format requests |
//! | `agent/continuation.rs` | [`Agent::continue_with_async_results`], async deliveries and their import |
//! | `agent/stream.rs` | [`Agent::stream`]: the same loop as typed [`AgentEvent`]s |
//! | `agent/events.rs` | [`AgentEvent`] |
//! | `agent/call_ids.rs` | call ids unique per execution |
//! | `agent/batch.rs` | one response's tool calls: hooks, admission, execution, observation |
//! | `agent/managed.rs` | the policy execution and its checkers (the one decision path) |
//! | `agent/response.rs` | [`AgentResponse`], [`RunStatus`], [`RunOutcome`], [`RunError`] |
//! | `agent/registry.rs` | [`ConnectorRegistry`] |
//! | `agent/routing.rs` | [`Router`]: connector and model chosen once per execution |
//! | `agent/lease.rs` | one execution at a time per agent |
//! | `tools/` | [`Tool`], [`ToolManager`], permissions, hooks, outcomes and receipts |
//! | `checkers.rs` | [`Checkers`]: the checkers of a run; [`CompletionFn`] / [`ProgressFn`] closure adapters |
//! | `helper.rs` | [`HelperModel`]: the only way a native checker calls a model |
//! | `host.rs` | [`HostContext`]: the scope a check captures |
//! | `task_state.rs` | [`TaskStateStore`]: the bounded task state checkers see |
//!
//! Every public item has one path: the crate root.

mod agent;
mod checkers;
mod error;
mod helper;
mod host;
mod task_state;
mod tools;

pub use agent::{
    Agent, AgentBuilder, AgentEvent, AgentResponse, AgentStream, AsyncDelivery, CallBudget,
    ConnectorRegistry, DEFAULT_CHECKER_TIMEOUT, DEFAULT_MAX_ITERATIONS, DirectStream, PolicyChoice,
    Route, RouteDiagnostics, RouteRequest, Router, RouterFn, RunError, RunOptions, RunOutcome,
    RunStatus, SettledRun, SuspendedRun,
};
pub use checkers::{Checkers, CompletionFn, ProgressFn};
pub use error::{AgentError, BuildError};
pub use helper::{HelperError, HelperModel};
pub use host::{HostContext, StaticHost};
pub use task_state::{DEFAULT_TASK_STATE_BYTES, TaskStateError, TaskStateStore};
pub use tools::{
    AfterToolHook, AskFn, AsyncSettler, BeforeTool, BeforeToolHook, DEFAULT_DEADLINE,
    ExecutionReceipt, Hooks, PendingResult, PermissionPolicy, PermissionRule, Prepared,
    SettledCall, Suspension, Tool, ToolContext, ToolDefinitionError, ToolError, ToolManager,
    ToolOutcome, ToolReturn, sanitize_error,
};
