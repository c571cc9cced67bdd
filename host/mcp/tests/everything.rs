//! The reference server `server-everything`: its annotations decide each
//! tool's effect, its results map onto the loop's, its long operation is
//! cut at the deadline.

use std::time::Duration;

use serde_json::json;
use verdict_mcp::{EffectOverride, EffectSource, McpServer, McpToolset, ToolSettings};
use verdict_policy::{CancelHandle, Effect};

use crate::support;

fn effect_of(set: &McpToolset, tool: &str) -> verdict_mcp::ToolEffect {
    set.listing()
        .iter()
        .find(|l| l.tool == tool)
        .unwrap_or_else(|| panic!("{tool} not listed: {:?}", set.listing()))
        .effect
}

#[tokio::test]
async fn annotations_decide_each_tool_effect_and_an_override_wins() {
    let Some(mut config) = support::everything() else {
        return;
    };
    config.tools.insert(
        "get-env".into(),
        ToolSettings {
            effect: Some(EffectOverride::Write),
            timeout: None,
        },
    );
    let set = McpToolset::start(vec![config.clone()]).await.unwrap();
    // readOnlyHint: true
    let echo = effect_of(&set, "echo");
    assert_eq!(
        (echo.effect, echo.source),
        (Effect::Read, EffectSource::Annotation)
    );
    // idempotentHint: true, readOnlyHint: false
    let gzip = effect_of(&set, "gzip-file-as-resource");
    assert_eq!((gzip.effect, gzip.idempotent), (Effect::Write, true));
    // readOnlyHint: false, idempotentHint: false
    let toggle = effect_of(&set, "toggle-simulated-logging");
    assert_eq!((toggle.effect, toggle.idempotent), (Effect::Write, false));
    // the override wins over readOnlyHint: true
    let env = effect_of(&set, "get-env");
    assert_eq!(
        (env.effect, env.source),
        (Effect::Write, EffectSource::Override)
    );
    // tool names carry the server's prefix
    assert!(
        set.listing()
            .iter()
            .all(|l| l.loop_name == format!("everything__{}", l.tool))
    );
    assert_eq!(set.tools().len(), set.listing().len());

    // A tenant that does not trust the server's hints gets the safe default.
    config.trust_annotations = false;
    config.tools.clear();
    let untrusted = McpToolset::start(vec![config]).await.unwrap();
    for listed in untrusted.listing() {
        assert_eq!(listed.effect.effect, Effect::Unknown, "{}", listed.tool);
        assert_eq!(listed.effect.source, EffectSource::Default);
        assert!(!listed.effect.idempotent);
    }
}

#[tokio::test]
async fn include_and_exclude_filter_the_tools() {
    let Some(mut config) = support::everything() else {
        return;
    };
    config.include = vec!["echo".into(), "get-sum".into()];
    config.exclude = vec!["get-sum".into()];
    let set = McpToolset::start(vec![config]).await.unwrap();
    let names: Vec<_> = set.listing().into_iter().map(|l| l.loop_name).collect();
    assert_eq!(names, ["everything__echo"]);
}

#[tokio::test]
async fn results_map_to_text_structured_content_and_image_references() {
    let Some(config) = support::everything() else {
        return;
    };
    let server = McpServer::start(config).await.unwrap();
    let version = server.protocol_version().unwrap();
    assert!(version.starts_with("20"), "{version}");
    let cancel = CancelHandle::new();
    let deadline = Duration::from_secs(20);

    let sum = server
        .call("get-sum", json!({"a": 2, "b": 40}), None, deadline, &cancel)
        .await
        .unwrap();
    let value = verdict_mcp::result::to_loop_result(&sum, 1 << 20).unwrap();
    assert!(value.to_string().contains("42"), "{value}");

    let image = server
        .call("get-tiny-image", json!({}), None, deadline, &cancel)
        .await
        .unwrap();
    let value = verdict_mcp::result::to_loop_result(&image, 1 << 20).unwrap();
    let text = value.to_string();
    assert!(text.contains("image/png"), "{text}");
    assert!(
        text.len() < 2_000,
        "the image is a reference, not its bytes: {text}"
    );

    let structured = server
        .call(
            "get-structured-content",
            json!({"location": "New York"}),
            None,
            deadline,
            &cancel,
        )
        .await
        .unwrap();
    let value = verdict_mcp::result::to_loop_result(&structured, 1 << 20).unwrap();
    assert!(value.to_string().contains("temperature"), "{value}");

    // An unknown tool is the server's own refusal, not a hang or a panic.
    let unknown = server
        .call("no-such-tool", json!({}), None, deadline, &cancel)
        .await;
    assert!(
        unknown.is_err() || {
            let v = unknown.as_ref().unwrap();
            verdict_mcp::result::to_loop_result(v, 1 << 20).is_err()
        }
    );
}

#[tokio::test]
async fn a_long_operation_is_cut_at_its_deadline() {
    let Some(config) = support::everything() else {
        return;
    };
    let server = McpServer::start(config).await.unwrap();
    let cancel = CancelHandle::new();
    let error = server
        .call(
            "trigger-long-running-operation",
            json!({"duration": 30, "steps": 3}),
            None,
            Duration::from_millis(500),
            &cancel,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(error, verdict_mcp::CallError::Timeout(_)),
        "{error}"
    );
    // The server still answers afterwards.
    let echo = server
        .call(
            "echo",
            json!({"message": "still here"}),
            None,
            Duration::from_secs(20),
            &cancel,
        )
        .await
        .unwrap();
    assert!(echo.to_string().contains("still here"));
}
