//! The ends of a run besides a final answer: the suspension wrap-up, and
//! the structured-output calls (repair, formatting after a tool-induced
//! stop).

use verdict_providers::{CallContext, Message, ModelRequest, OutputSchema, ToolChoice};

use super::Agent;
use super::events::Events;
use super::options::RunOptions;
use super::response::{RunStatus, SuspendedRun};
use super::routing::Binding;
use super::run::{Progress, add_usage, provider_error};
use crate::error::AgentError;
use crate::tools::Suspension;

/// The label of the wrap-up request after a suspension.
const SUSPENDED_LABEL: &str = "[host suspended]";
/// The label of the repair request for an answer off the output schema.
const REPAIR_LABEL: &str = "[host repair]";
/// The label of the formatting request after a tool-induced stop.
const FORMAT_LABEL: &str = "[host format]";

/// The repair request for a final answer off the schema.
pub(super) fn repair_instruction(error: &str) -> String {
    format!(
        "{REPAIR_LABEL} Your final answer does not match the required JSON Schema ({error}). \
         Reply with only the corrected JSON."
    )
}

/// The formatting request after a tool-induced stop.
pub(super) fn format_instruction(tool: &str) -> String {
    format!(
        "{FORMAT_LABEL} The run ended after the tool `{tool}`. Reply with only the final \
         answer as JSON matching the required schema."
    )
}

impl Agent {
    /// A tool suspended the execution: checkpoint the conversation under its
    /// correlation id, then make one tool-free wrap-up call (an attempt the
    /// budget counts). The completion check does not run.
    pub(super) async fn wrap_up(
        &self,
        progress: &mut Progress,
        binding: &Binding,
        ctx: &CallContext,
        events: &Events,
        signal: Suspension,
    ) -> Result<RunStatus, AgentError> {
        // Messages are plain data with string keys: serialization cannot fail.
        let checkpoint =
            serde_json::to_string(&progress.messages).unwrap_or_else(|_| "[]".to_owned());
        self.state()
            .save_checkpoint(&signal.correlation_id, &checkpoint);
        let because = signal
            .reason
            .as_deref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default();
        let instruction = format!(
            "{SUSPENDED_LABEL} This execution is suspended (correlation id {}){because}. \
             Reply to the user with a brief status; no tools are available.",
            signal.correlation_id
        );
        progress.suspension = Some(SuspendedRun {
            correlation_id: signal.correlation_id,
            reason: signal.reason,
            checkpoint,
        });
        // Tool calls in a wrap-up are not run (and not kept, so the
        // tool-call/result protocol stays whole).
        progress.output = self
            .tool_free_call(progress, binding, ctx, events, instruction, None)
            .await?;
        Ok(RunStatus::Completed)
    }

    /// One structured-output call — a repair of a final answer off the
    /// schema, or the formatting after a tool-induced stop: `instruction`
    /// as a user message, tool-free, with the schema, counted by the
    /// budget; appended as a separate final answer. Returns it.
    pub(super) async fn reformat(
        &self,
        progress: &mut Progress,
        binding: &Binding,
        ctx: &CallContext,
        options: &RunOptions,
        events: &Events,
        instruction: String,
    ) -> Result<String, AgentError> {
        let text = self
            .tool_free_call(
                progress,
                binding,
                ctx,
                events,
                instruction,
                options.output_schema.clone(),
            )
            .await?;
        progress.output.clone_from(&text);
        Ok(text)
    }

    /// One tool-free model call on the conversation so far plus
    /// `instruction` (a labelled user message), counted by the budget. Only
    /// when it answers are the instruction and the answer's text (as an
    /// assistant message; any tool calls in it are neither run nor kept)
    /// appended, so a failed call leaves no unanswered host message behind.
    /// Returns the text.
    async fn tool_free_call(
        &self,
        progress: &mut Progress,
        binding: &Binding,
        ctx: &CallContext,
        events: &Events,
        instruction: String,
        output_schema: Option<OutputSchema>,
    ) -> Result<String, AgentError> {
        let instruction = Message::user(instruction);
        let mut messages = progress.messages.clone();
        messages.push(instruction.clone());
        let request = ModelRequest {
            model: binding.model_name.clone(),
            instructions: self.inner.instructions.clone(),
            messages,
            tools: Vec::new(),
            tool_choice: ToolChoice::None,
            output_schema,
            max_tokens: self.inner.max_tokens,
        };
        let response = self
            .call_model(&binding.model, &request, ctx, events)
            .await
            .map_err(provider_error)?;
        add_usage(&mut progress.usage, &response.usage);
        let text = response.text.unwrap_or_default();
        progress.messages.push(instruction);
        progress.messages.push(Message::Assistant {
            text: Some(text.clone()),
            tool_calls: Vec::new(),
        });
        Ok(text)
    }
}

/// Why `text` is not JSON matching the schema, if it is not.
pub(super) fn schema_error(validator: &jsonschema::Validator, text: &str) -> Option<String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Err(e) => Some(format!("not JSON: {e}")),
        Ok(value) => validator
            .iter_errors(&value)
            .next()
            .map(|e| format!("{} at `{}`", e, e.instance_path)),
    }
}

/// The final answer as JSON, when it matches the schema.
pub(super) fn structured(
    validator: &jsonschema::Validator,
    text: &str,
) -> Option<serde_json::Value> {
    let value = serde_json::from_str(text).ok()?;
    validator.is_valid(&value).then_some(value)
}
