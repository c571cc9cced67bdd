// The README's examples use the facade: `tests/facade` compiles them.
#![cfg_attr(not(doctest), doc = include_str!("../README.md"))]
#![deny(missing_docs)]

mod cancel;
mod checkers;
mod error;
mod helper;
mod host;
mod runner;
mod task_state;
mod tools;

pub use checkers::{Checkers, CompletionFn, ProgressFn};
pub use error::{AgentError, BuildError};
pub use helper::{HelperError, HelperModel};
pub use host::{HostContext, StaticHost};
pub use runner::{
    Agent, AgentBuilder, AgentEvent, AgentResponse, AgentStream, AsyncDelivery, CallBudget,
    ConnectorRegistry, DEFAULT_CHECKER_TIMEOUT, DEFAULT_MAX_ITERATIONS, DirectStream, PolicyChoice,
    Route, RouteDiagnostics, RouteRequest, Router, RouterFn, RunError, RunOptions, RunOutcome,
    RunStatus, SettledRun, SuspendedRun,
};
pub use task_state::{DEFAULT_TASK_STATE_BYTES, TaskStateError, TaskStateStore};
pub use tools::{
    AfterToolHook, AskFn, AsyncSettler, BeforeTool, BeforeToolHook, DEFAULT_DEADLINE,
    ExecutionReceipt, Hooks, PendingResult, PermissionPolicy, PermissionRule, Prepared,
    SettledCall, Suspension, Tool, ToolContext, ToolDefinitionError, ToolError, ToolManager,
    ToolOutcome, ToolReturn, ToolRun, ToolSource, sanitize_error,
};
