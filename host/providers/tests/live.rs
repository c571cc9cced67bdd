//! Live round trips against the real providers. Opt-in: these tests are
//! ignored by default and make billable calls. Run them with
//! `cargo test -p verdict-providers --test providers -- live:: --ignored --nocapture`;
//! each one is skipped, with a message, when its API key is not set.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::call;
use serde_json::json;
use verdict_providers::{
    Connector, ConnectorConfig, FinishReason, Message, ModelRequest, Protocol, ToolChoice,
    ToolDefinition, ToolResult,
};

async fn tool_round_trip(protocol: Protocol, default_model: &str) {
    let var = protocol.default_env_var();
    if std::env::var(var).map_or(true, |v| v.trim().is_empty()) {
        println!("skipped: {var} is not set, no live {protocol:?} call made");
        return;
    }
    let model_var = format!("VERDICT_LIVE_MODEL_{protocol:?}").to_uppercase();
    let model_id = std::env::var(&model_var).unwrap_or_else(|_| default_model.to_owned());
    let connector = Connector::new(ConnectorConfig::new("live", protocol)).unwrap();
    let mut request = ModelRequest::new(model_id, "What is the weather in Paris? Use the tool.");
    request.instructions = Some("Answer in one short sentence.".into());
    request.max_tokens = Some(400);
    request.tools = vec![ToolDefinition {
        name: "get_weather".into(),
        description: Some("Current weather for a city".into()),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]}),
    }];
    request.tool_choice = ToolChoice::Required;
    for stream in [false, true] {
        let (first, _) = call(&connector, &request, stream).await.unwrap();
        assert_eq!(first.finish_reason, FinishReason::ToolCalls, "{first:?}");
        let tool_call = first.tool_calls.first().unwrap().clone();
        assert_eq!(tool_call.name, "get_weather");
        assert!(
            tool_call.arguments["city"]
                .as_str()
                .unwrap()
                .contains("Paris")
        );
        let mut next = request.clone();
        next.tool_choice = ToolChoice::Auto;
        next.messages.push(Message::from_response(&first));
        next.messages.push(Message::ToolResult(ToolResult {
            call_id: tool_call.id.clone(),
            name: tool_call.name.clone(),
            content: "{\"sky\":\"sunny\",\"celsius\":21}".into(),
            is_error: false,
        }));
        let (second, _) = call(&connector, &next, stream).await.unwrap();
        assert_eq!(second.finish_reason, FinishReason::Stop, "{second:?}");
        let text = second.text.unwrap_or_default();
        assert!(
            text.contains("21") || text.to_lowercase().contains("sunny"),
            "{text}"
        );
        println!("{protocol:?} stream={stream}: {text} ({:?})", second.usage);
    }
}

#[tokio::test]
#[ignore = "live: billable; needs OPENAI_API_KEY"]
async fn live_openai_chat() {
    tool_round_trip(Protocol::OpenAiChat, "gpt-4o-mini").await;
}

#[tokio::test]
#[ignore = "live: billable; needs OPENAI_API_KEY"]
async fn live_openai_responses() {
    tool_round_trip(Protocol::OpenAiResponses, "gpt-4o-mini").await;
}

#[tokio::test]
#[ignore = "live: billable; needs ANTHROPIC_API_KEY"]
async fn live_anthropic() {
    tool_round_trip(Protocol::Anthropic, "claude-haiku-4-5").await;
}

#[tokio::test]
#[ignore = "live: billable; needs GEMINI_API_KEY"]
async fn live_gemini() {
    tool_round_trip(Protocol::Gemini, "gemini-2.5-flash").await;
}
