//! The virtual object: one per conversation. Its exclusive `execute`
//! handler is the conversation's lease (Restate runs one at a time per
//! key and queues the others); its shared `status` handler reads an
//! execution's record while it runs.

use std::sync::Arc;

use restate_sdk::prelude::*;
use verdict_agent::{Agent, RunOptions};
use verdict_policy::{FEEDBACK_LABEL, LoopDiagnostics};
use verdict_providers::Message;

use crate::error::DurableError;
use crate::journal::Journal;
use crate::pump::{Tally, perform};
use crate::record::{
    CONVERSATION_KEY, ExecutionRecord, ExecutionState, Submission, TENANT_KEY, check_id,
    execution_key,
};
use crate::tenants::Tenants;

/// The Restate service name of the conversation object.
pub const SERVICE: &str = "Conversation";

/// Serves agent executions: one virtual object per conversation.
pub struct ConversationObject {
    tenants: Arc<Tenants>,
}

impl ConversationObject {
    /// The object running the agents of `tenants` (a [`crate::Blueprint`]
    /// for one agent without a tenant name).
    pub fn new(tenants: impl Into<Tenants>) -> Self {
        Self {
            tenants: Arc::new(tenants.into()),
        }
    }
}

#[restate_sdk::object(name = "Conversation")]
impl ConversationObject {
    /// Runs one managed execution on the conversation; returns its record.
    /// A submission whose execution id was seen before returns the record
    /// kept then (it never runs twice).
    #[handler]
    async fn execute(
        &self,
        ctx: ObjectContext<'_>,
        submission: Json<Submission>,
    ) -> Result<Json<ExecutionRecord>, HandlerError> {
        let Json(submission) = submission;
        check_id("execution id", &submission.execution_id)
            .map_err(|e| TerminalError::new(e.to_string()))?;
        let conversation = ctx.key().to_owned();
        let key = execution_key(&submission.execution_id);
        if let Some(Json(record)) = ctx.get::<Json<ExecutionRecord>>(&key).await? {
            return Ok(Json(record));
        }
        let execution_id = format!("{conversation}/{}", submission.execution_id);
        let mut record = ExecutionRecord::start(&execution_id, &conversation);
        // The tenant: the one named, else the only one; a conversation
        // stays with the tenant of its first execution.
        let pinned = ctx.get::<String>(TENANT_KEY).await?;
        let picked = self
            .tenants
            .pick(submission.tenant.as_deref().or(pinned.as_deref()))
            .and_then(|(tenant, blueprint)| match (&pinned, &tenant) {
                (Some(pinned), Some(tenant)) if pinned != tenant => Err(format!(
                    "conversation {conversation} belongs to tenant {pinned:?}, not {tenant:?}"
                )),
                _ => Ok((tenant, blueprint)),
            });
        let (tenant, blueprint) = match picked {
            Ok(picked) => picked,
            Err(refusal) => {
                record.state = ExecutionState::Failed;
                record.error = Some(refusal);
                ctx.set(&key, Json(record.clone()));
                return Ok(Json(record));
            }
        };
        if pinned.is_none()
            && let Some(tenant) = &tenant
        {
            ctx.set(TENANT_KEY, tenant.clone());
        }
        record.tenant.clone_from(&tenant);
        ctx.set(&key, Json(record.clone()));

        let (journal, mut steps) = Journal::channel();
        let saved = ctx.get::<String>(CONVERSATION_KEY).await?;
        let agent = blueprint.build(&journal).and_then(|agent| match &saved {
            Some(saved) => agent
                .load_conversation(saved)
                .map(|()| agent)
                .map_err(|e| DurableError::Build(format!("the saved conversation: {e}"))),
            None => Ok(agent),
        });
        let agent = match agent {
            Ok(agent) => agent,
            Err(error) => {
                record.state = ExecutionState::Failed;
                record.error = Some(error.to_string());
                ctx.set(&key, Json(record.clone()));
                return Ok(Json(record));
            }
        };
        let before = agent.conversation().len();
        let mut tally = Tally::default();
        let result = {
            let mut run = std::pin::pin!(agent.run(submission.prompt, RunOptions::default()));
            loop {
                tokio::select! {
                    biased;
                    result = &mut run => break result,
                    Some(step) = steps.recv() => {
                        let model = step.is_model();
                        if let Err(error) = perform(&ctx, &execution_id, &mut tally, step).await {
                            // Cancelled through Restate, or a journal that
                            // does not match: the record says so.
                            record.state = ExecutionState::Failed;
                            record.error = Some(error.to_string());
                            ctx.set(&key, Json(record.clone()));
                            return Err(error.into());
                        }
                        if !model {
                            // What `status` shows while the execution runs.
                            fill(&mut record, &tally, snapshot(&agent, &execution_id));
                            ctx.set(&key, Json(record.clone()));
                        }
                    }
                }
            }
        };
        let diagnostics = match &result {
            Ok(response) => {
                record.state = ExecutionState::Finished;
                record.output.clone_from(&response.output_text);
                response.loop_diagnostics.clone()
            }
            Err(error) => {
                record.state = ExecutionState::Failed;
                record.error = Some(error.error.to_string());
                error
                    .settled
                    .as_ref()
                    .and_then(|s| s.loop_diagnostics.clone())
            }
        };
        fill(&mut record, &tally, relabel(diagnostics, &execution_id));
        let conversation_now = agent.conversation();
        record.notices = conversation_now
            .iter()
            .skip(before)
            .filter_map(|m| match m {
                Message::User { text } if text.starts_with(FEEDBACK_LABEL) => Some(text.clone()),
                _ => None,
            })
            .collect();
        ctx.set(CONVERSATION_KEY, agent.save_conversation());
        ctx.set(&key, Json(record.clone()));
        Ok(Json(record))
    }

    /// The record of execution `execution_id` (the part after the
    /// conversation), or null when there is none.
    #[handler]
    async fn status(
        &self,
        ctx: SharedObjectContext<'_>,
        execution_id: String,
    ) -> Result<Json<Option<ExecutionRecord>>, HandlerError> {
        let record = ctx
            .get::<Json<ExecutionRecord>>(&execution_key(&execution_id))
            .await?;
        Ok(Json(record.map(|Json(r)| r)))
    }
}

/// The agent's diagnostics now.
fn snapshot(agent: &Agent, execution_id: &str) -> Option<LoopDiagnostics> {
    relabel(agent.loop_diagnostics(), execution_id)
}

/// Diagnostics under the durable execution's id (the agent's own id is
/// per process, and a replay in another process must store the same
/// record).
fn relabel(diagnostics: Option<LoopDiagnostics>, execution_id: &str) -> Option<LoopDiagnostics> {
    diagnostics.map(|mut d| {
        execution_id.clone_into(&mut d.execution_id);
        d
    })
}

fn fill(record: &mut ExecutionRecord, tally: &Tally, diagnostics: Option<LoopDiagnostics>) {
    record.diagnostics = diagnostics;
    record.model_calls = tally.model_calls;
    record.tool_calls = tally.tool_calls;
    record.checks = tally.checks;
    record.uncertain.clone_from(&tally.uncertain);
    record.reruns.clone_from(&tally.reruns);
}
