//! Server-sent events: turning a response body into typed [`StreamEvent`]s
//! (parsing by the `eventsource-stream` crate), and writing SSE frames for
//! the fake provider.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::{EventStreamError, Eventsource};
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use verdict_policy::CancelHandle;

use crate::errors::{ProviderError, TimeoutPhase};
use crate::model::{EventStream, ModelResponse, StreamEvent};

/// Decodes one protocol's SSE events into stream events.
pub(crate) trait StreamDecoder: Send {
    /// Feed one SSE event (`name` is `"message"` when the server sent no
    /// `event:` line). Pushes zero or more events to `out`; returns `true` once
    /// the protocol's end marker was seen and no more events are expected.
    fn event(
        &mut self,
        name: &str,
        data: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<bool, ProviderError>;

    /// The body ended (or the end marker came): build the final response.
    /// Fails with [`ProviderError::TruncatedStream`] if the turn is incomplete.
    fn finish(self: Box<Self>) -> Result<ModelResponse, ProviderError>;
}

/// One SSE frame to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseFrame {
    /// The `event:` name, if any.
    pub event: Option<String>,
    /// The `data:` payload (one line).
    pub data: String,
}

#[cfg_attr(not(feature = "fake"), allow(dead_code))]
impl SseFrame {
    /// A frame with only `data:`.
    pub fn data(data: impl Into<String>) -> Self {
        Self {
            event: None,
            data: data.into(),
        }
    }

    /// A frame with `event:` and `data:`.
    pub fn named(event: impl Into<String>, data: impl Into<String>) -> Self {
        Self {
            event: Some(event.into()),
            data: data.into(),
        }
    }

    /// Wire bytes of the frame, with `\n` or `\r\n` line endings.
    pub fn encode(&self, crlf: bool) -> String {
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut out = String::with_capacity(self.data.len() + 32);
        if let Some(event) = &self.event {
            out.push_str("event: ");
            out.push_str(event);
            out.push_str(nl);
        }
        out.push_str("data: ");
        out.push_str(&self.data);
        out.push_str(nl);
        out.push_str(nl);
        out
    }
}

/// Largest piece of body handed to the SSE parser at once.
///
/// `eventsource-stream` 0.2.3 copies the rest of its buffer after every line
/// it consumes, so its cost grows with the square of the chunk it is given
/// (measured: a 1 MB body in one chunk parses at under 5 MB/s). Handing it
/// pieces of this size (zero-copy `Bytes` slices) keeps the parse linear.
const PARSE_CHUNK: usize = 1024;

/// Split every body chunk into pieces of at most [`PARSE_CHUNK`] bytes.
fn rechunk<E: Send + 'static>(
    body: impl Stream<Item = Result<Bytes, E>> + Send + 'static,
) -> impl Stream<Item = Result<Bytes, E>> + Send + 'static {
    body.flat_map(|item| {
        let pieces: Vec<Result<Bytes, E>> = match item {
            Ok(bytes) => (0..bytes.len())
                .step_by(PARSE_CHUNK)
                .map(|start| Ok(bytes.slice(start..(start + PARSE_CHUNK).min(bytes.len()))))
                .collect(),
            Err(e) => vec![Err(e)],
        };
        futures::stream::iter(pieces)
    })
}

/// Run a whole SSE body through a decoder without HTTP (tests, benches):
/// the same events a live stream yields, ending with
/// [`StreamEvent::Completed`].
#[cfg(any(test, feature = "wire"))]
pub(crate) fn decode_sse_bytes(
    body: &[u8],
    mut decoder: Box<dyn StreamDecoder>,
) -> Result<Vec<StreamEvent>, ProviderError> {
    let chunks = futures::stream::iter([Ok::<_, std::convert::Infallible>(
        Bytes::copy_from_slice(body),
    )]);
    let mut parsed = futures::executor::block_on_stream(rechunk(chunks).eventsource().boxed());
    let mut out = Vec::new();
    for event in parsed.by_ref() {
        let event = event.map_err(|e| ProviderError::malformed(format!("SSE: {e}")))?;
        if decoder.event(&event.event, &event.data, &mut out)? {
            break;
        }
    }
    let response = decoder.finish()?;
    out.extend(closing_events(&response));
    Ok(out)
}

/// State of a live stream being decoded.
#[cfg(feature = "http")]
struct Driver {
    events: BoxStream<'static, Result<eventsource_stream::Event, EventStreamError<reqwest::Error>>>,
    decoder: Option<Box<dyn StreamDecoder>>,
    pending: VecDeque<StreamEvent>,
    cancel: CancelHandle,
    idle: Duration,
    attempts: u32,
    ended: bool,
}

