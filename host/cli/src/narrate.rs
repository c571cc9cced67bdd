//! Drives a streamed run: assistant text to one writer, loop notices
//! (tools, feedback, recovering, verdicts, stop reason) to another.

use futures::StreamExt;
use std::io::Write;
use std::time::Duration;
use verdict::{AgentError, AgentEvent, AgentResponse, AgentStream, RunError, ToolOutcome};
use verdict::{LoopDiagnostics, Phase, Verdict};

/// How long a pending call waits before the progress line moves.
const TICK: Duration = Duration::from_millis(200);

/// Where a run's output goes.
pub struct Narrator<'a> {
    /// Assistant text (None: not shown, as with `--json`).
    pub text: Option<&'a mut (dyn Write + Send)>,
    /// Loop notices.
    pub notes: &'a mut (dyn Write + Send),
    /// Prefix of every notice line.
    pub prefix: &'a str,
    /// Prefix of the first text line of a turn.
    pub speaker: &'a str,
    /// Show a progress line while a model or tool call is pending (only
    /// for a terminal: it rewrites its line with `\r`).
    pub spinner: bool,
    spinning: bool,
    pending: Option<String>,
    mid_line: bool,
    last_verdict: Option<Verdict>,
    last_phase: Option<Phase>,
}

fn verdict_line(v: &Verdict) -> String {
    let mut line = format!(
        "verdict: {}",
        if v.complete {
            "true (complete)"
        } else {
            "false (not complete)"
        }
    );
    if let Some(reason) = &v.reason {
        line.push_str(&format!(" - {reason}"));
    }
    line
}

impl<'a> Narrator<'a> {
    /// Text to `text`, notices to `notes` (each line starting with `prefix`).
    pub fn new(
        text: Option<&'a mut (dyn Write + Send)>,
        notes: &'a mut (dyn Write + Send),
        prefix: &'a str,
    ) -> Self {
        Self {
            text,
            notes,
            prefix,
            speaker: "",
            spinner: false,
            spinning: false,
            pending: None,
            mid_line: false,
            last_verdict: None,
            last_phase: None,
        }
    }

    /// Writes one notice line (ending the current text line first).
    pub fn note(&mut self, line: &str) {
        self.clear_spinner();
        self.end_text_line();
        let _ = writeln!(self.notes, "{}{line}", self.prefix);
        let _ = self.notes.flush();
    }

    fn end_text_line(&mut self) {
        if self.mid_line {
            if let Some(text) = self.text.as_mut() {
                let _ = writeln!(text);
                let _ = text.flush();
            }
            self.mid_line = false;
        }
    }

    fn clear_spinner(&mut self) {
        if self.spinning {
            let _ = write!(self.notes, "\r\x1b[2K");
            let _ = self.notes.flush();
            self.spinning = false;
        }
    }

    /// Redraws the progress line for tick `n` (nothing mid-line).
    fn spin(&mut self, n: usize) {
        if !self.spinner || self.mid_line {
            return;
        }
        const FRAMES: [char; 4] = ['|', '/', '-', '\\'];
        let what = self.pending.as_deref().unwrap_or("waiting for the model");
        let _ = write!(
            self.notes,
            "\r\x1b[2K{}{what} {}",
            self.prefix,
            FRAMES[n % FRAMES.len()]
        );
        let _ = self.notes.flush();
        self.spinning = true;
    }

    fn text(&mut self, delta: &str) {
        self.clear_spinner();
        let speaker = self.speaker;
        let Some(text) = self.text.as_mut() else {
            return;
        };
        if !self.mid_line {
            let _ = write!(text, "{speaker}");
        }
        let _ = write!(text, "{delta}");
        let _ = text.flush();
        self.mid_line = !delta.ends_with('\n');
    }

    fn diagnostics(&mut self, diag: &LoopDiagnostics) {
        if diag.last_verdict != self.last_verdict {
            if let Some(v) = &diag.last_verdict {
                self.note(&verdict_line(v));
            }
            self.last_verdict = diag.last_verdict.clone();
        }
        if Some(diag.phase) != self.last_phase {
            if diag.phase == Phase::Recovering {
                self.note(&format!(
                    "recovering (attempt {}/{})",
                    diag.recovery_attempts_used, diag.recovery_attempts_allowed
                ));
            }
            self.last_phase = Some(diag.phase);
        }
    }

