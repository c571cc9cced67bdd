//! Injected faults: each gives the right typed error, retries are counted,
//! no tool call from a cut stream is yielded, and every wait is bounded.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{call, connector};
use futures::StreamExt;
use serde_json::json;
use verdict_providers::fake::{FakeProvider, Fault, Reply, Script, ScriptedCall, ScriptedTurn};
use verdict_providers::{
    Attempt, AttemptRefusal, CallContext, Connector, ConnectorConfig, Credential, Model,
    ModelRequest, Protocol, ProviderError, RetryPolicy, StreamEvent, TimeoutPhase,
};

/// Upper bound on any single test call: a hang fails the test instead.
const BOUND: Duration = Duration::from_secs(20);

fn request() -> ModelRequest {
    ModelRequest::new("test-model", "hello")
}

fn status(status: u16, retry_after_secs: Option<u64>) -> ScriptedTurn {
    ScriptedTurn::fault(Fault::Status {
        status,
        message: format!("injected {status}"),
        retry_after_secs,
    })
}

fn tool_reply() -> Reply {
    Reply {
        text: Some("Let me run that.".into()),
        tool_calls: vec![ScriptedCall {
            id: Some("call_danger".into()),
            name: "write_file".into(),
            arguments: json!({"path": "out.txt", "content": "a long enough body to be cut"}),
        }],
        ..Reply::default()
    }
}

/// Run a streaming call to its end: the events before the error, and the
/// error (or `None` if it completed).
async fn stream_until_error(
    model: &dyn Model,
    ctx: &CallContext,
) -> (Vec<StreamEvent>, Option<ProviderError>) {
    let run = async {
        let mut events = Vec::new();
        let mut stream = match model.stream(&request(), ctx).await {
            Ok(s) => s,
            Err(e) => return (events, Some(e)),
        };
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => events.push(event),
                Err(e) => return (events, Some(e)),
            }
        }
        (events, None)
    };
    tokio::time::timeout(BOUND, run)
        .await
        .unwrap_or_else(|_| panic!("stream call hung"))
}

/// A context whose hook records every attempt.
fn recording_ctx() -> (CallContext, Arc<Mutex<Vec<Attempt>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let ctx = CallContext {
        on_attempt: Some(Arc::new(move |a: &Attempt| {
            sink.lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(a.clone());
            Ok(())
        })),
        ..CallContext::default()
    };
    (ctx, seen)
}

#[tokio::test]
async fn server_error_is_retried_and_each_attempt_reported() {
    for p in Protocol::ALL {
        for stream in [false, true] {
            let fake = FakeProvider::start(Script::new(vec![
                status(500, None),
                ScriptedTurn::text("ok"),
            ]))
            .await
            .unwrap();
            let model = connector(&fake, p);
            let (ctx, seen) = recording_ctx();
            let response = if stream {
                let (events, err) = stream_until_error(&model, &ctx).await;
                assert!(err.is_none(), "{p:?}: {err:?}");
                match events.last() {
                    Some(StreamEvent::Completed(r)) => r.clone(),
                    other => panic!("{other:?}"),
                }
            } else {
                tokio::time::timeout(BOUND, model.complete(&request(), &ctx))
                    .await
                    .unwrap()
                    .unwrap()
            };
            assert_eq!(response.text.as_deref(), Some("ok"));
            assert_eq!(response.attempts, 2, "{p:?} stream={stream}");
            let seen = seen.lock().unwrap().clone();
            assert_eq!(seen.len(), 2);
            assert_eq!(seen[0].number, 1);
            assert!(seen[0].retry_of.is_none());
            assert!(
                matches!(
                    seen[1].retry_of,
                    Some(ProviderError::Server { status: 500, .. })
                ),
                "{seen:?}"
            );
            assert_eq!(fake.requests().len(), 2);
        }
    }
}

#[tokio::test]
async fn retries_are_bounded() {
    for p in Protocol::ALL {
        let fake = FakeProvider::start(Script::new(vec![
            status(503, None),
            status(502, None),
            status(500, None),
            ScriptedTurn::text("never reached"),
        ]))
        .await
        .unwrap();
        let (ctx, seen) = recording_ctx();
        let result = tokio::time::timeout(BOUND, connector(&fake, p).complete(&request(), &ctx))
            .await
            .unwrap();
        assert!(
            matches!(&result, Err(ProviderError::Server { status: 500, message }) if message.contains("injected 500")),
            "{p:?}: {result:?}"
        );
        // max_retries = 2 in the fake's connector config: three attempts.
        assert_eq!(seen.lock().unwrap().len(), 3);
        assert_eq!(fake.requests().len(), 3);
        assert_eq!(fake.remaining_turns(), 1);
    }
}

