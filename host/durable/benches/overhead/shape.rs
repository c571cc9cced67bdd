//! What Restate journaled for one invocation, read back with the admin
//! API's SQL introspection (`POST /query` on `sys_invocation`,
//! `sys_journal`), and the anchor's shape made from it.

use serde_json::{Value, json};

use crate::anchor::{Op, Shape};

/// One journal entry as Restate keeps it.
#[derive(Debug, Clone)]
pub struct Row {
    pub index: u64,
    pub entry_type: String,
    pub name: String,
    /// The entry's encoded size.
    pub raw_length: u64,
    /// The entry's value (a run's result, a state value, the output), as
    /// the JSON bytes the handler wrote, when it has one.
    pub value_bytes: Option<usize>,
    pub key: Option<String>,
}

/// Runs `sql` on the admin API; the rows.
pub async fn query(http: &reqwest::Client, admin: &str, sql: &str) -> Vec<Value> {
    let text = http
        .post(format!("{admin}/query"))
        .header("accept", "application/json")
        .header("content-type", "application/json")
        .body(json!({ "query": sql }).to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let answer: Value = serde_json::from_str(&text).unwrap();
    answer["rows"].as_array().cloned().unwrap_or_default()
}

/// The invocation id of the last invocation of `service`/`key`/`handler`.
pub async fn invocation(
    http: &reqwest::Client,
    admin: &str,
    service: &str,
    key: &str,
    handler: &str,
) -> String {
    let rows = query(
        http,
        admin,
        &format!(
            "SELECT id FROM sys_invocation WHERE target_service_name = '{service}' \
             AND target_service_key = '{key}' AND target_handler_name = '{handler}' \
             ORDER BY created_at DESC LIMIT 1"
        ),
    )
    .await;
    rows[0]["id"].as_str().unwrap().to_owned()
}

/// The length of the value an entry's JSON carries (a run's `Success`, a
/// state write's `value`, the output's `Success`: bytes as an array of
/// numbers), when it carries one.
fn value_len(entry: &Value) -> Option<usize> {
    match entry {
        Value::Object(map) => ["Success", "value"]
            .iter()
            .find_map(|k| map.get(*k).and_then(Value::as_array).map(Vec::len))
            .or_else(|| map.values().find_map(value_len)),
        _ => None,
    }
}

/// The journal of invocation `id`, in order.
pub async fn journal(http: &reqwest::Client, admin: &str, id: &str) -> Vec<Row> {
    query(
        http,
        admin,
        &format!(
            "SELECT index, entry_type, name, raw_length, entry_json FROM sys_journal \
             WHERE id = '{id}' ORDER BY index"
        ),
    )
    .await
    .into_iter()
    .map(|row| {
        let entry: Value = row["entry_json"]
            .as_str()
            .and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or(Value::Null);
        if std::env::var_os("VERDICT_BENCH_JOURNAL").is_some() {
            let text = entry.to_string();
            println!(
                "{} {} {:?}",
                row["index"],
                row["entry_type"],
                &text[..text.len().min(400)]
            );
        }
        Row {
            index: row["index"].as_u64().unwrap_or_default(),
            entry_type: row["entry_type"].as_str().unwrap_or_default().to_owned(),
            name: row["name"].as_str().unwrap_or_default().to_owned(),
            raw_length: row["raw_length"].as_u64().unwrap_or_default(),
            value_bytes: value_len(&entry),
            key: entry.get("key").and_then(|k| k.as_str()).map(str::to_owned),
        }
    })
    .collect()
}

/// Whether `row` is a `ctx.run` command.
pub fn is_run_command(row: &Row) -> bool {
    row.entry_type.contains("Command") && row.entry_type.ends_with("Run")
}

fn is_run_notification(row: &Row) -> bool {
    row.entry_type.contains("Notification") && row.entry_type.ends_with("Run")
}

/// The anchor's shape for a journal: its gets, runs (each sized as its
/// completion's value), state writes and output, in order.
pub fn shape(rows: &[Row]) -> Shape {
    let mut shape = Shape::default();
    let mut gets = 0;
    let mut sets = 0;
    for (i, row) in rows.iter().enumerate() {
        let kind = row.entry_type.as_str();
        if is_run_command(row) {
            let bytes = rows[i + 1..]
                .iter()
                .find(|r| is_run_notification(r))
                .and_then(|r| r.value_bytes)
                .unwrap_or_default();
            shape.ops.push(Op::Run {
                name: row.name.clone(),
                bytes,
            });
        } else if kind.contains("SetState") {
            sets += 1;
            shape.ops.push(Op::Set {
                key: format!("set-{sets}"),
                bytes: row.value_bytes.unwrap_or_default(),
            });
        } else if kind.contains("GetEagerState") || kind.contains("GetLazyState") {
            gets += 1;
            shape.ops.push(Op::Get {
                key: format!("get-{gets}"),
            });
        } else if kind.contains("Output") {
            shape.output = row.value_bytes.unwrap_or_default();
        }
    }
    shape
}

/// Counts and bytes of a journal by entry kind.
fn kinds(rows: &[Row]) -> Vec<(String, usize, u64, usize)> {
    let mut kinds: Vec<(String, usize, u64, usize)> = Vec::new();
    for row in rows {
        let value = row.value_bytes.unwrap_or_default();
        match kinds.iter_mut().find(|k| k.0 == row.entry_type) {
            Some(k) => {
                k.1 += 1;
                k.2 += row.raw_length;
                k.3 += value;
            }
            None => kinds.push((row.entry_type.clone(), 1, row.raw_length, value)),
        }
    }
    kinds
}

/// Prints the journal of one verdict execution: every entry, then the
/// totals by kind.
pub fn print(rows: &[Row]) {
    println!("\nThe journal of one verdict execution (read from sys_journal)\n");
    println!("| index | entry | name (or state key) | encoded bytes | value bytes |");
    println!("|---|---|---|---|---|");
    for row in rows {
        println!(
            "| {} | {} | {} | {} | {} |",
            row.index,
            row.entry_type,
            if row.name.is_empty() {
                row.key.as_deref().unwrap_or_default()
            } else {
                &row.name
            },
            row.raw_length,
            row.value_bytes.map(|b| b.to_string()).unwrap_or_default()
        );
    }
    println!("\n| entry kind | count | encoded bytes | value bytes |");
    println!("|---|---|---|---|");
    for (kind, count, raw, value) in kinds(rows) {
        println!("| {kind} | {count} | {raw} | {value} |");
    }
    let raw: u64 = rows.iter().map(|r| r.raw_length).sum();
    println!("| all | {} | {raw} | |", rows.len());
}

/// Prints the anchor's journal beside verdict's, by kind.
pub fn compare(verdict: &[Row], anchor: &[Row]) {
    println!("\nThe anchor's journal beside it (by kind: count, encoded bytes)\n");
    println!("| entry kind | verdict | anchor |");
    println!("|---|---|---|");
    let (v, a) = (kinds(verdict), kinds(anchor));
    let mut names: Vec<&String> = v.iter().map(|k| &k.0).collect();
    for k in &a {
        if !names.contains(&&k.0) {
            names.push(&k.0);
        }
    }
    let cell = |ks: &[(String, usize, u64, usize)], n: &str| {
        ks.iter()
            .find(|k| k.0 == n)
            .map(|k| format!("{} ({} B)", k.1, k.2))
            .unwrap_or_else(|| "0".to_owned())
    };
    for name in names {
        println!("| {name} | {} | {} |", cell(&v, name), cell(&a, name));
    }
}
