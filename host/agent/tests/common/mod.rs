//! Shared helpers for the scenario tests.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use verdict_agent::{Agent, AgentBuilder, CompletionFn, Tool, ToolError};
use verdict_policy::{CheckPacket, CheckerError, CompletionChecker, Effect, Verdict};
use verdict_providers::fake::{Reply, Script, ScriptedCall, ScriptedModel, ScriptedTurn};
use verdict_providers::{Message, Model, ModelRequest};

/// A scripted model answering `turns` in order.
pub fn scripted(turns: Vec<ScriptedTurn>) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new(Script::new(turns)))
}

/// A builder for an agent on `model`.
pub fn agent_on(model: &Arc<ScriptedModel>) -> AgentBuilder {
    let model: Arc<dyn Model> = model.clone();
    Agent::builder().model(model).model_name("scripted")
}

/// A turn with several tool calls.
pub fn calls(list: &[(&str, &str, Value)]) -> ScriptedTurn {
    ScriptedTurn::reply(Reply {
        tool_calls: list
            .iter()
            .map(|(id, name, args)| ScriptedCall {
                id: Some((*id).to_owned()),
                name: (*name).to_owned(),
                arguments: args.clone(),
            })
            .collect(),
        ..Reply::default()
    })
}

/// An object schema accepting any properties.
pub fn any_object() -> Value {
    json!({"type": "object"})
}

/// A tool returning `result` that counts its executions.
pub fn counting_tool(name: &str, effect: Effect, result: Value) -> (Tool, Arc<AtomicUsize>) {
    let count = Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    let tool = Tool::new(name, any_object(), move |_args, _ctx| {
        counter.fetch_add(1, Ordering::SeqCst);
        let result = result.clone();
        async move { Ok::<_, ToolError>(result) }
    })
    .map(|t| t.with_effect(effect));
    match tool {
        Ok(tool) => (tool, count),
        Err(e) => panic!("tool definition: {e}"),
    }
}

/// A completion checker from a blocking closure of the packet.
pub fn completion(
    f: impl Fn(&CheckPacket) -> Result<Verdict, CheckerError> + Send + Sync + 'static,
) -> Arc<dyn CompletionChecker> {
    Arc::new(CompletionFn::new(move |packet, _ctx| f(packet)))
}

/// The user texts of a request, in order.
pub fn user_texts(request: &ModelRequest) -> Vec<String> {
    request
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::User { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// Checks the tool-call/result protocol strictly: the calls of an
/// assistant message are answered by tool results right after it, one each,
/// in call order, by id and name; a nonempty call id appears once per
/// message; no tool result stands anywhere else (an orphan or a duplicate).
pub fn assert_protocol_whole(messages: &[Message]) {
    let mut i = 0;
    while i < messages.len() {
        match &messages[i] {
            Message::Assistant { tool_calls, .. } => {
                let mut ids = std::collections::HashSet::new();
                for (k, call) in tool_calls.iter().enumerate() {
                    assert!(
                        call.id.is_empty() || ids.insert(call.id.as_str()),
                        "call id {:?} twice in one response",
                        call.id
                    );
                    match messages.get(i + 1 + k) {
                        Some(Message::ToolResult(r)) => {
                            assert_eq!(r.call_id, call.id, "result out of order");
                            assert_eq!(r.name, call.name, "result of another tool");
                        }
                        other => panic!("call {} has no result right after it: {other:?}", call.id),
                    }
                }
                i += 1 + tool_calls.len();
            }
            Message::ToolResult(r) => panic!(
                "tool result {:?} ({}) answers no call of the message before it",
                r.call_id, r.name
            ),
            Message::User { .. } => i += 1,
            other => panic!("a message this check does not know: {other:?}"),
        }
    }
}
