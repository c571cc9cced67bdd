//! The interactive console's state: one agent, the policy the next
//! execution uses, the tenant's checkers, and whether an execution runs.
//!
//! Output of commands is returned as text (so it can be tested); the
//! execution itself streams through a [`Narrator`] on stdout.

pub mod command;
pub mod input;

use crate::config::ConfigFile;
use crate::narrate::Narrator;
use crate::run_report;
use crate::session::{Session, load_checkers};
use crate::stdout::{FirstError, Watched};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use verdict::VerifierHost;
use verdict::{AgentError, AgentResponse, Checkers, RunError, RunOptions};
use verdict::{LoopDiagnostics, LoopPolicy, Phase};

/// Which loop policy the next execution uses.
#[derive(Debug, Clone)]
pub enum PolicySource {
    /// The configuration file's `[loop_policy]` (off when absent).
    Config,
    /// `/policy set FILE`: thresholds from FILE, in memory only; the
    /// checkers stay the host's (the tenant's verifiers).
    Override(LoopPolicy, PathBuf),
    /// `/policy off`.
    Off,
}

/// An execution that ended on the error path (failed or cancelled) before
/// its loop decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The execution, as its diagnostics name it.
    pub execution_id: String,
    /// True when it was cancelled.
    pub cancelled: bool,
    /// The error.
    pub message: String,
}

impl Failure {
    /// The failure of `result`'s execution, if it failed after starting.
    fn of(result: &Result<AgentResponse, RunError>) -> Option<Self> {
        let error = result.as_ref().err()?;
        let settled = error.settled.as_ref()?;
        Some(Self {
            execution_id: settled.execution_id.clone(),
            cancelled: error.error == AgentError::Cancelled,
            message: error.to_string(),
        })
    }
}

/// The console session.
pub struct Console {
    file: ConfigFile,
    host: VerifierHost,
    session: Session,
    policy: PolicySource,
    busy: Arc<AtomicBool>,
    running: Option<RunOptions>,
    stdout_failed: FirstError,
    /// How the latest execution ended, when it failed or was cancelled.
    failure: Arc<Mutex<Option<Failure>>>,
}

const BUSY: &str = "refused: an execution is running (allowed only when idle)";

/// Reads a policy override: JSON (`.json`) or TOML thresholds, validated.
fn read_policy(path: &Path) -> Result<LoopPolicy, String> {
    let text =
        crate::files::read_text(path, crate::files::Bound::POLICY).map_err(|e| e.to_string())?;
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let policy = if is_json {
        LoopPolicy::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))?
    } else {
        let policy: LoopPolicy =
            toml::from_str(&text).map_err(|e| format!("{}: {}", path.display(), e.message()))?;
        policy
            .validate()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        policy
    };
    Ok(policy)
}

/// The `/context loop` text of `diag`; `failure` is how the latest
/// execution ended when it failed or was cancelled (it applies when it is
/// the execution `diag` describes).
pub fn context_text(diag: Option<&LoopDiagnostics>, failure: Option<&Failure>) -> String {
    let Some(d) = diag else {
        return "no managed execution yet (or the last one ran without a policy)".into();
    };
    let snake = |v: serde_json::Value| {
        v.as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| "none".into())
    };
    let failure = failure.filter(|f| f.execution_id == d.execution_id);
    let phase = snake(serde_json::json!(d.phase));
    let (phase, reason) = match (d.reason, failure) {
        (Some(reason), _) => (phase, snake(serde_json::json!(reason))),
        // The execution ended on its error path before the loop decided:
        // its diagnostics stay as they were, but nothing is running.
        (None, Some(f)) if f.cancelled => (
            format!("ended by cancellation (the loop had not decided; it was {phase})"),
            "none (the execution was cancelled)".to_owned(),
        ),
        (None, Some(f)) => (
            format!("ended by an error (the loop had not decided; it was {phase})"),
            format!("none (the execution failed: {})", f.message),
        ),
        (None, None) => (phase, "none (still running)".to_owned()),
    };
    let mut lines = vec![
        format!("phase: {phase}"),
        format!("stopping reason: {reason}"),
        format!(
            "recovery: {}/{} attempts used",
            d.recovery_attempts_used, d.recovery_attempts_allowed
        ),
    ];
    if d.phase == Phase::InputNeeded {
        let feedback = d
            .last_verdict
            .as_ref()
            .and_then(|v| v.feedback.clone())
            .unwrap_or_else(|| "no feedback given".into());
        lines.push(format!(
            "input needed: the verifier still lacks evidence: {feedback}"
        ));
    }
    if let (Some(_), Some(f)) = (d.reason, failure) {
        lines.push(format!("then the execution failed: {}", f.message));
    }
    lines.push(format!("diagnostics: {}", d.to_json()));
    lines.join("\n")
}

