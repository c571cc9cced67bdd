//! What an execution's agent is made of. A worker serves many executions
//! at once, each with its own journal, so each gets its own [`verdict_agent::Agent`]
//! built from the blueprint with its effects journaled.

use std::sync::Arc;
use std::time::Duration;

use verdict_agent::{Agent, Checkers, DEFAULT_CHECKER_TIMEOUT, RunOptions, Tool};
use verdict_policy::LoopPolicy;
use verdict_providers::Model;

use crate::effects::{JournaledModel, journaled_checkers, journaled_tool};
use crate::error::DurableError;
use crate::journal::Journal;

/// The agent a worker runs for every conversation: model, tools, loop
/// policy and checkers.
#[derive(Clone)]
pub struct Blueprint {
    model: Arc<dyn Model>,
    model_name: String,
    instructions: Option<String>,
    max_tokens: Option<u32>,
    max_iterations: Option<u32>,
    tools: Vec<Tool>,
    policy: Option<LoopPolicy>,
    checkers: Checkers,
    checker_timeout: Duration,
}

/// A blueprint's parts, as an execution's setup describes them.
pub(crate) struct Parts<'a> {
    pub model_name: &'a str,
    pub instructions: Option<&'a String>,
    pub max_tokens: Option<u32>,
    pub max_iterations: Option<u32>,
    pub checker_timeout: Duration,
    pub tools: &'a [Tool],
    pub policy: Option<&'a LoopPolicy>,
    pub checkers: &'a Checkers,
}

impl std::fmt::Debug for Blueprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Blueprint")
            .field("model_name", &self.model_name)
            .field("tools", &self.tools.len())
            .field("policy", &self.policy.is_some())
            .field("checkers", &self.checkers)
            .finish_non_exhaustive()
    }
}

impl Blueprint {
    /// An agent on `model`, asking for `model_name`.
    pub fn new(model: Arc<dyn Model>, model_name: impl Into<String>) -> Self {
        Self {
            model,
            model_name: model_name.into(),
            instructions: None,
            max_tokens: None,
            max_iterations: None,
            tools: Vec::new(),
            policy: None,
            checkers: Checkers::default(),
            checker_timeout: DEFAULT_CHECKER_TIMEOUT,
        }
    }

    /// The deadline of each completion or progress check (default
    /// [`DEFAULT_CHECKER_TIMEOUT`]). A check's timeout is decided once, in
    /// the journal: every attempt of an execution agrees on it.
    pub fn checker_timeout(mut self, timeout: Duration) -> Self {
        self.checker_timeout = timeout;
        self
    }

    /// The parts an execution's setup describes.
    pub(crate) fn parts(&self) -> Parts<'_> {
        Parts {
            model_name: &self.model_name,
            instructions: self.instructions.as_ref(),
            max_tokens: self.max_tokens,
            max_iterations: self.max_iterations,
            checker_timeout: self.checker_timeout,
            tools: &self.tools,
            policy: self.policy.as_ref(),
            checkers: &self.checkers,
        }
    }

    /// The options of execution `execution_id`'s run.
    pub(crate) fn run_options(&self, execution_id: &str) -> RunOptions {
        RunOptions::default()
            .with_checker_timeout(self.checker_timeout)
            .with_execution_id(execution_id)
    }

    /// System instructions.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The output token limit of each model call.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// The main-loop iteration bound.
    pub fn max_iterations(mut self, max_iterations: u32) -> Self {
        self.max_iterations = Some(max_iterations);
        self
    }

    /// Adds a tool. Declare writes idempotent ([`Tool::idempotent`]) only
    /// when they honour [`verdict_agent::ToolContext::idempotency_key`].
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// The loop policy and the checkers it runs.
    pub fn loop_policy(mut self, policy: LoopPolicy, checkers: Checkers) -> Self {
        self.policy = Some(policy);
        self.checkers = checkers;
        self
    }

    /// The agent of one execution, its effects going through `journal`.
    pub(crate) fn build(&self, journal: &Journal) -> Result<Agent, DurableError> {
        let model = JournaledModel {
            inner: Arc::clone(&self.model),
            journal: journal.clone(),
        };
        let mut builder = Agent::builder()
            .model(Arc::new(model))
            .model_name(self.model_name.clone());
        if let Some(instructions) = &self.instructions {
            builder = builder.instructions(instructions.clone());
        }
        if let Some(n) = self.max_tokens {
            builder = builder.max_tokens(n);
        }
        if let Some(n) = self.max_iterations {
            builder = builder.max_iterations(n);
        }
        for tool in &self.tools {
            builder = builder.tool(journaled_tool(tool, journal));
        }
        if let Some(policy) = &self.policy {
            builder = builder
                .loop_policy(policy.clone())
                .checkers(journaled_checkers(&self.checkers, journal));
        }
        builder
            .build()
            .map_err(|e| DurableError::Build(e.to_string()))
    }
}
