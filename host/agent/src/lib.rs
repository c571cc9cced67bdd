#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

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
