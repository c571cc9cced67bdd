//! One tool: name, JSON Schema for its arguments, declared effect, deadline
//! and the async function that runs it.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use verdict_policy::{CancelHandle, Effect};
use verdict_providers::ToolDefinition;

use super::error::{ToolDefinitionError, ToolError};
use super::pending::ToolReturn;

/// The deadline a tool gets unless it declares one.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(60);

/// What a tool receives besides its arguments.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The provider's call id.
    pub call_id: String,
    /// Cancelled when the execution is cancelled; forward it into IO.
    pub cancel: CancelHandle,
    /// The call's idempotency key when the execution gives one (a durable
    /// execution does: its id and the call's sequence number). A run
    /// repeated after a crash carries the same key: an idempotent tool
    /// passes it to the system it writes to.
    pub idempotency_key: Option<String>,
}

/// A tool's own run function, as [`Tool::layered`] lends it to a layer.
#[derive(Clone)]
pub struct ToolRun(ToolFn);

impl ToolRun {
    /// Runs the tool on `arguments`.
    pub fn run(
        &self,
        arguments: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolReturn, ToolError>> {
        (self.0)(arguments, ctx)
    }
}

impl fmt::Debug for ToolRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ToolRun")
    }
}

type ToolFn = Arc<
    dyn Fn(Value, ToolContext) -> BoxFuture<'static, Result<ToolReturn, ToolError>> + Send + Sync,
>;

/// A tool the model may call.
#[derive(Clone)]
pub struct Tool {
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    pub(crate) parameters: Value,
    pub(crate) validator: Arc<jsonschema::Validator>,
    pub(crate) effect: Effect,
    pub(crate) deadline: Duration,
    pub(crate) run: ToolFn,
    pub(crate) ends_run: bool,
    pub(crate) idempotent: bool,
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("effect", &self.effect)
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// A tool named `name` whose arguments must match the JSON Schema
    /// `parameters`, run by `run`. The effect defaults to
    /// [`Effect::Unknown`] and the deadline to [`DEFAULT_DEADLINE`].
    pub fn new<F, Fut>(
        name: impl Into<String>,
        parameters: Value,
        run: F,
    ) -> Result<Self, ToolDefinitionError>
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        let run = Arc::new(run);
        Self::new_async(name, parameters, move |args, ctx| {
            let run = Arc::clone(&run);
            async move { run(args, ctx).await.map(ToolReturn::Ready) }
        })
    }

    /// A tool that may answer with a pending handle
    /// ([`ToolReturn::Pending`]) and settle later. A final answer while its
    /// result is outstanding stops the run with `pending_async`; the result
    /// is injected into the next execution of the agent (a normal `run` or
    /// [`crate::Agent::continue_with_async_results`]).
    pub fn new_async<F, Fut>(
        name: impl Into<String>,
        parameters: Value,
        run: F,
    ) -> Result<Self, ToolDefinitionError>
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolReturn, ToolError>> + Send + 'static,
    {
        let name = name.into();
        let valid_name = (1..=64).contains(&name.len())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid_name {
            return Err(ToolDefinitionError::InvalidName(name));
        }
        let validator = jsonschema::validator_for(&parameters).map_err(|e| {
            ToolDefinitionError::InvalidSchema {
                name: name.clone(),
                detail: e.to_string(),
            }
        })?;
        Ok(Self {
            name,
            description: None,
            parameters,
            validator: Arc::new(validator),
            effect: Effect::Unknown,
            deadline: DEFAULT_DEADLINE,
            run: Arc::new(move |args, ctx| Box::pin(run(args, ctx))),
            ends_run: false,
            idempotent: false,
        })
    }

    /// Sets the description shown to the model.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Declares the tool's effect. Declare [`Effect::Read`] only for actual
    /// reads.
    pub fn with_effect(mut self, effect: Effect) -> Self {
        self.effect = effect;
        self
    }

    /// A successful call of this tool ends the run (a tool-induced stop):
    /// its result is the final candidate — or, when the run requires an
    /// output schema, one counted formatting call appends a separate final
    /// answer, leaving the calls, arguments and results as they were. The
    /// completion check still decides.
    pub fn ends_run(mut self) -> Self {
        self.ends_run = true;
        self
    }

    /// Declares the tool idempotent: running it twice with the same
    /// [`ToolContext::idempotency_key`] has the effect of running it once.
    /// A durable execution runs such a write again after a crash (with the
    /// same key) instead of stopping with `uncertain_effect`.
    pub fn idempotent(mut self) -> Self {
        self.idempotent = true;
        self
    }

    /// Whether the tool declared itself idempotent.
    pub fn is_idempotent(&self) -> bool {
        self.idempotent
    }

    /// The execution deadline.
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// The same tool (name, schema, effect, deadline, flags) whose runs go
    /// through `layer`: it gets the arguments, the context and the tool's
    /// own run, and decides whether and how to call it (a durable executor
    /// journals around it).
    pub fn layered<L>(&self, layer: L) -> Tool
    where
        L: Fn(Value, ToolContext, ToolRun) -> BoxFuture<'static, Result<ToolReturn, ToolError>>
            + Send
            + Sync
            + 'static,
    {
        let inner = ToolRun(Arc::clone(&self.run));
        Tool {
            run: Arc::new(move |args, ctx| layer(args, ctx, inner.clone())),
            ..self.clone()
        }
    }

    /// Sets the execution deadline.
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The declared effect.
    pub fn effect(&self) -> Effect {
        self.effect
    }

    /// The definition offered to the model.
    pub fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: self.name.clone(),
            description: self.description.clone(),
            parameters: self.parameters.clone(),
        }
    }

    /// The first schema violation of `arguments`, if any.
    pub(crate) fn argument_error(&self, arguments: &Value) -> Option<String> {
        // Valid arguments (the common case) take the validator's fast path,
        // which builds no errors.
        if self.validator.is_valid(arguments) {
            return None;
        }
        self.validator
            .iter_errors(arguments)
            .next()
            .map(|e| format!("{} at `{}`", e, e.instance_path))
    }
}
