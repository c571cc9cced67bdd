//! The verdict managed agent loop.
//!
//! An [`Agent`] calls a model ([`verdict_providers::Model`]: an HTTP
//! connector or a scripted fake), executes the tool calls of each response
//! through a [`ToolManager`] (JSON Schema validation, permissions, hooks,
//! deadlines, outcome normalization), and — when a loop policy is
//! configured — drives a [`verdict_policy::PolicyExecution`] at every
//! decision point: admission before each dispatch, observation after each
//! settled call, a progress sample after each batch, and a completion check
//! on each final candidate.
//!
//! | module | holds |
//! |---|---|
//! | `agent/builder.rs` | [`AgentBuilder`] |
//! | `agent/options.rs` | [`RunOptions`], [`PolicyChoice`], [`CallBudget`] |
//! | `agent/run.rs` | the loop ([`Agent::run`]), shared by [`Agent::stream`] |
//! | `agent/continuation.rs` | [`Agent::continue_with_async_results`], async deliveries and their import |
//! | `agent/finish.rs` | the suspension wrap-up and the structured-output repair/formatting calls |
//! | `agent/stream.rs` | [`Agent::stream`]: the same loop as typed [`AgentEvent`]s |
//! | `agent/events.rs` | [`AgentEvent`] |
//! | `agent/call_ids.rs` | call ids unique per execution |
//! | `agent/batch.rs` | one response's tool calls: hooks, admission, execution, observation |
//! | `agent/managed.rs` | the policy execution and its checkers (the one decision path) |
//! | `agent/response.rs` | [`AgentResponse`], [`RunStatus`] |
//! | `agent/registry.rs` | [`ConnectorRegistry`] |
//! | `agent/routing.rs` | [`Router`]: connector and model chosen once per execution |
//! | `agent/lease.rs` | one execution at a time per agent |
//! | `tools/` | [`Tool`], [`ToolManager`], permissions, outcomes and receipts |
//! | `hooks.rs` | before-tool and after-tool hooks |
//! | `helper.rs` | [`HelperModel`]: the only way a native checker calls a model |
//! | `host.rs` | [`HostContext`]: the scope a check captures |
//! | `task_state.rs` | [`TaskStateStore`]: the bounded task state checkers see |
//! | `checkers.rs` | [`Checkers`]: the checkers of a run; [`CompletionFn`] / [`ProgressFn`] closure adapters |

mod agent;
mod checkers;
mod error;
mod helper;
pub mod hooks;
mod host;
mod task_state;
pub mod tools;

pub use agent::{
    Agent, AgentBuilder, AgentEvent, AgentResponse, AgentStream, AsyncDelivery, CallBudget,
    ConnectorRegistry, DEFAULT_CHECKER_TIMEOUT, DEFAULT_MAX_ITERATIONS, DirectStream, PolicyChoice,
    Route, RouteDiagnostics, RouteRequest, Router, RouterFn, RunOptions, RunOutcome, RunStatus,
    SuspendedRun,
};
pub use checkers::{Checkers, CompletionFn, ProgressFn};
pub use error::{AgentError, BuildError, RunError, SettledRun};
pub use helper::{HelperError, HelperModel};
pub use hooks::{BeforeTool, Hooks};
pub use host::{HostContext, StaticHost};
pub use task_state::{DEFAULT_TASK_STATE_BYTES, TaskStateError, TaskStateStore};
pub use tools::{
    AsyncSettler, ExecutionReceipt, PendingResult, PermissionPolicy, PermissionRule, SettledCall,
    Suspension, Tool, ToolContext, ToolError, ToolManager, ToolOutcome, ToolReturn,
};
