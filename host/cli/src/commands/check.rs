//! `verdict check`: run a verifier on a packet and print the verdict.

use super::HostArgs;
use crate::config::LimitsSection;
use crate::exit::Exit;
use crate::stdout::OutputError;
use anyhow::Context;
use std::path::PathBuf;
use std::sync::Arc;
use verdict::{ArtifactStore, CallMetrics, CheckError, DirStore, LoadError, MemoryStore, Tenant};
use verdict::{CheckContext, CheckPacket};

/// Arguments of `verdict check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The verifier: a .wasm component, builtin:NAME, or
    /// oci://HOST[:PORT]/REPO[:TAG|@sha256:DIGEST].
    #[arg(long, value_name = "WASM")]
    verifier: String,
    /// The check packet (JSON, the spec's camelCase fields).
    #[arg(long, value_name = "FILE")]
    packet: PathBuf,
    /// Tenant id the check runs for.
    #[arg(long, default_value = "default")]
    tenant: String,
    /// The tenant's artifact root (default: no artifacts).
    #[arg(long, value_name = "DIR")]
    artifacts: Option<PathBuf>,
    /// Fuel budget.
    #[arg(long, value_name = "N")]
    fuel: Option<u64>,
    /// Wall-clock deadline in milliseconds.
    #[arg(long, value_name = "N")]
    timeout_ms: Option<u64>,
    /// Memory cap in MiB.
    #[arg(long, value_name = "N")]
    memory_mib: Option<u64>,
    /// Core module instances the verifier may create (default 64).
    #[arg(long, value_name = "N")]
    instances: Option<u64>,
    /// Table elements cap.
    #[arg(long, value_name = "N")]
    table_elements: Option<u64>,
    /// Artifact operations per check.
    #[arg(long, value_name = "N")]
    artifact_reads: Option<u64>,
    /// Largest artifact one read returns, in bytes.
    #[arg(long, value_name = "N")]
    artifact_bytes: Option<u64>,
    /// Most ids one artifact `list` returns.
    #[arg(long, value_name = "N")]
    list_max_entries: Option<u64>,
    /// Sample the progress key instead of the completion check.
    #[arg(long)]
    progress: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Record the check into this directory (`<id>.json`, the artifact
    /// bytes and the component in `cas/`, a line in `audit.jsonl`); replay
    /// it with `verdict replay`.
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
    #[command(flatten)]
    host: HostArgs,
}

/// Runs `verdict check`.
pub fn run(args: CheckArgs) -> anyhow::Result<Exit> {
    // The same ranges as a configuration file's `[tenants.NAME.limits]`.
    let limits = LimitsSection {
        fuel: args.fuel,
        timeout_ms: args.timeout_ms,
        memory_mib: args.memory_mib,
        instances: args.instances,
        table_elements: args.table_elements,
        artifact_reads: args.artifact_reads,
        artifact_bytes: args.artifact_bytes,
        list_max_entries: args.list_max_entries,
    };
    limits
        .validate()
        .map_err(|e| anyhow::anyhow!("--{}: {e}", e.field.replace('_', "-")))?;
    let limits = limits.to_limits();
    let text = crate::files::read_text(&args.packet, crate::files::Bound::PACKET)?;
    // Parsing validates: a packet over a bound is refused, never cut.
    let packet = CheckPacket::from_json(&text)
        .with_context(|| format!("{} is not a valid check packet", args.packet.display()))?;
    let store: Arc<dyn ArtifactStore> = match &args.artifacts {
        Some(dir) => {
            let dir = crate::roots::check(dir, false).context("--artifacts")?;
            Arc::new(
                DirStore::open(&dir).with_context(|| format!("cannot open {}", dir.display()))?,
            )
        }
        None => Arc::new(MemoryStore::new()),
    };
    let tenant = Tenant::new(args.tenant.clone(), limits, store);
    let host = args.host.host()?;
    let mut oci = None;
    let mut oci_bytes = None;
    let loaded = if verdict::registry::is_oci(&args.verifier) {
        let reference = verdict::registry::OciRef::parse(&args.verifier)?;
        match crate::oci::load(&host, &Default::default(), &reference, &[]) {
            Ok(loaded) => {
                crate::stdout::note_line(format_args!("note: {}", loaded.describe(&reference)));
                oci = Some(loaded.to_json(&reference));
                oci_bytes = Some(loaded.fetched.bytes);
                Ok(loaded.verifier)
            }
            Err(crate::oci::OciLoadError::Rejected { error, .. }) => Err(error),
            Err(e) => return Err(e.into()),
        }
    } else if args.verifier.starts_with("builtin:") {
        let bytes = super::read_verifier(&args.verifier)?;
        host.load_bytes(&bytes).map(|(verifier, _)| verifier)
    } else {
        // A file loaded before and unchanged is neither read nor hashed
        // again (the cache's index). A file that cannot be read is reported
        // as before: by reading it.
        match host.load_file(&args.verifier) {
            Err(
                LoadError::Io(_)
                | LoadError::OverLimit {
                    limit: "max_component_bytes",
                    ..
                },
            ) => {
                let bytes = super::read_verifier(&args.verifier)?;
                host.load_bytes(&bytes).map(|(verifier, _)| verifier)
            }
            loaded => loaded,
        }
    };

    let mut record_id = None;
    let (digest, outcome) = match loaded {
        Ok(verifier) => {
            if args.artifacts.is_none() {
                crate::stdout::note_line(format_args!(
                    "note: no --artifacts given: the verifier sees no artifacts"
                ));
            }
            let digest = verifier.digest().to_owned();
            let outcome = if let Some(dir) = &args.record {
                let bytes = match oci_bytes.take() {
                    Some(bytes) => bytes,
                    None => super::read_verifier(&args.verifier)?,
                };
                let (outcome, id) =
                    recorded(&verifier, &tenant, &packet, args.progress, dir, bytes)?;
                crate::stdout::note_line(format_args!(
                    "note: recorded as {}",
                    dir.join(format!("{id}.json")).display()
                ));
                record_id = Some(id);
                outcome
            } else if args.progress {
                let o = verifier.progress_key(&tenant, &packet, &CheckContext::new());
                (o.result.map(VerifierAnswer::Key), o.metrics)
            } else {
                let o = verifier.check(&tenant, &packet, &CheckContext::new());
                (o.result.map(VerifierAnswer::Verdict), o.metrics)
            };
            (Some(digest), outcome)
        }
        Err(err) => (None, (Err(CheckError::from(err)), CallMetrics::default())),
    };
    let (result, metrics) = outcome;
    let exit = match &result {
        Ok(VerifierAnswer::Verdict(v)) if v.complete => Exit::Complete,
        Ok(VerifierAnswer::Verdict(_)) => Exit::NotComplete,
        Ok(VerifierAnswer::Key(_)) => Exit::Complete,
        Err(_) => Exit::CheckerError,
    };
    if args.json {
        let mut value = render_json(&args.tenant, digest.as_deref(), &result, &metrics);
        if let Some(oci) = oci {
            value["oci"] = oci;
        }
        if let Some(id) = record_id {
            value["record"] = id.into();
        }
        crate::outln!("{value}")?;
    } else {
        print_text(&result, &metrics)?;
    }
    Ok(exit)
}

