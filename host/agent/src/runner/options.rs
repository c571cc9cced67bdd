//! Per-run options: the policy choice, the checkers, the model-call budget,
//! cancellation, the checker deadline and the output schema.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::Value;
use verdict_policy::{CancelHandle, LoopPolicy};

use crate::checkers::Checkers;
use verdict_providers::{AttemptHook, AttemptRefusal, OutputSchema, ProviderError};

/// The policy of one run. The choice is about the policy only: the checkers
/// are the agent's unless the run brings its own
/// ([`RunOptions::with_checkers`]).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum PolicyChoice {
    /// Use the agent's default policy (none if it has none).
    #[default]
    Inherit,
    /// Use this policy instead of the agent's, **with the agent's
    /// checkers** unless [`RunOptions::checkers`] is set.
    Replace(LoopPolicy),
    /// Run without a policy, even if the agent has one.
    Disabled,
}

/// A model-call budget counting every attempt (retries, empty-response
/// retries, repairs and wrap-ups alike). Clones share the count, so one
/// budget can span several runs.
#[derive(Debug, Clone)]
pub struct CallBudget {
    max_calls: u32,
    used: Arc<AtomicU32>,
}

impl CallBudget {
    /// A budget of `max_calls` attempts.
    pub fn new(max_calls: u32) -> Self {
        Self {
            max_calls,
            used: Arc::new(AtomicU32::new(0)),
        }
    }

    /// The budget.
    pub fn max_calls(&self) -> u32 {
        self.max_calls
    }

    /// Attempts made so far.
    pub fn used(&self) -> u32 {
        self.used.load(Ordering::SeqCst).min(self.max_calls)
    }

    /// True when no attempt is left.
    pub fn is_spent(&self) -> bool {
        self.used() >= self.max_calls
    }

    /// The hook that counts attempts and refuses one past the budget.
    pub(crate) fn hook(&self) -> AttemptHook {
        let budget = self.clone();
        Arc::new(move |_attempt| {
            let taken = budget
                .used
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                    (used < budget.max_calls).then_some(used + 1)
                });
            match taken {
                Ok(_) => Ok(()),
                Err(_) => Err(ProviderError::AttemptRefused {
                    reason: AttemptRefusal::BudgetSpent {
                        max_calls: budget.max_calls,
                    },
                }),
            }
        })
    }
}

/// Options of one `run`.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Inherit, replace or disable the loop policy.
    pub policy: PolicyChoice,
    /// The checkers of this run; `None` runs the agent's.
    pub checkers: Option<Checkers>,
    /// The model-call budget, when the run has one.
    pub budget: Option<CallBudget>,
    /// Cancelling it ends the run with [`crate::AgentError::Cancelled`].
    pub cancel: CancelHandle,
    /// The deadline of each completion or progress check, from its start
    /// (passed to the checker in its [`verdict_policy::CheckContext`]). A
    /// wasm verifier's call also ends at its tenant's `timeout_ms`: the
    /// earlier of the two applies, and either is reported as `timeout`.
    pub checker_timeout: Duration,
    /// A JSON Schema the final answer must match. Sent with every request;
    /// in `run` (not `stream`) an invalid final candidate gets one repair
    /// call (counted in the budget) before the completion check.
    pub output_schema: Option<OutputSchema>,
    /// The execution's id (in its packets, diagnostics and async delivery
    /// identities); `None` names it after the agent (`agent-N-exec-M`,
    /// unique in the process). One given must be unique among the agent's
    /// executions. A durable execution gives its own, the same on every
    /// attempt, so its verifiers see the same packet each time.
    pub execution_id: Option<String>,
}

/// The default deadline of a completion or progress check.
pub const DEFAULT_CHECKER_TIMEOUT: Duration = Duration::from_secs(10);

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            policy: PolicyChoice::Inherit,
            checkers: None,
            budget: None,
            cancel: CancelHandle::new(),
            checker_timeout: DEFAULT_CHECKER_TIMEOUT,
            output_schema: None,
            execution_id: None,
        }
    }
}

impl RunOptions {
    /// Replace the agent's policy for this run.
    ///
    /// **The agent's checkers stay**: a replacement policy brings no
    /// checkers of its own. To run other checkers (or none) under it, add
    /// [`RunOptions::with_checkers`] (`Checkers::new()` for none).
    pub fn with_policy(mut self, policy: LoopPolicy) -> Self {
        self.policy = PolicyChoice::Replace(policy);
        self
    }

    /// Run without a policy.
    pub fn without_policy(mut self) -> Self {
        self.policy = PolicyChoice::Disabled;
        self
    }

    /// Run these checkers instead of the agent's.
    pub fn with_checkers(mut self, checkers: Checkers) -> Self {
        self.checkers = Some(checkers);
        self
    }

    /// Count model calls against `budget`.
    pub fn with_budget(mut self, budget: CallBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Cancel the run with `cancel` (the same [`CancelHandle`] a checker's
    /// context carries; keep a clone and call
    /// [`CancelHandle::cancel`]).
    pub fn with_cancel(mut self, cancel: CancelHandle) -> Self {
        self.cancel = cancel;
        self
    }

    /// Requires the final answer to be JSON matching `schema` (named
    /// `name` for providers that want one).
    pub fn with_output_schema(mut self, name: impl Into<String>, schema: Value) -> Self {
        self.output_schema = Some(OutputSchema {
            name: name.into(),
            schema,
        });
        self
    }

    /// Sets the deadline of each check.
    pub fn with_checker_timeout(mut self, timeout: Duration) -> Self {
        self.checker_timeout = timeout;
        self
    }

    /// Names the execution `id` (see [`RunOptions::execution_id`]).
    pub fn with_execution_id(mut self, id: impl Into<String>) -> Self {
        self.execution_id = Some(id.into());
        self
    }
}
