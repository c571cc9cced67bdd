//! Turning a scripted turn into an HTTP answer in one protocol's wire
//! format: JSON bodies, SSE streams, and the injected faults.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::Response;
use futures::StreamExt;

use crate::fake::script::{Fault, Reply};
use crate::protocols::FakeProtocol;
use crate::sse::SseFrame;

/// How to answer one request.
pub(crate) struct Answer {
    /// Protocol to speak.
    pub(crate) wire: &'static dyn FakeProtocol,
    /// Model id to report.
    pub(crate) model: String,
    /// Whether the request asked for SSE.
    pub(crate) stream: bool,
}

impl Answer {
    fn frames(&self, reply: &Reply, number: usize) -> Vec<SseFrame> {
        self.wire
            .render_stream(&reply.to_response(number), &self.model, reply.chunk())
    }

    fn encode(&self, frames: &[SseFrame]) -> Vec<Bytes> {
        let crlf = self.wire.stream_uses_crlf();
        frames.iter().map(|f| Bytes::from(f.encode(crlf))).collect()
    }

    pub(crate) fn reply(&self, reply: &Reply, number: usize) -> Response {
        if self.stream {
            let chunks = self.encode(&self.frames(reply, number));
            return sse_response(chunks, false);
        }
        let body = self
            .wire
            .render_response(&reply.to_response(number), &self.model);
        json_response(200, body.to_string())
    }

    pub(crate) fn fault(&self, fault: &Fault, number: usize) -> Response {
        match fault {
            Fault::Status {
                status,
                message,
                retry_after_secs,
            } => error(self.wire, *status, message, *retry_after_secs),
            Fault::CutStream {
                after_frames,
                reply,
            } => {
                let whole = if self.stream {
                    self.encode(&self.frames(reply, number))
                } else {
                    let body = self
                        .wire
                        .render_response(&reply.to_response(number), &self.model);
                    vec![Bytes::from(body.to_string())]
                };
                let keep = (*after_frames).min(whole.len().saturating_sub(1));
                let mut chunks: Vec<Bytes> = whole.iter().take(keep).cloned().collect();
                if let Some(next) = whole.get(keep) {
                    chunks.push(next.slice(..next.len() / 2));
                }
                let kind = if self.stream {
                    "text/event-stream"
                } else {
                    "application/json"
                };
                chunked_response(chunks, true, kind)
            }
            Fault::StallStream {
                after_frames,
                stall_ms,
                reply,
            } => {
                let mut chunks = if self.stream {
                    self.encode(&self.frames(reply, number))
                } else {
                    let body = self
                        .wire
                        .render_response(&reply.to_response(number), &self.model);
                    vec![Bytes::from(body.to_string())]
                };
                let rest = chunks.split_off((*after_frames).min(chunks.len()));
                let kind = if self.stream {
                    "text/event-stream"
                } else {
                    "application/json"
                };
                stalled_response(chunks, Duration::from_millis(*stall_ms), rest, kind)
            }
            Fault::MalformedJson => {
                if self.stream {
                    let mut chunks = self.encode(&self.frames(&Reply::default(), number));
                    chunks.truncate(1);
                    chunks.push(Bytes::from(SseFrame::data("{\"oops\": ").encode(false)));
                    sse_response(chunks, false)
                } else {
                    json_response(200, "{\"id\": \"broken\", this is not json".to_owned())
                }
            }
            Fault::ErrorEvent {
                after_frames,
                status,
                message,
            } => {
                if !self.stream {
                    return error(self.wire, *status, message, None);
                }
                let reply = Reply {
                    text: Some("partial answer that will be interrupted".into()),
                    ..Reply::default()
                };
                let mut frames = self.frames(&reply, number);
                frames.truncate(*after_frames);
                frames.push(self.wire.render_error_event(*status, message));
                sse_response(self.encode(&frames), false)
            }
        }
    }
}

fn json_response(status: u16, body: String) -> Response {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body))
        .unwrap_or_default()
}

pub(crate) fn error(
    wire: &dyn FakeProtocol,
    status: u16,
    message: &str,
    retry_after: Option<u64>,
) -> Response {
    let mut response = json_response(status, wire.render_error(status, message).to_string());
    if let Some(secs) = retry_after
        && let Ok(value) = header::HeaderValue::from_str(&secs.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// An SSE body sending each chunk separately; `abort` ends it with an error,
/// so the connection drops without a clean end of body.
fn sse_response(chunks: Vec<Bytes>, abort: bool) -> Response {
    chunked_response(chunks, abort, "text/event-stream")
}

fn stalled_response(
    first: Vec<Bytes>,
    stall: Duration,
    rest: Vec<Bytes>,
    content_type: &str,
) -> Response {
    let first = futures::stream::iter(first.into_iter().map(Ok::<_, std::io::Error>));
    let rest = futures::stream::once(tokio::time::sleep(stall))
        .flat_map(move |()| futures::stream::iter(rest.clone().into_iter().map(Ok)));
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::from_stream(first.chain(rest)))
        .unwrap_or_default()
}

fn chunked_response(chunks: Vec<Bytes>, abort: bool, content_type: &str) -> Response {
    let body = futures::stream::iter(chunks.into_iter().map(Ok::<_, std::io::Error>));
    // The abort comes a moment after the last chunk, so the client has the
    // headers and the partial data before the connection drops.
    let tail = futures::stream::iter(abort.then_some(())).then(|()| async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            "fake provider cut the stream",
        ))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, content_type)
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(body.chain(tail)))
        .unwrap_or_default()
}
