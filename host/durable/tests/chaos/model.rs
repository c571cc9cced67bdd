//! The chaos test's model: an OpenAI Chat endpoint on 127.0.0.1 that
//! answers from the request's history alone, so a call asked again after
//! a crash gets the same answer (the scripted fake provider hands out its
//! turns in order, and a repeated call would take the next one), and that
//! records every request it received, independently of the worker.
//!
//! Each execution plays the feedback story with a write: counted by the
//! assistant turns since the execution's prompt (the last user message
//! that is not host feedback), a premature answer, a write, a read of
//! A42, the confirmed answer.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use verdict_policy::FEEDBACK_LABEL;

/// One request: the user texts (prompts and feedback) in order.
#[derive(Debug, Clone)]
pub struct Seen {
    pub users: Vec<String>,
}

/// The running model; stops when dropped.
pub struct ChaosModel {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ChaosModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ChaosModel {
    /// Serves on a free loopback port; each answer waits a delay drawn
    /// from `seed` (0-30 ms).
    pub async fn start(seed: u64) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let rng = Arc::new(Mutex::new(fastrand::Rng::with_seed(seed)));
        let shared = Arc::clone(&seen);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let (seen, rng) = (Arc::clone(&shared), Arc::clone(&rng));
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        answer(request, Arc::clone(&seen), Arc::clone(&rng))
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self { addr, seen, task }
    }

    /// The base URL for the OpenAI Chat connector.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn answer(
    request: Request<Incoming>,
    seen: Arc<Mutex<Vec<Seen>>>,
    rng: Arc<Mutex<fastrand::Rng>>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = request
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let text = |m: &Value| m["content"].as_str().unwrap_or_default().to_owned();
    let users: Vec<String> = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .map(text)
        .collect();
    let prompt = messages
        .iter()
        .rposition(|m| m["role"] == "user" && !text(m).starts_with(FEEDBACK_LABEL))
        .unwrap_or(0);
    let step = messages[prompt..]
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count();
    seen.lock().unwrap().push(Seen { users });
    let delay = rng.lock().unwrap().u64(0..30);
    tokio::time::sleep(Duration::from_millis(delay)).await;
    let message = match step {
        0 => json!({"role": "assistant", "content": "A42 is ready."}),
        1 => call(
            "w1",
            "write_artifact",
            json!({"id": "report", "content": "A42 verified"}),
        ),
        2 => call("r1", "read_artifact", json!({"id": "A42"})),
        _ => json!({"role": "assistant", "content": "A42 is ready and the report is written."}),
    };
    let finish = if message.get("tool_calls").is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    let reply = json!({
        "id": "chatcmpl-chaos",
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    });
    let mut response = Response::new(Full::new(Bytes::from(reply.to_string())));
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [{
        "id": id, "type": "function",
        "function": {"name": name, "arguments": arguments.to_string()},
    }]})
}