/// Decode a streaming HTTP body into an [`EventStream`]. Every wait for the
/// next chunk is bounded by `idle`; cancelling `cancel` ends the stream with
/// [`ProviderError::Cancelled`].
#[cfg(feature = "http")]
pub(crate) fn drive(
    body: impl Stream<Item = Result<Bytes, reqwest::Error>> + Send + 'static,
    decoder: Box<dyn StreamDecoder>,
    cancel: CancelHandle,
    idle: Duration,
    attempts: u32,
) -> EventStream {
    let driver = Driver {
        events: rechunk(body).eventsource().boxed(),
        decoder: Some(decoder),
        pending: VecDeque::new(),
        cancel,
        idle,
        attempts,
        ended: false,
    };
    Box::pin(futures::stream::unfold(driver, |mut d| async move {
        let item = d.next_item().await?;
        Some((item, d))
    }))
}

#[cfg(feature = "http")]
impl Driver {
    async fn next_item(&mut self) -> Option<Result<StreamEvent, ProviderError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(Ok(event));
            }
            if self.ended {
                return None;
            }
            let next = tokio::select! {
                biased;
                () = self.cancel.cancelled() => return self.fail(ProviderError::Cancelled),
                next = tokio::time::timeout(self.idle, self.events.next()) => next,
            };
            let finished = match next {
                Err(_) => {
                    return self.fail(ProviderError::Timeout {
                        phase: TimeoutPhase::Idle,
                        after: self.idle,
                    });
                }
                Ok(None) => true,
                Ok(Some(Err(EventStreamError::Transport(e)))) => {
                    return self.fail(ProviderError::truncated(format!(
                        "body ended abnormally: {e}"
                    )));
                }
                Ok(Some(Err(e))) => {
                    return self.fail(ProviderError::malformed(format!("SSE: {e}")));
                }
                Ok(Some(Ok(event))) => {
                    let decoder = self.decoder.as_mut()?;
                    let mut out = Vec::new();
                    match decoder.event(&event.event, &event.data, &mut out) {
                        Ok(done) => {
                            self.pending.extend(out);
                            done
                        }
                        Err(e) => return self.fail(e),
                    }
                }
            };
            if finished {
                return self.complete();
            }
        }
    }

    fn fail(&mut self, error: ProviderError) -> Option<Result<StreamEvent, ProviderError>> {
        self.ended = true;
        self.pending.clear();
        self.decoder = None;
        Some(Err(error))
    }

    fn complete(&mut self) -> Option<Result<StreamEvent, ProviderError>> {
        let decoder = self.decoder.take()?;
        self.ended = true;
        match decoder.finish() {
            Ok(mut response) => {
                response.attempts = self.attempts;
                self.pending.extend(closing_events(&response));
                self.pending.pop_front().map(Ok)
            }
            Err(e) => self.fail(e),
        }
    }
}

/// Completed tool calls then the final response, for decoders used outside
/// [`drive`] (the same order a live stream yields).
pub(crate) fn closing_events(response: &ModelResponse) -> Vec<StreamEvent> {
    let mut events: Vec<StreamEvent> = response
        .tool_calls
        .iter()
        .cloned()
        .map(StreamEvent::ToolCall)
        .collect();
    events.push(StreamEvent::Completed(response.clone()));
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Yields every event's data as text; the body's end completes it.
    struct Echo;

    impl StreamDecoder for Echo {
        fn event(
            &mut self,
            _name: &str,
            data: &str,
            out: &mut Vec<StreamEvent>,
        ) -> Result<bool, ProviderError> {
            out.push(StreamEvent::TextDelta(data.to_owned()));
            Ok(false)
        }

        fn finish(self: Box<Self>) -> Result<ModelResponse, ProviderError> {
            Ok(ModelResponse::default())
        }
    }

    #[test]
    fn multibyte_text_split_across_parse_chunks_survives() {
        // 'é' is two bytes; an odd prefix puts chunk edges inside characters.
        let text: String = std::iter::repeat_n('é', 3 * PARSE_CHUNK).collect();
        let body = format!("data: {text}\n\n");
        let events = decode_sse_bytes(body.as_bytes(), Box::new(Echo));
        let Ok(events) = events else {
            panic!("{events:?}");
        };
        assert_eq!(events.first(), Some(&StreamEvent::TextDelta(text)));
        assert!(body.len() > 4 * PARSE_CHUNK);
    }

    #[test]
    fn frames_encode_with_either_line_ending() {
        let frame = SseFrame::named("ping", "{}");
        assert_eq!(frame.encode(false), "event: ping\ndata: {}\n\n");
        assert_eq!(SseFrame::data("x").encode(true), "data: x\r\n\r\n");
    }
}
