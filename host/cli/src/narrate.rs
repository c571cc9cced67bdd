//! Drives a streamed run: assistant text to one writer, loop notices
//! (tools, feedback, recovering, verdicts, stop reason) to another.

use futures::StreamExt;
use std::io::Write;
use verdict_agent::{AgentError, AgentEvent, AgentResponse, AgentStream, ToolOutcome};
use verdict_policy::{LoopDiagnostics, Phase, Verdict};

/// Where a run's output goes.
pub struct Narrator<'a> {
    /// Assistant text (None: not shown, as with `--json`).
    pub text: Option<&'a mut dyn Write>,
    /// Loop notices.
    pub notes: &'a mut dyn Write,
    /// Prefix of every notice line.
    pub prefix: &'a str,
    /// Prefix of the first text line of a turn.
    pub speaker: &'a str,
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
    pub fn new(text: Option<&'a mut dyn Write>, notes: &'a mut dyn Write, prefix: &'a str) -> Self {
        Self {
            text,
            notes,
            prefix,
            speaker: "",
            mid_line: false,
            last_verdict: None,
            last_phase: None,
        }
    }

    /// Writes one notice line (ending the current text line first).
    pub fn note(&mut self, line: &str) {
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

    fn text(&mut self, delta: &str) {
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
    pub async fn drive(&mut self, mut events: AgentStream) -> Result<AgentResponse, AgentError> {
        while let Some(event) = events.next().await {
            match event {
                AgentEvent::TextDelta(delta) => self.text(&delta),
                AgentEvent::ToolCallAdmitted { call_id, name } => {
                    self.note(&format!("tool call {name} ({call_id}) admitted"));
                }
                AgentEvent::ToolCallSettled(settled) => {
                    let what = match &settled.outcome {
                        ToolOutcome::Succeeded { .. } => "succeeded".to_owned(),
                        ToolOutcome::Failed { error, .. } => format!("failed: {error}"),
                        ToolOutcome::NotStarted { message } => format!("not run: {message}"),
                        ToolOutcome::Unknown { error } => format!("outcome unknown: {error}"),
                    };
                    self.note(&format!(
                        "tool call {} ({}) {what}",
                        settled.call.name, settled.call.id
                    ));
                }
                AgentEvent::LoopNotice { feedback } => {
                    self.note("feedback given to the model:");
                    for line in feedback.lines() {
                        self.note(&format!("  {line}"));
                    }
                }
                AgentEvent::IterationComplete { r#loop, .. } => {
                    self.end_text_line();
                    if let Some(diag) = r#loop {
                        self.diagnostics(&diag);
                    }
                }
                AgentEvent::ResponseComplete(response) => {
                    self.end_text_line();
                    if let Some(diag) = &response.r#loop {
                        self.diagnostics(diag);
                    }
                    return Ok(*response);
                }
                AgentEvent::Failed(error) => {
                    self.end_text_line();
                    return Err(error);
                }
            }
        }
        Err(AgentError::Cancelled)
    }
}