    /// Consumes the stream to its last event.
    pub async fn drive(&mut self, mut events: AgentStream) -> Result<AgentResponse, RunError> {
        let mut ticks = 0usize;
        loop {
            let next = tokio::time::timeout(TICK, events.next()).await;
            let Ok(next) = next else {
                ticks += 1;
                self.spin(ticks);
                continue;
            };
            let Some(event) = next else { break };
            match event {
                AgentEvent::TextDelta(delta) => self.text(&delta),
                AgentEvent::ToolCallAdmitted { call_id, name } => {
                    self.note(&format!("tool call {name} ({call_id}) admitted"));
                    self.pending = Some(format!("running {name}"));
                }
                AgentEvent::ToolCallSettled(settled) => {
                    let what = match &settled.outcome {
                        ToolOutcome::Succeeded { .. } => "succeeded".to_owned(),
                        ToolOutcome::Failed { error, .. } => format!("failed: {error}"),
                        ToolOutcome::NotStarted { message } => format!("not run: {message}"),
                        ToolOutcome::Unknown { error } => format!("outcome unknown: {error}"),
                        other => format!("settled: {other:?}"),
                    };
                    self.note(&format!(
                        "tool call {} ({}) {what}",
                        settled.call.name, settled.call.id
                    ));
                    self.pending = None;
                }
                AgentEvent::LoopNotice { feedback } => {
                    self.note("feedback given to the model:");
                    for line in feedback.lines() {
                        self.note(&format!("  {line}"));
                    }
                }
                AgentEvent::IterationComplete {
                    loop_diagnostics, ..
                } => {
                    self.clear_spinner();
                    self.end_text_line();
                    if let Some(diag) = loop_diagnostics {
                        self.diagnostics(&diag);
                    }
                }
                AgentEvent::ResponseComplete(response) => {
                    self.clear_spinner();
                    self.end_text_line();
                    if let Some(diag) = &response.loop_diagnostics {
                        self.diagnostics(diag);
                    }
                    return Ok(*response);
                }
                AgentEvent::Failed(error) => {
                    self.clear_spinner();
                    self.end_text_line();
                    return Err(error);
                }
                // An event this narrator does not know yet says nothing.
                _ => {}
            }
        }
        Err(AgentError::Cancelled.into())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::sync::Arc;
    use verdict::fake::{Script, ScriptedModel, ScriptedTurn};
    use verdict::{Agent, RunOptions};

    async fn narrate(turn: ScriptedTurn, spinner: bool) -> (String, String) {
        let model = ScriptedModel::new(Script::new(vec![turn]));
        let agent = Agent::builder()
            .model(Arc::new(model))
            .model_name("m")
            .build()
            .unwrap();
        let (mut text, mut notes) = (Vec::new(), Vec::new());
        let mut narrator = Narrator::new(Some(&mut text), &mut notes, "# ");
        narrator.spinner = spinner;
        let response = narrator
            .drive(agent.stream("hi", RunOptions::default()))
            .await
            .unwrap();
        assert_eq!(response.output_text, "hello");
        (
            String::from_utf8(text).unwrap(),
            String::from_utf8(notes).unwrap(),
        )
    }

    #[tokio::test]
    async fn a_slow_model_call_shows_a_progress_line_then_clears_it() {
        let (text, notes) = narrate(ScriptedTurn::text("hello").delayed(700), true).await;
        assert_eq!(text, "hello\n");
        assert!(
            notes.contains("\r\x1b[2K# waiting for the model "),
            "{notes:?}"
        );
        assert!(
            notes.ends_with("\r\x1b[2K"),
            "cleared before the text: {notes:?}"
        );
    }

    #[tokio::test]
    async fn no_progress_line_when_disabled() {
        let (text, notes) = narrate(ScriptedTurn::text("hello").delayed(300), false).await;
        assert_eq!(text, "hello\n");
        assert_eq!(notes, "");
    }
}
