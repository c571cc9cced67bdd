//! The virtual object: one per conversation. Its exclusive `execute`
//! handler is the conversation's lease (Restate runs one at a time per
//! key and queues the others); its shared `status` handler reads an
//! execution's record while it runs.

use std::sync::Arc;

use restate_sdk::prelude::*;
use verdict_policy::FEEDBACK_LABEL;
use verdict_providers::Message;

use crate::drain::drain;
use crate::entry::StateWrite;
use crate::error::DurableError;
use crate::journal::Journal;
use crate::pump::{Draft, Pump, Stop};
use crate::record::{
    CONVERSATION_KEY, ExecutionRecord, ExecutionState, Submission, TENANT_KEY, check_id,
    execution_key,
};
use crate::setup::{Descriptor, Setup};
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
        let pinned = ctx.get::<String>(TENANT_KEY).await?;
        let saved = ctx.get::<String>(CONVERSATION_KEY).await?;
        let mut pump = Pump::new(&ctx, &execution_id, &key);
        let mut record = ExecutionRecord::start(&execution_id, &conversation);

        // Step 0, the setup: the tenant (the one named, else the only one;
        // a conversation stays with the tenant of its first execution) and
        // its agent, or why there is none.
        let (journal, mut steps) = Journal::channel();
        let started = self
            .tenants
            .pick(submission.tenant.as_deref().or(pinned.as_deref()))
            .and_then(|(tenant, blueprint)| match (&pinned, &tenant) {
                (Some(pinned), Some(tenant)) if pinned != tenant => Err(format!(
                    "conversation {conversation} belongs to tenant {pinned:?}, not {tenant:?}"
                )),
                _ => Ok((tenant, blueprint)),
            })
            .and_then(|(tenant, blueprint)| {
                let agent = blueprint.build(&journal).and_then(|agent| match &saved {
                    Some(saved) => agent
                        .load_conversation(saved)
                        .map(|()| agent)
                        .map_err(|e| DurableError::Build(format!("the saved conversation: {e}"))),
                    None => Ok(agent),
                });
                agent
                    .map(|agent| (tenant, blueprint, agent))
                    .map_err(|e| e.to_string())
            });
        let (setup, sets) = match &started {
            Ok((tenant, blueprint, _)) => {
                record.tenant.clone_from(tenant);
                let mut sets = Vec::new();
                if pinned.is_none()
                    && let Some(tenant) = tenant
                {
                    sets.push(StateWrite::Text {
                        key: TENANT_KEY.to_owned(),
                        value: tenant.clone(),
                    });
                }
                sets.push(StateWrite::record(&key, &record));
                let descriptor = Descriptor::of(blueprint, tenant.as_deref());
                (Setup::Ready(Box::new(descriptor)), sets)
            }
            Err(refusal) => {
                let mut failed = record.clone();
                failed.state = ExecutionState::Failed;
                failed.error = Some(refusal.clone());
                (
                    Setup::Refused(refusal.clone()),
                    vec![StateWrite::record(&key, &failed)],
                )
            }
        };
        match pump.setup(setup, sets).await {
            Ok(()) => {}
            Err(stop) => return ended(&mut pump, stop, record).await,
        }
        let (agent, options) = match started {
            Ok((_, blueprint, agent)) => (agent, blueprint.run_options(&execution_id)),
            Err(_) => return Ok(Json(pump.last_record.take().unwrap_or(record))),
        };

        let before = agent.conversation().len();
        let result = {
            let mut run = std::pin::pin!(agent.run(submission.prompt, options));
            loop {
                tokio::select! {
                    biased;
                    result = &mut run => break result,
                    Some(step) = steps.recv() => {
                        // What `status` shows while the execution runs (the
                        // write after every step but a model call).
                        let draft = (!step.is_model()).then(|| Draft {
                            record: record.clone(),
                            diagnostics: agent.loop_diagnostics(),
                        });
                        if let Err(stop) = pump.perform(step, draft).await {
                            return ended(&mut pump, stop, record).await;
                        }
                    }
                }
            }
        };
        let mut tally = pump.tally.clone();
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
        let mut record = Draft {
            record,
            diagnostics,
        }
        .fill(&std::mem::take(&mut tally));
        let conversation_now = agent.conversation();
        record.notices = conversation_now
            .iter()
            .skip(before)
            .filter_map(|m| match m {
                Message::User { text } if text.starts_with(FEEDBACK_LABEL) => Some(text.clone()),
                _ => None,
            })
            .collect();
        let sets = vec![
            StateWrite::Text {
                key: CONVERSATION_KEY.to_owned(),
                value: agent.save_conversation(),
            },
            StateWrite::record(&key, &record),
        ];
        let start = ExecutionRecord::start(&execution_id, &conversation);
        match pump.finish(record, sets).await {
            Ok(record) => Ok(Json(record)),
            Err(stop) => ended(&mut pump, stop, start).await,
        }
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

/// How the handler ends when a step did not go through: a journal that
/// does not match ends the execution as failed, naming the difference
/// ([`drain`]); Restate's refusal (a cancellation) ends it with that error,
/// its record failed.
async fn ended(
    pump: &mut Pump<'_, '_>,
    stop: Stop,
    base: ExecutionRecord,
) -> Result<Json<ExecutionRecord>, HandlerError> {
    match stop {
        Stop::Mismatch(mismatch) => Ok(Json(drain(pump, *mismatch, base).await?)),
        Stop::Terminal(error) => {
            let mut record = pump.last_record.take().unwrap_or(base);
            record.state = ExecutionState::Failed;
            record.error = Some(error.to_string());
            pump.ctx.set(&pump.record_key, Json(record));
            Err(error.into())
        }
    }
}
