//! The tool manager: tool definitions with JSON Schema arguments, effects
//! and deadlines; permissions; before/after hooks; execution; outcome
//! normalization with execution receipts.

mod error;
mod hooks;
mod manager;
mod outcome;
mod pending;
mod permission;
mod source;
mod tool;

pub use error::{ToolDefinitionError, ToolError};
pub use hooks::{AfterToolHook, BeforeTool, BeforeToolHook, Hooks};
pub use manager::{Prepared, ToolManager};
pub use outcome::{ExecutionReceipt, SettledCall, ToolOutcome, sanitize_error};
pub use pending::{AsyncSettler, PendingResult, Suspension, ToolReturn};
pub(crate) use pending::{Deferred, Poll};
pub use permission::{AskFn, PermissionPolicy, PermissionRule};
pub use source::ToolSource;
pub use tool::{DEFAULT_DEADLINE, Tool, ToolContext, ToolRun};