#[tokio::test]
async fn rate_limit_honours_retry_after_or_reports_it() {
    for p in Protocol::ALL {
        // A short retry-after is waited out and retried.
        let fake = FakeProvider::start(Script::new(vec![
            status(429, Some(0)),
            ScriptedTurn::text("ok"),
        ]))
        .await
        .unwrap();
        let (r, _) = call(&connector(&fake, p), &request(), false).await.unwrap();
        assert_eq!(r.attempts, 2, "{p:?}");

        // One longer than the policy's max delay is handed to the caller.
        let fake = FakeProvider::start(Script::new(vec![
            status(429, Some(60)),
            ScriptedTurn::text("ok"),
        ]))
        .await
        .unwrap();
        let result = call(&connector(&fake, p), &request(), true).await;
        match result {
            Err(ProviderError::RateLimited {
                retry_after,
                message,
            }) => {
                assert_eq!(retry_after, Some(Duration::from_secs(60)), "{p:?}");
                assert!(message.contains("injected 429"), "{p:?}: {message}");
            }
            other => panic!("{p:?}: {other:?}"),
        }
        assert_eq!(fake.requests().len(), 1, "{p:?}");
    }
}

#[tokio::test]
async fn auth_and_bad_request_are_not_retried() {
    for p in Protocol::ALL {
        let fake = FakeProvider::start(Script::new(vec![status(401, None), status(400, None)]))
            .await
            .unwrap();
        let model = connector(&fake, p);
        let err = call(&model, &request(), false).await.unwrap_err();
        assert!(
            matches!(err, ProviderError::Authentication { status: 401, .. }),
            "{p:?}: {err:?}"
        );
        let err = call(&model, &request(), true).await.unwrap_err();
        assert!(
            matches!(&err, ProviderError::BadRequest { status: 400, message } if message == "injected 400"),
            "{p:?}: {err:?}"
        );
        assert_eq!(fake.requests().len(), 2);
    }
}

#[tokio::test]
async fn slow_first_byte_times_out() {
    for p in Protocol::ALL {
        let fake =
            FakeProvider::start(Script::new(vec![ScriptedTurn::text("late").delayed(3_000)]))
                .await
                .unwrap();
        let mut config = fake.connector_config(p);
        config.timeouts.first_byte = Duration::from_millis(200);
        let model = Connector::new(config).unwrap();
        let result =
            tokio::time::timeout(BOUND, model.complete(&request(), &CallContext::default()))
                .await
                .unwrap();
        assert!(
            matches!(
                result,
                Err(ProviderError::Timeout {
                    phase: TimeoutPhase::FirstByte,
                    ..
                })
            ),
            "{p:?}: {result:?}"
        );
    }
}

#[tokio::test]
async fn a_stream_that_goes_quiet_times_out() {
    for p in Protocol::ALL {
        for stream in [false, true] {
            let fake =
                FakeProvider::start(Script::new(vec![ScriptedTurn::fault(Fault::StallStream {
                    after_frames: 1,
                    stall_ms: 3_000,
                    reply: tool_reply(),
                })]))
                .await
                .unwrap();
            let mut config = fake.connector_config(p);
            config.timeouts.idle = Duration::from_millis(200);
            let model = Connector::new(config).unwrap();
            let result = tokio::time::timeout(BOUND, call(&model, &request(), stream))
                .await
                .unwrap();
            assert!(
                matches!(
                    result,
                    Err(ProviderError::Timeout {
                        phase: TimeoutPhase::Idle,
                        ..
                    })
                ),
                "{p:?} stream={stream}: {result:?}"
            );
        }
    }
}

