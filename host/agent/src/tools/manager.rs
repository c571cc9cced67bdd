//! `ToolManager`: the registry, preparation (hooks) and execution
//! (validation, permission, deadline, cancellation, normalization).

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use futures::FutureExt;
use serde_json::Value;
use verdict_policy::{CancelHandle, Effect, FailureKind};
use verdict_providers::{ToolCall, ToolDefinition};

use super::error::ToolDefinitionError;
use super::hooks::Hooks;
use super::outcome::{
    ExecutionReceipt, SettledCall, ToolOutcome, result_fingerprint, sanitize_error,
};
use super::pending::{Deferred, ToolReturn};
use super::permission::PermissionPolicy;
use super::source::ToolSource;
use super::tool::{Tool, ToolContext};

/// A call after its before-tool hooks.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Prepared {
    /// A hook skipped it: it never starts.
    Skipped(SettledCall),
    /// Ready for admission and execution.
    Ready {
        /// The call with the arguments that will run.
        call: ToolCall,
        /// The registered tool, `None` when the name is unknown.
        tool: Option<Arc<Tool>>,
    },
}

impl Prepared {
    /// The declared effect (unknown for an unregistered tool).
    pub fn effect(&self) -> Effect {
        match self {
            Self::Skipped(settled) => settled.effect,
            Self::Ready { tool, .. } => tool.as_ref().map_or(Effect::Unknown, |t| t.effect),
        }
    }
}

/// Owns the tools, permissions and hooks.
#[derive(Debug, Clone, Default)]
pub struct ToolManager {
    tools: Vec<Arc<Tool>>,
    index: HashMap<String, usize>,
    /// Tools whose list may change, after the fixed ones.
    sources: Vec<Arc<dyn ToolSource>>,
    permissions: PermissionPolicy,
    hooks: Hooks,
}

impl ToolManager {
    /// An empty manager that allows every call.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a tool; names are unique.
    pub fn register(&mut self, tool: Tool) -> Result<(), ToolDefinitionError> {
        if self.index.contains_key(&tool.name) {
            return Err(ToolDefinitionError::Duplicate(tool.name));
        }
        self.index.insert(tool.name.clone(), self.tools.len());
        self.tools.push(Arc::new(tool));
        Ok(())
    }

    /// Adds a source of tools whose list may change between turns.
    pub fn add_source(&mut self, source: Arc<dyn ToolSource>) {
        self.sources.push(source);
    }

    /// Refreshes every source (the loop does it before each model call);
    /// `true` when a list changed.
    pub async fn refresh(&self) -> bool {
        let mut changed = false;
        for source in &self.sources {
            changed |= source.refresh().await;
        }
        changed
    }

    /// Replaces the permission policy.
    pub fn set_permissions(&mut self, permissions: PermissionPolicy) {
        self.permissions = permissions;
    }

    /// Replaces the hooks.
    pub fn set_hooks(&mut self, hooks: Hooks) {
        self.hooks = hooks;
    }

