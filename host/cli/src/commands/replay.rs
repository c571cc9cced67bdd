//! `verdict replay`: run recorded checks again in a fresh sandbox and
//! compare the answers.

use super::HostArgs;
use crate::exit::Exit;
use anyhow::Context;
use std::path::{Path, PathBuf};
use verdict::LoadedVerifier;
use verdict::records::{
    CheckRecord, Difference, RecordDir, RecordError, RecordedAnswer, recorded_component, replay,
};

/// Arguments of `verdict replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// Check records (`<id>.json` files written by `--record`).
    #[arg(required = true, value_name = "RECORD")]
    records: Vec<PathBuf>,
    /// Replay against this build instead of the recorded component (a
    /// .wasm file or builtin:NAME): prints a table of changed answers.
    #[arg(long, value_name = "WASM")]
    verifier: Option<String>,
    #[command(flatten)]
    host: HostArgs,
}

/// One record's replay, as the table shows it.
struct Row {
    id: String,
    recorded: String,
    replayed: String,
    /// `identical`, `changed`, or why the record could not be replayed.
    status: String,
    differences: Vec<Difference>,
}

fn word(answer: &RecordedAnswer) -> String {
    match answer {
        RecordedAnswer::Verdict { verdict } if verdict.complete => "complete".into(),
        RecordedAnswer::Verdict { .. } => "not complete".into(),
        RecordedAnswer::Key { key } => format!("key {key:?}"),
        RecordedAnswer::Error { class, .. } => format!("error {class}"),
    }
}

/// Runs `verdict replay`: exit 0 when every answer is identical, 1 when an
/// answer changed or a record (or what it refers to) was tampered with.
pub fn run(args: ReplayArgs) -> anyhow::Result<Exit> {
    let host = args.host.host()?;
    let other = match &args.verifier {
        Some(spec) => {
            let bytes = super::read_verifier(spec)?;
            let (verifier, _) = host
                .load_bytes(&bytes)
                .with_context(|| format!("--verifier {spec} is rejected"))?;
            Some(verifier)
        }
        None => None,
    };
    let runtime = super::runtime()?;
    let mut rows = Vec::new();
    for path in &args.records {
        let record = match CheckRecord::load(path) {
            Ok(record) => record,
            Err(e @ RecordError::Tampered { .. }) => {
                rows.push(broken(path, "tampered", &e));
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let dir = RecordDir::new(path.parent().unwrap_or(Path::new(".")));
        let cas = dir.cas();
        let recorded_build;
        let verifier: &LoadedVerifier = match &other {
            Some(v) => v,
            None => {
                let bytes = match recorded_component(&record, &cas) {
                    Ok(bytes) => bytes,
                    Err(e @ RecordError::Tampered { .. }) => {
                        rows.push(broken(path, "tampered", &e));
                        continue;
                    }
                    Err(e) => {
                        return Err(anyhow::Error::from(e).context(format!(
                            "{}: give the verifier with --verifier",
                            path.display()
                        )));
                    }
                };
                recorded_build = host
                    .load_bytes(&bytes)
                    .with_context(|| format!("{}: the recorded verifier", path.display()))?
                    .0;
                &recorded_build
            }
        };
        let same_build = other.is_none();
        match runtime.block_on(replay(&record, &cas, verifier, same_build)) {
            Ok(outcome) => rows.push(Row {
                id: record.id.clone(),
                recorded: word(&record.answer),
                replayed: word(&outcome.answer),
                status: if outcome.identical() {
                    "identical".into()
                } else {
                    "changed".into()
                },
                differences: outcome.differences,
            }),
            Err(e @ RecordError::Tampered { .. }) => rows.push(broken(path, "tampered", &e)),
            Err(e) => return Err(e.into()),
        }
    }
    print(&rows)?;
    let all_identical = rows.iter().all(|r| r.status == "identical");
    Ok(if all_identical {
        Exit::Complete
    } else {
        Exit::NotComplete
    })
}

fn broken(path: &Path, status: &str, e: &RecordError) -> Row {
    Row {
        id: path
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned()),
        recorded: "-".into(),
        replayed: "-".into(),
        status: status.into(),
        differences: vec![Difference {
            field: "record".into(),
            recorded: String::new(),
            replayed: e.to_string(),
        }],
    }
}

fn print(rows: &[Row]) -> Result<(), crate::stdout::OutputError> {
    let width = |f: fn(&Row) -> &str, title: &str| {
        rows.iter()
            .map(|r| f(r).chars().count())
            .max()
            .unwrap_or(0)
            .max(title.len())
    };
    let (w_id, w_rec, w_rep) = (
        width(|r| &r.id, "record"),
        width(|r| &r.recorded, "recorded"),
        width(|r| &r.replayed, "replayed"),
    );
    crate::outln!(
        "{:w_id$}  {:w_rec$}  {:w_rep$}  status",
        "record",
        "recorded",
        "replayed"
    )?;
    for r in rows {
        crate::outln!(
            "{:w_id$}  {:w_rec$}  {:w_rep$}  {}",
            r.id,
            r.recorded,
            r.replayed,
            r.status
        )?;
    }
    for r in rows.iter().filter(|r| !r.differences.is_empty()) {
        crate::outln!("\n{} ({}):", r.id, r.status)?;
        for d in &r.differences {
            if d.field == "record" {
                crate::outln!("  {}", d.replayed)?;
            } else {
                crate::outln!(
                    "  {}: recorded {}, replayed {}",
                    d.field,
                    d.recorded,
                    d.replayed
                )?;
            }
        }
    }
    let changed = rows.iter().filter(|r| r.status != "identical").count();
    crate::outln!(
        "\n{} of {} identical{}",
        rows.len() - changed,
        rows.len(),
        if changed > 0 {
            format!(", {changed} not")
        } else {
            String::new()
        }
    )?;
    Ok(())
}
