//! `verdict replay`: run recorded checks again in a fresh sandbox and
//! compare the answers.

use super::HostArgs;
use crate::exit::Exit;
use anyhow::Context;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use verdict::LoadedVerifier;
use verdict::records::{
    Anchor, Chain, CheckBundle, CheckRecord, Difference, RecordDir, RecordError, RecordedAnswer,
    recorded_component, replay,
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
    /// Replay records their directory's audit log does not name (or names
    /// with another hash), marking them `unanchored`; without it they are
    /// refused.
    #[arg(long)]
    allow_unanchored: bool,
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
    let mut chains: HashMap<PathBuf, Result<Chain, String>> = HashMap::new();
    for given in &args.records {
        // A bundle (`GET .../checks/ID?bundle=1`) is unpacked into a
        // record directory of its own, then replayed as usual.
        let (bundle, unpacked) = match unbundle(given) {
            Ok(found) => found,
            Err(e) => {
                rows.push(broken(given, "unreadable", &e));
                continue;
            }
        };
        let path = unpacked.as_ref().map_or(given, |(_, p)| p);
        let record = match CheckRecord::load(path) {
            Ok(record) => record,
            Err(e @ RecordError::Tampered { .. }) => {
                rows.push(broken(path, "tampered", &e));
                continue;
            }
            // A torn or unreadable record is reported; the batch goes on.
            Err(e @ (RecordError::Format { .. } | RecordError::Io { .. })) => {
                rows.push(broken(path, "unreadable", &e));
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let dir = RecordDir::new(parent);
        let chain = chains
            .entry(parent.to_owned())
            .or_insert_with(|| Chain::of_dir(&dir).map_err(|e| e.to_string()));
        let unanchored = match (&bundle, chain) {
            (Some(bundle), _) => match bundle.anchor() {
                Anchor::Anchored => {
                    if let Some(line) = &bundle.audit_line {
                        crate::stdout::note_line(format_args!(
                            "note: {} is anchored by audit line {} (hash {}) of the server's log; `audit verify` there checks that line",
                            record.id, line.seq, line.hash
                        ));
                    }
                    None
                }
                Anchor::NotInChain => Some(format!(
                    "record {} in bundle {}: no intact audit line names it",
                    record.id,
                    given.display()
                )),
                Anchor::Mismatch { line } => Some(format!(
                    "record {} hashes to {}, the bundle's audit line holds {line}: it was rewritten",
                    record.id, record.integrity
                )),
            },
            (None, chain) => match chain {
                Ok(chain) => match chain.anchor(&record) {
                    Anchor::Anchored => None,
                    Anchor::NotInChain => Some(format!(
                        "record {} is not in {}: no audit line names it",
                        record.id,
                        dir.audit_path().display()
                    )),
                    Anchor::Mismatch { line } => Some(format!(
                        "record {} hashes to {}, its line in {} holds {line}: it was rewritten",
                        record.id,
                        record.integrity,
                        dir.audit_path().display()
                    )),
                },
                Err(e) => Some(format!("the audit log cannot be trusted: {e}")),
            },
        };
        if let Some(why) = &unanchored {
            if !args.allow_unanchored {
                rows.push(refused(&record.id, why));
                continue;
            }
            crate::stdout::note_line(format_args!(
                "warning: replaying an unanchored record: {why}"
            ));
        }
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
            Ok(outcome) => {
                if !outcome.capped.is_empty() {
                    crate::stdout::note_line(format_args!(
                        "warning: record {} asks for more than a replay gives ({}): replayed with the replay's caps",
                        record.id,
                        outcome.capped.join(", ")
                    ));
                }
                rows.push(Row {
                    id: record.id.clone(),
                    recorded: word(&record.answer),
                    replayed: word(&outcome.answer),
                    status: match (&unanchored, outcome.identical()) {
                        (Some(_), true) => "identical (unanchored)".into(),
                        (Some(_), false) => "changed (unanchored)".into(),
                        (None, true) => "identical".into(),
                        (None, false) => "changed".into(),
                    },
                    differences: outcome.differences,
                });
            }
            Err(e @ RecordError::Tampered { .. }) => rows.push(broken(path, "tampered", &e)),
            Err(e @ RecordError::Limits { .. }) => rows.push(broken(path, "refused", &e)),
            Err(e) => return Err(e.into()),
        }
    }
    print(&rows)?;
    let all_identical = rows.iter().all(|r| {
        r.status == "identical" || (args.allow_unanchored && r.status == "identical (unanchored)")
    });
    Ok(if all_identical {
        Exit::Complete
    } else {
        Exit::NotComplete
    })
}

/// The bundle in the file `path`, unpacked into a temporary record
/// directory (and its record file's path); nothing for a plain record.
type Unpacked = (Option<CheckBundle>, Option<(tempfile::TempDir, PathBuf)>);

fn unbundle(path: &Path) -> Result<Unpacked, RecordError> {
    let Some(bundle) = CheckBundle::read(path)? else {
        return Ok((None, None));
    };
    let dir = tempfile::tempdir().map_err(|e| RecordError::Io {
        path: std::env::temp_dir(),
        source: e,
    })?;
    let record = bundle.unpack(dir.path())?;
    Ok((Some(bundle), Some((dir, record))))
}

fn refused(id: &str, why: &str) -> Row {
    Row {
        id: id.to_owned(),
        recorded: "-".into(),
        replayed: "-".into(),
        status: "unanchored".into(),
        differences: vec![Difference {
            field: "record".into(),
            recorded: String::new(),
            replayed: format!("{why} (refused; --allow-unanchored replays it)"),
        }],
    }
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