    /// The definitions offered to the model: the fixed tools in
    /// registration order, then each source's current tools (a name
    /// already offered is shadowed).
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        let mut definitions: Vec<ToolDefinition> =
            self.tools.iter().map(|t| t.definition()).collect();
        if self.sources.is_empty() {
            return definitions;
        }
        let mut seen: std::collections::HashSet<String> = self.index.keys().cloned().collect();
        for source in &self.sources {
            for tool in source.tools() {
                if seen.insert(tool.name.clone()) {
                    definitions.push(tool.definition());
                }
            }
        }
        definitions
    }

    /// The registered (fixed) tool named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<Tool>> {
        self.index.get(name).and_then(|&i| self.tools.get(i))
    }

    /// The tool a call named `name` runs now: a fixed one, else the first
    /// source offering it.
    pub fn find(&self, name: &str) -> Option<Arc<Tool>> {
        if let Some(tool) = self.get(name) {
            return Some(Arc::clone(tool));
        }
        self.sources
            .iter()
            .find_map(|s| s.tools().into_iter().find(|t| t.name == name))
    }

    /// Runs the before-tool hooks on `call`.
    pub fn prepare(&self, call: &ToolCall) -> Prepared {
        let tool = self.find(&call.name);
        let mut call = call.clone();
        match self.hooks.run_before(&mut call) {
            Ok(()) => Prepared::Ready { call, tool },
            Err(message) => {
                let effect = tool.as_ref().map_or(Effect::Unknown, |t| t.effect);
                Prepared::Skipped(SettledCall::not_started(call, effect, message))
            }
        }
    }

    /// Runs the after-tool hooks on a settled call.
    pub fn after(&self, settled: &SettledCall) {
        self.hooks.run_after(settled);
    }

    /// Validates, checks permission and runs a prepared call within its
    /// deadline; `cancel` ends it early. Argument and permission failures
    /// never start the tool and carry no receipt.
    ///
    /// An async tool's pending handle is dropped here (its later result has
    /// nowhere to go); the agent loop keeps it.
    pub async fn execute(
        &self,
        call: ToolCall,
        tool: Option<Arc<Tool>>,
        cancel: &CancelHandle,
    ) -> SettledCall {
        self.execute_keeping(call, tool, cancel).await.0
    }

    /// [`ToolManager::execute`], keeping an async tool's pending handle.
    pub(crate) async fn execute_keeping(
        &self,
        call: ToolCall,
        tool: Option<Arc<Tool>>,
        cancel: &CancelHandle,
    ) -> (SettledCall, Option<Deferred>) {
        let Some(tool) = tool else {
            let error = match self.sources.iter().find_map(|s| s.withdrawn(&call.name)) {
                Some(why) => sanitize_error(&why),
                None => format!(
                    "no tool named `{}` is available",
                    sanitize_error(&call.name)
                ),
            };
            return (
                failed(call, Effect::Unknown, FailureKind::Arguments, error),
                None,
            );
        };
        if let Some(error) = tool.argument_error(&call.arguments) {
            let error = format!("invalid arguments: {}", sanitize_error(&error));
            return (
                failed(call, tool.effect, FailureKind::Arguments, error),
                None,
            );
        }
        if !self.permissions.allows(&call).await {
            let error = format!("permission to run `{}` was denied", tool.name);
            return (
                failed(call, tool.effect, FailureKind::Permission, error),
                None,
            );
        }
        if cancel.is_cancelled() {
            let error = "cancelled before it started".to_owned();
            return (
                failed(call, tool.effect, FailureKind::Cancelled, error),
                None,
            );
        }
        let started = Instant::now();
        let ctx = ToolContext {
            call_id: call.id.clone(),
            cancel: cancel.child(),
            idempotency_key: None,
        };
        let run = AssertUnwindSafe((tool.run)(call.arguments.clone(), ctx)).catch_unwind();
        let mut deferred = None;
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => ToolOutcome::Failed {
                kind: FailureKind::Cancelled,
                error: "cancelled while running".to_owned(),
            },
            timed = tokio::time::timeout(tool.deadline, run) => match timed {
                Err(_) => ToolOutcome::Failed {
                    kind: FailureKind::Timeout,
                    error: format!("exceeded its deadline of {:?}", tool.deadline),
                },
                Ok(Err(_panic)) => ToolOutcome::Unknown {
                    error: "the tool panicked; whether it took effect is unknown".to_owned(),
                },
                Ok(Ok(Ok(ToolReturn::Ready(value)))) => ToolOutcome::Succeeded { value },
                Ok(Ok(Ok(ToolReturn::Unknown(error)))) => ToolOutcome::Unknown {
                    error: sanitize_error(&error),
                },
                Ok(Ok(Ok(ToolReturn::Pending(handle)))) => {
                    deferred = Some(Deferred::Pending(handle));
                    ToolOutcome::Succeeded { value: Value::Null }
                }
                Ok(Ok(Ok(ToolReturn::Suspend(signal)))) => {
                    let value = serde_json::json!({
                        "suspended": true,
                        "correlation_id": signal.correlation_id,
                    });
                    deferred = Some(Deferred::Suspend(signal));
                    ToolOutcome::Succeeded { value }
                }
                // A tool that gave up because the run was cancelled.
                Ok(Ok(Err(_))) if cancel.is_cancelled() => ToolOutcome::Failed {
                    kind: FailureKind::Cancelled,
                    error: "cancelled while running".to_owned(),
                },
                Ok(Ok(Err(error))) => ToolOutcome::Failed {
                    kind: FailureKind::Execution,
                    error: sanitize_error(&error.message),
                },
            },
        };
        let receipt = ExecutionReceipt {
            call_id: call.id.clone(),
            tool_name: tool.name.clone(),
            effect: tool.effect,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            result_fingerprint: match &outcome {
                ToolOutcome::Succeeded { value } if deferred.is_none() => result_fingerprint(value),
                _ => None,
            },
        };
        let settled = SettledCall {
            call,
            effect: tool.effect,
            outcome,
            receipt: Some(receipt),
            pending: matches!(deferred, Some(Deferred::Pending(_))),
        };
        (settled, deferred)
    }
}

fn failed(call: ToolCall, effect: Effect, kind: FailureKind, error: String) -> SettledCall {
    SettledCall {
        call,
        effect,
        outcome: ToolOutcome::Failed { kind, error },
        receipt: None,
        pending: false,
    }
}