impl Console {
    /// A console over `session`, built from `file`.
    pub fn new(file: ConfigFile, host: VerifierHost, session: Session) -> Self {
        Self {
            file,
            host,
            session,
            policy: PolicySource::Config,
            busy: Arc::new(AtomicBool::new(false)),
            running: None,
            stdout_failed: FirstError::default(),
            failure: Arc::default(),
        }
    }

    /// The first failed write of an execution's output to stdout, if any
    /// (that execution was cancelled: nobody reads it).
    pub fn output_error(&self) -> Option<std::io::Error> {
        self.stdout_failed.take()
    }

    /// True while an execution runs.
    pub fn is_busy(&self) -> bool {
        self.busy.load(Ordering::SeqCst)
    }

    /// The policy of the next execution (its checkers are the tenant's).
    fn effective_policy(&self) -> Option<LoopPolicy> {
        match &self.policy {
            PolicySource::Config => self.file.config.loop_policy.clone(),
            PolicySource::Override(policy, _) => Some(policy.clone()),
            PolicySource::Off => None,
        }
    }

    /// Starts an execution of `task` on `runtime`; its output streams to
    /// stdout and ends with the summary.
    pub fn start(&mut self, runtime: &tokio::runtime::Handle, task: String) -> String {
        if self.busy.swap(true, Ordering::SeqCst) {
            return "refused: an execution is already running".into();
        }
        let options = match self.effective_policy() {
            Some(policy) => RunOptions::default()
                .with_policy(policy)
                .with_checkers(self.session.checkers.clone()),
            None => RunOptions::default().without_policy(),
        };
        self.running = Some(options.clone());
        let cancel = options.cancel.clone();
        // `stream` spawns the run on the current runtime.
        let _enter = runtime.enter();
        let events = self.session.agent.stream(task, options);
        let busy = self.busy.clone();
        let failure = self.failure.clone();
        let totals = self.session.totals.clone();
        // The summary reports this execution's checker calls only.
        *totals.lock().unwrap_or_else(|p| p.into_inner()) = Default::default();
        // Nobody reads the output any more: stop the execution.
        let watched = || {
            let cancel = cancel.clone();
            Watched::new(std::io::stdout(), self.stdout_failed.clone(), move || {
                cancel.cancel()
            })
        };
        let (mut text, mut notes) = (watched(), watched());
        runtime.spawn(async move {
            let mut narrator = Narrator::new(Some(&mut text), &mut notes, "[verdict] ");
            let result = narrator.drive(events).await;
            *failure.lock().unwrap_or_else(|p| p.into_inner()) = Failure::of(&result);
            let totals = totals.lock().unwrap_or_else(|p| p.into_inner()).clone();
            for line in run_report::summary(&result, &totals) {
                narrator.note(&line);
            }
            busy.store(false, Ordering::SeqCst);
        });
        String::new()
    }

    /// Cancels the running execution, if any.
    pub fn cancel(&self) -> bool {
        match (&self.running, self.is_busy()) {
            (Some(options), true) => {
                options.cancel.cancel();
                true
            }
            _ => false,
        }
    }

    /// `/tools`.
    pub fn tools(&self) -> String {
        crate::tool_rows::table(&self.session.tools())
    }

    /// `/context loop`.
    pub fn context_loop(&self) -> String {
        let failure = self
            .failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        context_text(
            self.session.agent.loop_diagnostics().as_ref(),
            failure.as_ref(),
        )
    }

    /// `/policy show`.
    pub fn policy_show(&self) -> String {
        let source = match &self.policy {
            PolicySource::Config if self.file.config.loop_policy.is_some() => {
                format!("from {}", self.file.path.display())
            }
            PolicySource::Config => "off (the configuration has no [loop_policy])".into(),
            PolicySource::Override(_, path) => {
                format!("override from {} (in memory only)", path.display())
            }
            PolicySource::Off => "off (/policy off)".into(),
        };
        let mut lines = vec![format!("policy: {source}")];
        if let Some(policy) = self.effective_policy() {
            let checkers = &self.session.checkers;
            lines.push(format!(
                "thresholds: {}",
                serde_json::to_string(&policy).unwrap_or_default()
            ));
            lines.push(format!(
                "completion checker: {}",
                checkers
                    .completion
                    .as_ref()
                    .map(|c| format!("sha256:{}", c.identity()))
                    .unwrap_or_else(|| "none (answers are not verified)".into())
            ));
            if let Some(progress) = &checkers.progress {
                lines.push(format!("progress checker: sha256:{}", progress.identity()));
            }
        }
        lines.join("\n")
    }

    /// `/policy set FILE`.
    pub fn policy_set(&mut self, path: &Path) -> String {
        if self.is_busy() {
            return BUSY.into();
        }
        match read_policy(path) {
            Ok(policy) => {
                self.policy = PolicySource::Override(policy, path.to_owned());
                format!(
                    "policy override from {} applied to the next execution (in memory only; checkers stay the tenant's)",
                    path.display()
                )
            }
            Err(error) => format!("error: {error}"),
        }
    }

