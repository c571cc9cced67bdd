//! The exact JSON each connector puts on the wire for a fixed conversation,
//! compared with the shape each provider documents, field by field.

use crate::common;

use common::{call, connector};
use serde_json::{Value, json};
use verdict_providers::fake::{FakeProvider, Script, ScriptedTurn};
use verdict_providers::{
    Connector, Message, ModelRequest, OutputSchema, Protocol, ToolCall, ToolChoice, ToolDefinition,
    ToolResult,
};

fn params() -> Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
}

fn schema() -> Value {
    json!({"type": "object", "properties": {"summary": {"type": "string"}}})
}

fn call_of(id: &str, city: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "get_weather".into(),
        arguments: json!({"city": city}),
        signature: None,
    }
}

/// Instructions, a user turn, an assistant turn with text and two parallel
/// calls, one good and one failed result, a follow-up, one tool, a forced
/// tool choice, an output schema and a token limit.
fn conversation(model: &str) -> ModelRequest {
    ModelRequest {
        model: model.into(),
        instructions: Some("You are terse.".into()),
        messages: vec![
            Message::user("Weather in Paris and Rome?"),
            Message::Assistant {
                text: Some("Checking.".into()),
                tool_calls: vec![call_of("call_1", "Paris"), call_of("call_2", "Rome")],
            },
            Message::ToolResult(ToolResult {
                call_id: "call_1".into(),
                name: "get_weather".into(),
                content: "18C".into(),
                is_error: false,
            }),
            Message::ToolResult(ToolResult {
                call_id: "call_2".into(),
                name: "get_weather".into(),
                content: "timeout".into(),
                is_error: true,
            }),
            Message::user("Thanks, summarize."),
        ],
        tools: vec![ToolDefinition {
            name: "get_weather".into(),
            description: Some("Current weather".into()),
            parameters: params(),
        }],
        tool_choice: ToolChoice::Required,
        output_schema: Some(OutputSchema {
            name: "summary".into(),
            schema: schema(),
        }),
        max_tokens: Some(256),
    }
}

fn expected(p: Protocol) -> Value {
    let args = |city: &str| json!({"city": city}).to_string();
    match p {
        Protocol::OpenAiChat => json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Weather in Paris and Rome?"},
                {"role": "assistant", "content": "Checking.", "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "get_weather", "arguments": args("Paris")}},
                    {"id": "call_2", "type": "function",
                     "function": {"name": "get_weather", "arguments": args("Rome")}},
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
                {"role": "tool", "tool_call_id": "call_2", "content": "timeout"},
                {"role": "user", "content": "Thanks, summarize."},
            ],
            "tools": [{"type": "function", "function": {
                "name": "get_weather", "description": "Current weather", "parameters": params()}}],
            "tool_choice": "required",
            "response_format": {"type": "json_schema",
                "json_schema": {"name": "summary", "schema": schema(), "strict": true}},
            "max_completion_tokens": 256,
            "stream": true,
            "stream_options": {"include_usage": true},
        }),
        Protocol::OpenAiResponses => json!({
            "model": "gpt-test",
            "instructions": "You are terse.",
            "input": [
                {"type": "message", "role": "user", "content": "Weather in Paris and Rome?"},
                {"type": "message", "role": "assistant", "content": "Checking."},
                {"type": "function_call", "call_id": "call_1", "name": "get_weather",
                 "arguments": args("Paris")},
                {"type": "function_call", "call_id": "call_2", "name": "get_weather",
                 "arguments": args("Rome")},
                {"type": "function_call_output", "call_id": "call_1", "output": "18C"},
                {"type": "function_call_output", "call_id": "call_2", "output": "timeout"},
                {"type": "message", "role": "user", "content": "Thanks, summarize."},
            ],
            "tools": [{"type": "function", "name": "get_weather", "description": "Current weather",
                       "parameters": params(), "strict": false}],
            "tool_choice": "required",
            "text": {"format": {"type": "json_schema", "name": "summary", "schema": schema(),
                                "strict": true}},
            "max_output_tokens": 256,
            "stream": true,
        }),
        Protocol::Anthropic => json!({
            "model": "claude-test",
            "max_tokens": 256,
            "system": "You are terse.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "call_2", "name": "get_weather", "input": {"city": "Rome"}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "call_1", "content": "18C"},
                    {"type": "tool_result", "tool_use_id": "call_2", "content": "timeout",
                     "is_error": true},
                    {"type": "text", "text": "Thanks, summarize."},
                ]},
            ],
            "tools": [{"name": "get_weather", "description": "Current weather",
                       "input_schema": params()}],
            "tool_choice": {"type": "any"},
            "output_config": {"format": {"type": "json_schema", "schema": schema()}},
            "stream": true,
        }),
        Protocol::Gemini => json!({
            "systemInstruction": {"parts": [{"text": "You are terse."}]},
            "contents": [
                {"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]},
                {"role": "model", "parts": [
                    {"text": "Checking."},
                    {"functionCall": {"id": "call_1", "name": "get_weather", "args": {"city": "Paris"}}},
                    {"functionCall": {"id": "call_2", "name": "get_weather", "args": {"city": "Rome"}}},
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"id": "call_1", "name": "get_weather",
                                          "response": {"result": "18C"}}},
                    {"functionResponse": {"id": "call_2", "name": "get_weather",
                                          "response": {"error": "timeout"}}},
                    {"text": "Thanks, summarize."},
                ]},
            ],
            "tools": [{"functionDeclarations": [{"name": "get_weather",
                "description": "Current weather", "parametersJsonSchema": params()}]}],
            "toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
            "generationConfig": {"maxOutputTokens": 256, "responseMimeType": "application/json",
                                 "responseJsonSchema": schema()},
        }),
        other => panic!("no documented request for {other:?}"),
    }
}