#[tokio::test]
async fn cut_stream_is_truncated_and_yields_no_tool_call() {
    for p in Protocol::ALL {
        let frames = verdict_providers::wire::render_stream(
            p,
            &tool_reply().to_response(1),
            "test-model",
            4,
        )
        .len();
        // Cut at every frame boundary but the last: never a tool call.
        for after_frames in 0..frames {
            let fake =
                FakeProvider::start(Script::new(vec![ScriptedTurn::fault(Fault::CutStream {
                    after_frames,
                    reply: tool_reply(),
                })]))
                .await
                .unwrap();
            let model = no_retries(&fake, p);
            let (events, err) = stream_until_error(&model, &CallContext::default()).await;
            assert!(
                matches!(err, Some(ProviderError::TruncatedStream { .. })),
                "{p:?} cut after {after_frames}/{frames}: {err:?}"
            );
            assert!(
                events
                    .iter()
                    .all(|e| matches!(e, StreamEvent::TextDelta(_))),
                "{p:?} cut after {after_frames}: {events:?}"
            );
        }
        // The same fault on a non-streaming call: half a body.
        let fake = FakeProvider::start(Script::new(vec![ScriptedTurn::fault(Fault::CutStream {
            after_frames: 0,
            reply: tool_reply(),
        })]))
        .await
        .unwrap();
        let err = call(&connector(&fake, p), &request(), false)
            .await
            .unwrap_err();
        assert!(
            matches!(err, ProviderError::TruncatedStream { .. }),
            "{p:?}: {err:?}"
        );
    }
}

/// A connector to `fake` that never retries.
fn no_retries(fake: &FakeProvider, p: Protocol) -> Connector {
    Connector::new(fake.connector_config(p).with_retry(RetryPolicy::none()))
        .unwrap_or_else(|e| panic!("connector: {e}"))
}

/// A stream that breaks (cut, or an error event) before its first event
/// has shown the caller nothing: it is retried, and the caller sees only
/// the next attempt's answer. Once an event was yielded it is not retried.
#[tokio::test]
async fn a_stream_broken_before_its_first_event_is_retried() {
    let faults = |after_frames: usize| {
        [
            Fault::CutStream {
                after_frames,
                reply: tool_reply(),
            },
            Fault::ErrorEvent {
                after_frames,
                status: 529,
                message: "Overloaded".into(),
            },
        ]
    };
    for p in Protocol::ALL {
        let frames = verdict_providers::wire::render_stream(
            p,
            &tool_reply().to_response(1),
            "test-model",
            4,
        )
        .len();
        let (mut retried, mut kept) = (0, 0);
        for after_frames in 0..frames {
            for fault in faults(after_frames) {
                let script = || {
                    Script::new(vec![
                        ScriptedTurn::fault(fault.clone()),
                        ScriptedTurn::text("recovered"),
                    ])
                };
                // What the caller would see of the broken attempt alone.
                let fake = FakeProvider::start(script()).await.unwrap();
                let (seen, err) =
                    stream_until_error(&no_retries(&fake, p), &CallContext::default()).await;
                if err.is_none() {
                    // An error event after the whole answer never comes.
                    assert!(matches!(fault, Fault::ErrorEvent { .. }), "{p:?} {fault:?}");
                    continue;
                }

                let fake = FakeProvider::start(script()).await.unwrap();
                let (ctx, attempts) = recording_ctx();
                let (events, err) = stream_until_error(&connector(&fake, p), &ctx).await;
                if seen.is_empty() {
                    retried += 1;
                    assert!(err.is_none(), "{p:?} {fault:?}: {err:?}");
                    assert_eq!(common::text_of(&events), "recovered", "{p:?} {fault:?}");
                    assert_eq!(common::completed(&events).attempts, 2, "{p:?} {fault:?}");
                    assert_eq!(fake.requests().len(), 2, "{p:?} {fault:?}");
                    assert_eq!(attempts.lock().unwrap().len(), 2, "{p:?} {fault:?}");
                } else {
                    kept += 1;
                    assert!(err.is_some(), "{p:?} {fault:?}: not retried after an event");
                    assert_eq!(events, seen, "{p:?} {fault:?}");
                    assert_eq!(fake.requests().len(), 1, "{p:?} {fault:?}");
                }
            }
        }
        assert!(
            retried > 0 && kept > 0,
            "{p:?}: {retried} retried, {kept} kept"
        );
    }
}

#[tokio::test]
async fn malformed_json_is_a_typed_error() {
    for p in Protocol::ALL {
        for stream in [false, true] {
            let fake =
                FakeProvider::start(Script::new(vec![ScriptedTurn::fault(Fault::MalformedJson)]))
                    .await
                    .unwrap();
            let err = call(&connector(&fake, p), &request(), stream)
                .await
                .unwrap_err();
            assert!(
                matches!(err, ProviderError::MalformedResponse { .. }),
                "{p:?} stream={stream}: {err:?}"
            );
            assert_eq!(
                fake.requests().len(),
                1,
                "malformed answers are not retried"
            );
        }
    }
}