    /// `/policy off`.
    pub fn policy_off(&mut self) -> String {
        if self.is_busy() {
            return BUSY.into();
        }
        self.policy = PolicySource::Off;
        "policy off: the next execution runs unmanaged".into()
    }

    /// `/save FILE`.
    pub fn save(&self, path: &Path) -> String {
        if self.is_busy() {
            return BUSY.into();
        }
        let json = self.session.agent.save_conversation();
        let bound = crate::files::Bound::CONVERSATION;
        let over = if json.len() as u64 > bound.bytes {
            " (over the bound /load reads: it cannot be loaded back)"
        } else {
            ""
        };
        match std::fs::write(path, &json) {
            Ok(()) => format!(
                "saved {} messages to {}{over}",
                self.session.agent.conversation().len(),
                path.display()
            ),
            Err(e) => format!("error: cannot write {}: {e}", path.display()),
        }
    }

    /// `/load FILE`.
    pub fn load(&self, path: &Path) -> String {
        if self.is_busy() {
            return BUSY.into();
        }
        let json = match crate::files::read_text(path, crate::files::Bound::CONVERSATION) {
            Ok(json) => json,
            Err(e) => return format!("error: {e}"),
        };
        match self.session.agent.load_conversation(&json) {
            Ok(()) => format!(
                "loaded {} messages from {}",
                self.session.agent.conversation().len(),
                path.display()
            ),
            Err(e) => format!("error: {e}"),
        }
    }

    /// `/verifier reload`: reads the tenant's `.wasm` again for the next
    /// execution.
    pub fn verifier_reload(&mut self) -> String {
        if self.is_busy() {
            return BUSY.into();
        }
        let Some(tenant) = self.session.tenant.clone() else {
            return "no tenant: nothing to reload".into();
        };
        let digest = |c: &Checkers| c.completion.as_ref().map(|c| c.identity());
        let before = digest(&self.session.checkers);
        match load_checkers(
            &self.file,
            &self.host,
            Some(&tenant),
            &self.session.totals,
            None,
        ) {
            Ok(checkers) => {
                let after = digest(&checkers);
                self.session.checkers = checkers;
                let show = |d: &Option<String>| {
                    d.as_deref()
                        .map(|d| format!("sha256:{d}"))
                        .unwrap_or_else(|| "none".into())
                };
                format!(
                    "verifiers of tenant {tenant} reloaded for the next execution: completion {} -> {}{}",
                    show(&before),
                    show(&after),
                    if before == after { " (unchanged)" } else { "" }
                )
            }
            Err(e) => format!("error: {e} (the previous verifiers stay)"),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use verdict::{Counters, StopReason};

    fn diag(phase: Phase, reason: Option<StopReason>) -> LoopDiagnostics {
        LoopDiagnostics {
            execution_id: "agent-1-exec-1".into(),
            phase,
            reason,
            status: None,
            recovery_attempts_used: 1,
            recovery_attempts_allowed: 2,
            last_trigger: None,
            tracking_bound: None,
            checker_error: None,
            last_verdict: None,
            check_records: Vec::new(),
            counters: Counters::default(),
        }
    }

    fn failure(execution_id: &str, cancelled: bool) -> Failure {
        Failure {
            execution_id: execution_id.into(),
            cancelled,
            message: if cancelled {
                "the run was cancelled".into()
            } else {
                "model call failed: boom".into()
            },
        }
    }

    #[test]
    fn a_failed_or_cancelled_execution_is_not_shown_running() {
        let running = diag(Phase::Recovering, None);
        let text = context_text(Some(&running), Some(&failure("agent-1-exec-1", false)));
        assert!(text.starts_with(
            "phase: ended by an error (the loop had not decided; it was recovering)\n\
             stopping reason: none (the execution failed: model call failed: boom)\n"
        ));
        let text = context_text(Some(&running), Some(&failure("agent-1-exec-1", true)));
        assert!(text.contains("phase: ended by cancellation"));
        assert!(text.contains("stopping reason: none (the execution was cancelled)"));
        for text in [
            context_text(
                Some(&diag(Phase::Running, None)),
                Some(&failure("agent-1-exec-1", true)),
            ),
            context_text(
                Some(&diag(Phase::Running, None)),
                Some(&failure("agent-1-exec-1", false)),
            ),
        ] {
            assert!(!text.contains("phase: running"), "{text}");
            assert!(!text.contains("still running"), "{text}");
        }
        // A failure of another execution does not apply; a live one runs.
        let text = context_text(Some(&running), Some(&failure("agent-1-exec-0", true)));
        assert!(text.contains("phase: recovering\nstopping reason: none (still running)"));
        // A decided loop keeps its phase and reason; the failure is added.
        let stopped = diag(Phase::Complete, Some(StopReason::Completed));
        let text = context_text(Some(&stopped), Some(&failure("agent-1-exec-1", true)));
        assert!(text.contains("phase: complete\nstopping reason: completed"));
        assert!(text.contains("then the execution failed: the run was cancelled"));
    }
}
