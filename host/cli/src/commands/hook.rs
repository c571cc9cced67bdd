//! `verdict hook claude-code`: the command hook Claude Code runs at
//! `Stop` and `SubagentStop` (see [`crate::claude_code`]).

use super::HostArgs;
use crate::claude_code::state::BlockCount;
use crate::claude_code::transcript::read_tail;
use crate::claude_code::{Decision, HookInput, Judgement, decide, packet};
use crate::config::{ConfigFile, TenantsConfig};
use crate::config::{HookConfig, load_hook};
use crate::exit::Exit;
use anyhow::Context;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use verdict::records::{RecordDir, Recorder};
use verdict::{CheckContext, LoopPolicy};

/// The hook input read at most (Claude Code's is a few hundred bytes).
const MAX_INPUT_BYTES: u64 = 1024 * 1024;

/// Arguments of `verdict hook`.
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    #[command(subcommand)]
    command: HookCommand,
}

#[derive(Debug, clap::Subcommand)]
enum HookCommand {
    /// Claude Code's `Stop` / `SubagentStop` command hook: reads the hook
    /// input on stdin, checks the session with the tenant's verifier,
    /// and prints `{"decision": "block", "reason": FEEDBACK}` while it is
    /// not complete (nothing to allow the stop).
    ClaudeCode(ClaudeCodeArgs),
}

/// Arguments of `verdict hook claude-code`.
#[derive(Debug, clap::Args)]
pub struct ClaudeCodeArgs {
    /// The configuration: `[tenants.*]`, `[loop_policy]` (its
    /// max_recovery_attempts bounds the blocks per stop) and
    /// `[claude_code]`.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// The tenant whose verifier judges (default: `[claude_code] tenant`,
    /// else the only one).
    #[arg(long, value_name = "T")]
    tenant: Option<String>,
    /// Record each check into this directory (replay with `verdict replay`).
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
    /// The whole check's deadline in milliseconds (default 30000; keep it
    /// under the hook's `timeout` in settings.json).
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    timeout_ms: u64,
    /// Where the blocks per session are counted (default: the cache
    /// directory's `claude-code/`).
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Print the settings.json snippet that installs this hook, and exit.
    #[arg(long)]
    print_settings: bool,
    #[command(flatten)]
    host: HostArgs,
}

/// Runs `verdict hook`. A decision exits 0 (Claude Code reads stdout); a
/// hook that cannot run at all (bad configuration, input that is not a
/// hook's) exits 1, which Claude Code shows the user without blocking.
pub fn run(args: HookArgs) -> anyhow::Result<Exit> {
    let HookCommand::ClaudeCode(args) = args.command;
    match claude_code(&args) {
        Ok(exit) => Ok(exit),
        Err(error) => {
            crate::stdout::note_line(format_args!("error: verdict hook claude-code: {error:#}"));
            Ok(Exit::NotComplete)
        }
    }
}

fn claude_code(args: &ClaudeCodeArgs) -> anyhow::Result<Exit> {
    let file = load_hook(&args.config)?;
    if args.print_settings {
        crate::outln!("{}", settings(args)?)?;
        return Ok(Exit::Complete);
    }
    let input = read_input()?;
    let section = &file.config.claude_code;
    let tenant = tenant(&file, args.tenant.as_deref())?;
    let max_blocks = file
        .config
        .loop_policy
        .as_ref()
        .map_or(LoopPolicy::default().max_recovery_attempts, |p| {
            p.max_recovery_attempts
        });
    let state_dir = args
        .state_dir
        .clone()
        .or_else(|| args.host.cache_dir().map(|d| d.join("claude-code")))
        .unwrap_or_else(|| std::env::temp_dir().join("verdict-claude-code"));
    let count = BlockCount::of(&state_dir, &input.session_id);
    // A stop that is not the continuation of a blocked one starts afresh.
    let blocks = if input.stop_hook_active {
        count.get()
    } else {
        0
    };

    let judgement = judge(args, &file, &tenant, &input);
    let (decision, keep) = decide(&judgement, blocks, max_blocks, section.on_error);
    if keep == 0 {
        count.clear();
    } else {
        count
            .set(keep)
            .with_context(|| format!("cannot keep the block count in {}", state_dir.display()))?;
    }
    match &decision {
        Decision::Allow { note } | Decision::Block { note, .. } => {
            crate::stdout::note_line(format_args!("{note}"));
        }
    }
    if let Some(text) = decision.stdout() {
        crate::outln!("{text}")?;
    }
    Ok(Exit::Complete)
}

/// Checks the session: reads its transcript, builds the packet, asks the
/// tenant's completion verifier within the deadline.
fn judge(
    args: &ClaudeCodeArgs,
    file: &ConfigFile<HookConfig>,
    tenant: &str,
    input: &HookInput,
) -> Judgement {
    match try_judge(args, file, tenant, input) {
        Ok(judgement) => judgement,
        Err(error) => Judgement::Error(format!("{error:#}")),
    }
}