use verdict_server::report::{CheckAnswer as VerifierAnswer, check_json as render_json};

/// A check's answer and what it used.
type Outcome = (Result<VerifierAnswer, CheckError>, CallMetrics);

/// The check, recorded into `dir` (with the component's `bytes`): its
/// answer, metrics and record id, once the record is written.
fn recorded(
    verifier: &verdict::LoadedVerifier,
    tenant: &Tenant,
    packet: &CheckPacket,
    progress: bool,
    dir: &std::path::Path,
    bytes: Vec<u8>,
) -> anyhow::Result<(Outcome, String)> {
    use verdict::records::{RecordDir, Recorder, check_recorded, progress_key_recorded};
    let recorder = Recorder::open(RecordDir::new(dir))
        .with_context(|| format!("--record {}", dir.display()))?;
    recorder.keep_component(bytes.into())?;
    let ctx = CheckContext::new();
    let runtime = super::runtime()?;
    let (outcome, id) = runtime.block_on(async {
        if progress {
            let r = progress_key_recorded(verifier, tenant, packet, &ctx, &recorder).await?;
            let answer = r.report.result.map(VerifierAnswer::Key);
            Ok::<_, anyhow::Error>(((answer, r.report.metrics), r.id))
        } else {
            let r = check_recorded(verifier, tenant, packet, &ctx, &recorder).await?;
            let answer = r.report.result.map(VerifierAnswer::Verdict);
            Ok(((answer, r.report.metrics), r.id))
        }
    })?;
    recorder
        .flush()
        .with_context(|| format!("--record {}", dir.display()))?;
    Ok((outcome, id))
}

fn print_text(
    result: &Result<VerifierAnswer, CheckError>,
    m: &CallMetrics,
) -> Result<(), OutputError> {
    match result {
        Ok(VerifierAnswer::Verdict(v)) => {
            crate::outln!(
                "verdict: {}",
                if v.complete {
                    "complete"
                } else {
                    "not complete"
                }
            )?;
            if let Some(reason) = &v.reason {
                crate::outln!("reason: {reason}")?;
            }
            if let Some(feedback) = &v.feedback {
                crate::outln!("feedback: {feedback}")?;
            }
        }
        Ok(VerifierAnswer::Key(key)) => crate::outln!("progress key: {key}")?,
        Err(err) => {
            crate::outln!("checker error ({}): {err}", err.code())?;
            if let CheckError::Trap { stderr_tail, .. } = err {
                let tail = stderr_tail.trim();
                if !tail.is_empty() {
                    crate::outln!("guest stderr (tail):\n{tail}")?;
                }
            }
        }
    }
    crate::outln!(
        "metrics: {:.3} ms, fuel {}, peak memory {} KiB, artifact reads {} ({} bytes)",
        m.duration.as_secs_f64() * 1e3,
        m.fuel_used,
        m.peak_memory_bytes / 1024,
        m.artifact_reads,
        m.artifact_bytes
    )
}