#[tokio::test]
async fn error_event_mid_stream_is_classified() {
    for p in Protocol::ALL {
        for (code, check) in [(529u16, "server" as &str), (429, "rate"), (500, "server")] {
            let fake =
                FakeProvider::start(Script::new(vec![ScriptedTurn::fault(Fault::ErrorEvent {
                    after_frames: 2,
                    status: code,
                    message: "Overloaded".into(),
                })]))
                .await
                .unwrap();
            let model = no_retries(&fake, p);
            let (events, err) = stream_until_error(&model, &CallContext::default()).await;
            let ok = match (check, &err) {
                ("server", Some(ProviderError::Server { message, .. })) => message == "Overloaded",
                ("rate", Some(ProviderError::RateLimited { message, .. })) => {
                    message == "Overloaded"
                }
                _ => false,
            };
            assert!(ok, "{p:?} {code}: {err:?}");
            assert!(
                !events
                    .iter()
                    .any(|e| matches!(e, StreamEvent::Completed(_)))
            );
            assert_eq!(fake.requests().len(), 1);
        }
    }
}

#[tokio::test]
async fn cancellation_ends_a_waiting_call() {
    for p in Protocol::ALL {
        let fake =
            FakeProvider::start(Script::new(vec![ScriptedTurn::text("late").delayed(5_000)]))
                .await
                .unwrap();
        let model = connector(&fake, p);
        let ctx = CallContext::default();
        let cancel = ctx.cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            cancel.cancel();
        });
        let result = tokio::time::timeout(BOUND, model.complete(&request(), &ctx))
            .await
            .unwrap();
        assert_eq!(result, Err(ProviderError::Cancelled), "{p:?}");
    }
}

#[tokio::test]
async fn cancellation_ends_a_stream_mid_way() {
    for p in Protocol::ALL {
        let fake =
            FakeProvider::start(Script::new(vec![ScriptedTurn::fault(Fault::StallStream {
                after_frames: 2,
                stall_ms: 5_000,
                reply: tool_reply(),
            })]))
            .await
            .unwrap();
        let model = connector(&fake, p);
        let ctx = CallContext::default();
        let cancel = ctx.cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(150)).await;
            cancel.cancel();
        });
        let (events, err) = stream_until_error(&model, &ctx).await;
        assert_eq!(err, Some(ProviderError::Cancelled), "{p:?}");
        assert!(calls_of_events(&events).is_empty(), "{p:?}");
    }
}

fn calls_of_events(events: &[StreamEvent]) -> Vec<&StreamEvent> {
    events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolCall(_)))
        .collect()
}

#[tokio::test]
async fn attempt_hook_can_refuse_a_retry() {
    let fake = FakeProvider::start(Script::new(vec![
        status(500, None),
        ScriptedTurn::text("ok"),
    ]))
    .await
    .unwrap();
    let ctx = CallContext {
        on_attempt: Some(Arc::new(|a: &Attempt| {
            if a.number > 1 {
                Err(ProviderError::AttemptRefused {
                    reason: AttemptRefusal::Other("call budget spent".into()),
                })
            } else {
                Ok(())
            }
        })),
        ..CallContext::default()
    };
    let result = connector(&fake, Protocol::Anthropic)
        .complete(&request(), &ctx)
        .await;
    assert!(
        matches!(result, Err(ProviderError::AttemptRefused { .. })),
        "{result:?}"
    );
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn api_keys_never_appear_in_debug_or_errors() {
    const KEY: &str = "sk-live-abcdef0123456789";
    for p in Protocol::ALL {
        let fake = FakeProvider::start(Script::new(vec![status(401, None), status(500, None)]))
            .await
            .unwrap();
        let config = fake
            .connector_config(p)
            .with_credential(Credential::Key(verdict_providers::ApiKey::new(KEY)))
            .with_retry(RetryPolicy::none());
        let printed_config = format!("{config:?}");
        let model = Connector::new(config).unwrap();
        let err1 = call(&model, &request(), false).await.unwrap_err();
        let err2 = call(&model, &request(), true).await.unwrap_err();
        let printed = format!("{printed_config} {model:?} {err1} {err1:?} {err2} {err2:?}");
        assert!(!printed.contains(KEY), "{printed}");
        // ...while the key did reach the provider, in the vendor's header.
        let sent = fake.requests();
        let (header, value) = match p {
            Protocol::OpenAiChat | Protocol::OpenAiResponses => {
                ("authorization", format!("Bearer {KEY}"))
            }
            Protocol::Anthropic => ("x-api-key", KEY.to_owned()),
            Protocol::Gemini => ("x-goog-api-key", KEY.to_owned()),
            other => panic!("no documented key header for {other:?}"),
        };
        assert_eq!(sent[0].header(header), Some(value.as_str()), "{p:?}");
    }
}

#[tokio::test]
async fn missing_environment_key_is_reported_by_name() {
    let config = ConnectorConfig::new("x", Protocol::Anthropic)
        .with_credential(Credential::Env("VERDICT_TEST_SURELY_UNSET_KEY".into()));
    let err = Connector::new(config).unwrap_err();
    assert_eq!(
        err,
        ProviderError::MissingCredential {
            env_var: "VERDICT_TEST_SURELY_UNSET_KEY".into()
        }
    );
}

#[test]
fn gemini_retry_delay_in_the_body_is_read() {
    let body = json!({"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"}]}});
    let err = verdict_providers::wire::classify_error(
        429,
        &Default::default(),
        body.to_string().as_bytes(),
    );
    assert_eq!(
        err,
        ProviderError::RateLimited {
            retry_after: Some(Duration::from_secs(17)),
            message: "Resource exhausted".into()
        }
    );
}

