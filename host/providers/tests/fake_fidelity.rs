//! The fake provider speaks like the real APIs: every recorded real stream
//! in `tests/wire-samples` is decoded, the fake renders a stream for the
//! same content, and both have the same event-sequence shape (event types
//! and order; how many deltas a piece of text or arguments is cut into is
//! not shape). The Gemini fake also answers on `/v1` as well as `/v1beta`.

use crate::common;

use serde_json::Value;
use verdict_providers::Protocol;
use verdict_providers::fake::{FakeProvider, Script, ScriptedTurn};

/// One SSE event: its `event:` name (if any) and its `data:` payload.
type Event = (Option<String>, String);

/// The events of a recorded SSE body (or of a `.jsonl` of data payloads).
fn events_of(name: &str) -> Vec<Event> {
    let text = String::from_utf8(common::sample(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    if name.ends_with(".jsonl") {
        return text.lines().map(|l| (None, l.to_owned())).collect();
    }
    let text = text.replace("\r\n", "\n");
    let mut events = Vec::new();
    for block in text.split("\n\n") {
        let (mut event, mut data) = (None, Vec::new());
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("event:") {
                event = Some(v.trim().to_owned());
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push(v.strip_prefix(' ').unwrap_or(v).to_owned());
            }
        }
        if !data.is_empty() {
            events.push((event, data.join("\n")));
        }
    }
    events
}

fn json(data: &str) -> Value {
    serde_json::from_str(data).unwrap_or_else(|e| panic!("{e}: {data}"))
}

fn kind_of(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(|x| x.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned()
}

/// Drops consecutive repeats of the entries `repeats` accepts.
fn collapse(kinds: Vec<String>, repeats: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in kinds {
        if out.last() == Some(&k) && repeats(&k) {
            continue;
        }
        out.push(k);
    }
    out
}

/// Responses: the event types in order; output items and content parts with
/// their type. Reasoning items are left out: the neutral response does not
/// carry reasoning, so the fake has none to render.
fn responses_shape(events: &[Event]) -> Vec<String> {
    let mut kinds = Vec::new();
    for (name, data) in events {
        let v = json(data);
        let name = name
            .clone()
            .unwrap_or_else(|| v["type"].as_str().unwrap_or("?").to_owned());
        let kind = match name.as_str() {
            "response.output_item.added" | "response.output_item.done" => {
                let item = kind_of(&v, "item");
                if item == "reasoning" {
                    continue;
                }
                format!("{name}({item})")
            }
            "response.content_part.added" | "response.content_part.done" => {
                format!("{name}({})", kind_of(&v, "part"))
            }
            _ => name,
        };
        kinds.push(kind);
    }
    collapse(kinds, |k| k.ends_with(".delta"))
}

/// Anthropic: the event types in order, blocks and deltas with their type.
fn anthropic_shape(events: &[Event]) -> Vec<String> {
    let kinds = events
        .iter()
        .map(|(name, data)| {
            let v = json(data);
            let name = name.clone().unwrap_or_default();
            match name.as_str() {
                "content_block_start" => format!("{name}({})", kind_of(&v, "content_block")),
                "content_block_delta" => format!("{name}({})", kind_of(&v, "delta")),
                _ => name,
            }
        })
        .collect();
    collapse(kinds, |k| k.starts_with("content_block_delta"))
}

fn nonempty(v: &Value) -> bool {
    v.as_str().is_some_and(|s| !s.is_empty())
}

/// Chat Completions: what each chunk says, in order (a role, text, a tool
/// call's start or arguments, the finish reason, usage, `[DONE]`). Chunk
/// boundaries are not shape: a real server puts a call's start in the
/// role's chunk or in its own.
fn chat_shape(events: &[Event]) -> Vec<String> {
    let mut kinds = Vec::new();
    for (_, data) in events {
        if data == "[DONE]" {
            kinds.push("[DONE]".to_owned());
            continue;
        }
        let v = json(data);
        for choice in v["choices"].as_array().into_iter().flatten() {
            let delta = &choice["delta"];
            if delta.get("role").is_some() {
                kinds.push("role".into());
            }
            for key in ["content", "refusal"] {
                if nonempty(&delta[key]) {
                    kinds.push(key.into());
                }
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                if call.get("id").is_some() {
                    kinds.push(format!("call_start({})", call["index"]));
                }
                if nonempty(&call["function"]["arguments"]) {
                    kinds.push(format!("call_args({})", call["index"]));
                }
            }
            if !choice["finish_reason"].is_null() {
                kinds.push("finish".into());
            }
        }
        if v.get("usage").is_some_and(|u| !u.is_null()) {
            kinds.push("usage".into());
        }
    }
    collapse(kinds, |_| true)
}

/// Gemini: every event is a whole `GenerateContentResponse`, so the shape
/// is the order of its content (text, function calls), and that the finish
/// reason and usage come with the last event (and the finish reason only
/// there).
fn gemini_shape(events: &[Event]) -> Vec<String> {
    let mut kinds = Vec::new();
    let last = events.len().saturating_sub(1);
    for (i, (_, data)) in events.iter().enumerate() {
        let v = json(data);
        for candidate in v["candidates"].as_array().into_iter().flatten() {
            for part in candidate["content"]["parts"]
                .as_array()
                .into_iter()
                .flatten()
            {
                if nonempty(&part["text"]) {
                    kinds.push("text".to_owned());
                }
                if part.get("functionCall").is_some() {
                    kinds.push("call".to_owned());
                }
            }
            if candidate.get("finishReason").is_some() {
                kinds.push(if i == last { "finish" } else { "EARLY finish" }.to_owned());
            }
        }
        if i == last && v.get("usageMetadata").is_some() {
            kinds.push("usage".to_owned());
        }
    }
    collapse(kinds, |k| k == "text" || k == "call")
}

fn shape(protocol: Protocol, events: &[Event]) -> Vec<String> {
    match protocol {
        Protocol::OpenAiResponses => responses_shape(events),
        Protocol::Anthropic => anthropic_shape(events),
        Protocol::OpenAiChat => chat_shape(events),
        Protocol::Gemini => gemini_shape(events),
        other => panic!("no recorded stream shape for {other:?}"),
    }
}

fn folder(p: Protocol) -> &'static str {
    match p {
        Protocol::OpenAiChat => "openai-chat",
        Protocol::OpenAiResponses => "openai-responses",
        Protocol::Anthropic => "anthropic",
        Protocol::Gemini => "gemini",
        other => panic!("no recorded samples for {other:?}"),
    }
}

/// Recorded streams the fake cannot be asked for: the neutral request never
/// sets `n`, so a stream of three choices never comes.
const NOT_RENDERABLE: &[&str] = &["openai-chat/stream-multiple-choices-n3.sse"];

#[test]
fn every_recorded_stream_has_the_shape_the_fake_renders_for_its_content() {
    let mut mismatches = Vec::new();
    for protocol in Protocol::ALL {
        let dir = common::samples_dir().join(folder(protocol));
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("stream-"))
            .map(|n| format!("{}/{n}", folder(protocol)))
            .filter(|n| !NOT_RENDERABLE.contains(&n.as_str()))
            .collect();
        names.sort();
        assert!(names.len() >= 4, "{protocol:?}: {names:?}");
        for name in names {
            let recorded = events_of(&name);
            let content = if name.ends_with(".jsonl") {
                // Payloads without framing: frame them to decode.
                let body: String = recorded
                    .iter()
                    .map(|(_, d)| format!("data: {d}\r\n\r\n"))
                    .collect();
                verdict_providers::wire::decode_stream(protocol, body.as_bytes())
            } else {
                common::decode_stream(protocol, &name)
            };
            let content = content.unwrap_or_else(|e| panic!("{name}: {e}"));
            let response = common::completed(&content);
            for chunk in [1, 5, usize::MAX] {
                let rendered: Vec<Event> =
                    verdict_providers::wire::render_stream(protocol, response, "fake-model", chunk)
                        .into_iter()
                        .map(|f| (f.event, f.data))
                        .collect();
                let (fake, real) = (shape(protocol, &rendered), shape(protocol, &recorded));
                if fake != real {
                    mismatches.push(format!(
                        "{name} (fake chunk {chunk}):\n  fake:     {fake:?}\n  recorded: {real:?}"
                    ));
                }
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[tokio::test]
async fn the_gemini_fake_answers_on_v1_and_v1beta() {
    for version in ["v1", "v1beta"] {
        for stream in [false, true] {
            let fake = FakeProvider::start(Script::new(vec![ScriptedTurn::text("hello there")]))
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            let base = format!("http://{}/{version}", fake.addr());
            let config = fake.connector_config(Protocol::Gemini).with_base_url(base);
            let model = verdict_providers::Connector::new(config).unwrap_or_else(|e| panic!("{e}"));
            let request = verdict_providers::ModelRequest::new("gemini-test", "hi");
            let (response, _) = common::call(&model, &request, stream)
                .await
                .unwrap_or_else(|e| panic!("{version} stream={stream}: {e}"));
            assert_eq!(response.text.as_deref(), Some("hello there"));
            let uri = &fake.requests()[0].uri;
            assert!(
                uri.starts_with(&format!("/{version}/models/gemini-test:")),
                "{uri}"
            );
        }
    }
}
