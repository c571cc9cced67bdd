//! The ends of a run besides a final answer, and the tool-free calls the
//! host makes: the suspension wrap-up, and the structured-output repair and
//! formatting calls.

use verdict_providers::{Message, OutputSchema, ToolChoice};

use super::execution::Execution;
use super::response::{RunStatus, SuspendedRun};
use crate::error::AgentError;
use crate::tools::Suspension;

/// The label of the wrap-up request after a suspension.
const SUSPENDED_LABEL: &str = "[host suspended]";

impl Execution<'_> {
    /// A tool suspended the execution: checkpoint the conversation under its
    /// correlation id, then make one tool-free wrap-up call (an attempt the
    /// budget counts). The completion check does not run.
    pub(super) async fn wrap_up(&mut self, signal: Suspension) -> Result<RunStatus, AgentError> {
        // Messages are plain data with string keys: serialization cannot fail.
        let checkpoint =
            serde_json::to_string(&self.progress.messages).unwrap_or_else(|_| "[]".to_owned());
        self.agent
            .state()
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
        self.progress.suspension = Some(SuspendedRun {
            correlation_id: signal.correlation_id,
            reason: signal.reason,
            checkpoint,
        });
        // Tool calls in a wrap-up are not run (and not kept, so the
        // tool-call/result protocol stays whole).
        self.progress.output = self.tool_free_call(instruction, None).await?;
        Ok(RunStatus::Completed)
    }

    /// One structured-output call — a repair of a final answer off the
    /// schema, or the formatting after a tool-induced stop: `instruction`
    /// as a user message, tool-free, with the schema, counted by the
    /// budget; appended as a separate final answer. Returns it.
    pub(super) async fn reformat(&mut self, instruction: String) -> Result<String, AgentError> {
        let schema = self.options.output_schema.clone();
        let text = self.tool_free_call(instruction, schema).await?;
        self.progress.output.clone_from(&text);
        Ok(text)
    }

    /// One tool-free model call on the conversation so far plus
    /// `instruction` (a labelled user message), counted by the budget. Only
    /// when it answers are the instruction and the answer's text (as an
    /// assistant message; any tool calls in it are neither run nor kept)
    /// appended, so a failed call leaves no unanswered host message behind.
    /// Returns the text.
    async fn tool_free_call(
        &mut self,
        instruction: String,
        output_schema: Option<OutputSchema>,
    ) -> Result<String, AgentError> {
        let mut request = self.lend_request(Some(Message::user(instruction)));
        let tools = std::mem::take(&mut request.tools);
        request.tool_choice = ToolChoice::None;
        request.output_schema = output_schema;
        let response = self.call_model(&request).await;
        request.tools = tools;
        let instruction = self.give_back(request, true);
        let response = response?;
        self.progress.add_usage(&response.usage);
        let text = response.text.unwrap_or_default();
        self.progress.messages.extend(instruction);
        self.progress.messages.push(Message::Assistant {
            text: Some(text.clone()),
            tool_calls: Vec::new(),
        });
        Ok(text)
    }
}