/// Compare two JSON values key by key, naming the first path that differs.
fn assert_same(actual: &Value, expected: &Value, path: &str) {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => {
            let mut keys: Vec<_> = a.keys().chain(e.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let (av, ev) = (a.get(k), e.get(k));
                match (av, ev) {
                    (Some(av), Some(ev)) => assert_same(av, ev, &format!("{path}.{k}")),
                    _ => panic!("{path}.{k}: sent {av:?}, documented {ev:?}"),
                }
            }
        }
        (Value::Array(a), Value::Array(e)) => {
            assert_eq!(a.len(), e.len(), "{path}: length");
            for (i, (av, ev)) in a.iter().zip(e).enumerate() {
                assert_same(av, ev, &format!("{path}[{i}]"));
            }
        }
        _ => assert_eq!(actual, expected, "{path}"),
    }
}

fn model_for(p: Protocol) -> &'static str {
    match p {
        Protocol::Anthropic => "claude-test",
        Protocol::Gemini => "gemini-test",
        _ => "gpt-test",
    }
}

#[tokio::test]
async fn conversation_is_sent_as_each_provider_documents() {
    for p in Protocol::ALL {
        let fake = FakeProvider::start(Script::new(vec![
            ScriptedTurn::text("a"),
            ScriptedTurn::text("b"),
        ]))
        .await
        .unwrap();
        let model =
            Connector::new(fake.connector_config(p).with_header("x-team", "verdict")).unwrap();
        let request = conversation(model_for(p));
        call(&model, &request, true).await.unwrap();
        call(&model, &request, false).await.unwrap();
        let sent = fake.requests();

        assert_same(&sent[0].body, &expected(p), &format!("{p:?}"));
        // The non-streaming body is the same without the stream fields.
        let mut plain = expected(p);
        if let Some(o) = plain.as_object_mut() {
            o.remove("stream");
            o.remove("stream_options");
        }
        assert_same(&sent[1].body, &plain, &format!("{p:?} non-streaming"));

        let (stream_uri, plain_uri) = match p {
            Protocol::OpenAiChat => ("/v1/chat/completions", "/v1/chat/completions"),
            Protocol::OpenAiResponses => ("/v1/responses", "/v1/responses"),
            Protocol::Anthropic => ("/v1/messages", "/v1/messages"),
            Protocol::Gemini => (
                "/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
                "/v1beta/models/gemini-test:generateContent",
            ),
            other => panic!("no documented endpoint for {other:?}"),
        };
        assert_eq!(sent[0].uri, stream_uri);
        assert_eq!(sent[1].uri, plain_uri);
        for s in &sent {
            assert_eq!(s.header("content-type"), Some("application/json"));
            assert_eq!(s.header("x-team"), Some("verdict"));
            let version = s.header("anthropic-version");
            assert_eq!(version, (p == Protocol::Anthropic).then_some("2023-06-01"));
        }
        // The fake reads the wire back into the same conversation.
        let back = sent[0].request.clone().unwrap();
        let mut messages = request.messages.clone();
        if matches!(p, Protocol::OpenAiChat | Protocol::OpenAiResponses) {
            // OpenAI has no error flag on tool results: the content says it.
            for m in &mut messages {
                if let Message::ToolResult(r) = m {
                    r.is_error = false;
                }
            }
        }
        assert_eq!(back.messages, messages, "{p:?}");
        assert_eq!(back.tools, request.tools, "{p:?}");
        assert_eq!(back.tool_choice, request.tool_choice, "{p:?}");
        assert_eq!(back.max_tokens, Some(256));
        assert_eq!(back.instructions.as_deref(), Some("You are terse."));
    }
}