#[tokio::test]
async fn connection_refused_is_a_retried_transport_error() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let config = ConnectorConfig::new("nobody", Protocol::OpenAiChat)
        .with_base_url(format!("http://127.0.0.1:{port}/v1"))
        .with_credential(Credential::None)
        .with_retry(RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(10),
        });
    let (ctx, seen) = recording_ctx();
    let result = tokio::time::timeout(
        BOUND,
        Connector::new(config).unwrap().complete(&request(), &ctx),
    )
    .await
    .unwrap();
    assert!(
        matches!(result, Err(ProviderError::Transport { .. })),
        "{result:?}"
    );
    assert_eq!(seen.lock().unwrap().len(), 3);
}

/// A loopback listener that never completes another handshake: its accept
/// queue (backlog 0) is filled by a connection it never accepts, so Linux
/// drops every further SYN. Returns the address and the connections that
/// must stay open for as long as it is used.
#[cfg(target_os = "linux")]
async fn listener_that_never_accepts() -> (
    std::net::SocketAddr,
    tokio::net::TcpListener,
    Vec<tokio::net::TcpStream>,
) {
    let listener = tokio::net::TcpSocket::new_v4()
        .and_then(|socket| {
            socket.bind(([127, 0, 0, 1], 0).into())?;
            socket.listen(0)
        })
        .unwrap_or_else(|e| panic!("listener: {e}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("listener: {e}"));
    // Fill the queue until one more handshake hangs (one connection with
    // backlog 0 here; the loop does not rely on the kernel's exact count).
    let mut queued = Vec::new();
    loop {
        assert!(queued.len() < 16, "the accept queue never filled up");
        let probe = tokio::net::TcpStream::connect(addr);
        match tokio::time::timeout(Duration::from_millis(300), probe).await {
            Ok(Ok(stream)) => queued.push(stream),
            Ok(Err(e)) => panic!("a full accept queue refused instead of dropping: {e}"),
            Err(_) if queued.is_empty() => panic!("an empty accept queue did not connect"),
            Err(_) => return (addr, listener, queued),
        }
    }
}

/// A handshake that never completes ends after the connect timeout, in the
/// connect phase, and is retried (nothing was sent).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_handshake_that_never_completes_is_a_connect_timeout() {
    let (addr, _listener, _queued) = listener_that_never_accepts().await;
    let mut config = ConnectorConfig::new("unreachable", Protocol::OpenAiChat)
        .with_base_url(format!("http://{addr}/v1"))
        .with_credential(Credential::None)
        .with_retry(RetryPolicy {
            max_retries: 1,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(10),
        });
    config.timeouts.connect = Duration::from_millis(200);
    let (ctx, seen) = recording_ctx();
    let result = tokio::time::timeout(
        BOUND,
        Connector::new(config).unwrap().complete(&request(), &ctx),
    )
    .await
    .unwrap();
    assert_eq!(
        result,
        Err(ProviderError::Timeout {
            phase: TimeoutPhase::Connect,
            after: Duration::from_millis(200),
        })
    );
    assert_eq!(seen.lock().unwrap().len(), 2, "one retry");
}