fn try_judge(
    args: &ClaudeCodeArgs,
    file: &ConfigFile<HookConfig>,
    tenant: &str,
    input: &HookInput,
) -> anyhow::Result<Judgement> {
    let section = &file.config.claude_code;
    let path = input
        .transcript()
        .context("the hook input names no transcript_path")?;
    let transcript = read_tail(
        path,
        section
            .max_transcript_bytes
            .unwrap_or(crate::config::hook_defaults::MAX_TRANSCRIPT_BYTES),
        section
            .max_entries
            .unwrap_or(crate::config::hook_defaults::MAX_ENTRIES),
    )?;
    if transcript.cut {
        crate::stdout::note_line(format_args!(
            "note: {} is over [claude_code] max_transcript_bytes or max_entries: only its end was read",
            path.display()
        ));
    }
    if transcript.skipped_lines > 0 {
        crate::stdout::note_line(format_args!(
            "note: {} transcript line(s) were not JSON and were skipped",
            transcript.skipped_lines
        ));
    }
    let packet = packet::build(
        &input.session_id,
        &transcript,
        input.last_assistant_message.as_deref(),
        &section.tools,
    )
    .context("the transcript makes no valid packet")?;

    let host = args.host.host()?;
    let recorder = match &args.record {
        Some(dir) => Some(Arc::new(
            Recorder::open(RecordDir::new(dir))
                .with_context(|| format!("--record {}", dir.display()))?,
        )),
        None => None,
    };
    let totals = crate::session::Totals::default();
    let checkers =
        crate::session::load_checkers(file, &host, Some(tenant), &totals, recorder.as_ref())?;
    let checker = checkers.completion.with_context(|| {
        format!(
            "{}: tenant {tenant} has no completion verifier",
            file.path.display()
        )
    })?;
    let deadline = Duration::from_millis(args.timeout_ms);
    let runtime = super::runtime()?;
    let answer = runtime.block_on(async {
        let ctx = CheckContext::new().with_deadline(std::time::Instant::now() + deadline);
        tokio::time::timeout(deadline, checker.check(&packet, &ctx)).await
    });
    if let Some(recorder) = &recorder {
        recorder
            .flush()
            .context("the check record was not written")?;
    }
    Ok(match answer {
        Err(_) => Judgement::Error(format!("the check took longer than {} ms", args.timeout_ms)),
        Ok(Err(error)) => Judgement::Error(error.to_string()),
        Ok(Ok(verdict)) if verdict.complete => Judgement::Complete(verdict.reason.clone()),
        Ok(Ok(verdict)) => Judgement::Incomplete {
            feedback: verdict.feedback.clone(),
            reason: verdict.reason.clone(),
        },
    })
}

fn read_input() -> anyhow::Result<HookInput> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .context("cannot read the hook input on stdin")?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        anyhow::bail!("the hook input on stdin is over {MAX_INPUT_BYTES} bytes");
    }
    serde_json::from_slice(&bytes).context(
        "the input on stdin is not a Claude Code hook's JSON (it needs at least session_id)",
    )
}

fn tenant(file: &ConfigFile<HookConfig>, wanted: Option<&str>) -> anyhow::Result<String> {
    let tenants = file.config.tenants();
    let wanted = wanted.or(file.config.claude_code.tenant.as_deref());
    match wanted {
        Some(name) if tenants.contains_key(name) => Ok(name.to_owned()),
        Some(name) => anyhow::bail!(
            "{}: no tenant named {name:?} (configured: {})",
            file.path.display(),
            tenants.keys().cloned().collect::<Vec<_>>().join(", ")
        ),
        None if tenants.len() == 1 => Ok(tenants.keys().next().cloned().unwrap_or_default()),
        None => anyhow::bail!(
            "{} configures {} tenants: choose one with --tenant or [claude_code] tenant",
            file.path.display(),
            tenants.len()
        ),
    }
}

/// The `settings.json` snippet: this binary, this configuration (absolute
/// paths), on `Stop` and `SubagentStop`.
fn settings(args: &ClaudeCodeArgs) -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("cannot find this binary's path")?;
    let config = std::path::absolute(&args.config)
        .with_context(|| format!("cannot resolve {}", args.config.display()))?;
    let mut command = format!(
        "{} hook claude-code --config {}",
        quote(&exe),
        quote(&config)
    );
    if let Some(t) = &args.tenant {
        command.push_str(&format!(" --tenant {}", quote(Path::new(t))));
    }
    if let Some(dir) = &args.record {
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
        command.push_str(&format!(" --record {}", quote(&dir)));
    }
    // Claude Code's own timeout, past the check's deadline.
    let timeout = args.timeout_ms.div_ceil(1000) + 10;
    let hook = serde_json::json!([{"hooks": [{"type": "command", "command": command, "timeout": timeout}]}]);
    let value = serde_json::json!({"hooks": {"Stop": hook, "SubagentStop": hook}});
    Ok(serde_json::to_string_pretty(&value)?)
}

/// A shell word (Claude Code runs a hook's command through a shell).
fn quote(path: &Path) -> String {
    let text = path.to_string_lossy();
    if !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:=@".contains(&b))
    {
        return text.into_owned();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}