#[tokio::test]
async fn tool_choice_variants() {
    let cases = [
        (
            ToolChoice::Auto,
            [
                json!("auto"),
                json!("auto"),
                json!({"type": "auto"}),
                json!({"mode": "AUTO"}),
            ],
        ),
        (
            ToolChoice::None,
            [
                json!("none"),
                json!("none"),
                json!({"type": "none"}),
                json!({"mode": "NONE"}),
            ],
        ),
        (
            ToolChoice::Tool("get_weather".into()),
            [
                json!({"type": "function", "function": {"name": "get_weather"}}),
                json!({"type": "function", "name": "get_weather"}),
                json!({"type": "tool", "name": "get_weather"}),
                json!({"mode": "ANY", "allowedFunctionNames": ["get_weather"]}),
            ],
        ),
    ];
    for (choice, wire) in cases {
        for (p, expected) in Protocol::ALL.into_iter().zip(wire) {
            let mut request = conversation(model_for(p));
            request.tool_choice = choice.clone();
            let body = verdict_providers::wire::encode_request(p, &request, false);
            let actual = match p {
                Protocol::Gemini => body["toolConfig"]["functionCallingConfig"].clone(),
                _ => body["tool_choice"].clone(),
            };
            assert_eq!(actual, expected, "{p:?} {choice:?}");
            let back = verdict_providers::wire::decode_request(p, &body, "m").unwrap();
            assert_eq!(back.tool_choice, choice, "{p:?}");
        }
    }
}

#[test]
fn no_tools_means_no_tool_fields_and_anthropic_gets_a_default_limit() {
    let request = ModelRequest::new("m", "hi");
    for p in Protocol::ALL {
        let body = verdict_providers::wire::encode_request(p, &request, false);
        for key in ["tools", "tool_choice", "toolConfig", "stream"] {
            assert!(body.get(key).is_none(), "{p:?} sent {key}");
        }
    }
    let body = verdict_providers::wire::encode_request(Protocol::Anthropic, &request, false);
    assert_eq!(
        body["max_tokens"],
        json!(verdict_providers::wire::ANTHROPIC_DEFAULT_MAX_TOKENS)
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    );
}

#[tokio::test]
async fn gemini_echoes_thought_signatures_and_hides_synthetic_ids() {
    let fake = FakeProvider::start(Script::new(vec![ScriptedTurn::text("ok")]))
        .await
        .unwrap();
    let synthetic = format!("{}0", verdict_providers::wire::GEMINI_SYNTHETIC_ID_PREFIX);
    let mut request = ModelRequest::new("gemini-test", "Where?");
    request.messages.push(Message::Assistant {
        text: None,
        tool_calls: vec![ToolCall {
            id: synthetic.clone(),
            name: "get_country".into(),
            arguments: json!({}),
            signature: Some("EpwICpkI".into()),
        }],
    });
    request.messages.push(Message::ToolResult(ToolResult {
        call_id: synthetic,
        name: "get_country".into(),
        content: "France".into(),
        is_error: false,
    }));
    call(&connector(&fake, Protocol::Gemini), &request, false)
        .await
        .unwrap();
    let body = &fake.requests()[0].body;
    assert_eq!(
        body["contents"][1],
        json!({"role": "model", "parts": [{"functionCall": {"name": "get_country", "args": {}},
                                             "thoughtSignature": "EpwICpkI"}]})
    );
    assert_eq!(
        body["contents"][2],
        json!({"role": "user", "parts": [{"functionResponse": {"name": "get_country",
                                            "response": {"result": "France"}}}]})
    );
}
