//! `Agent::stream`: the managed loop as a stream of typed events.

use std::pin::Pin;
use std::task::{Context, Poll};

use crate::cancel::CancelOnDrop;
use futures::Stream;
use tokio::sync::mpsc::{Receiver, channel};

use super::Agent;
use super::events::{AgentEvent, EVENTS_AHEAD, Events};
use super::execution::Mode;
use super::lease::Lease;
use super::options::RunOptions;

/// The events of one streamed run. Dropping it cancels the run; the
/// settled conversation (tool results included) is still committed and the
/// lease released.
///
/// The run is back-pressured: it waits for the consumer to take an event
/// before it sends the next (at most one event is queued), and it starts a
/// model call only once every earlier event was taken. A consumer that
/// cancels the run while handling an event therefore sees no model call
/// started after that event's turn.
#[derive(Debug)]
pub struct AgentStream {
    // Declared first, so dropped first: the run is cancelled before the
    // channel closes and a waiting send returns.
    _cancel_on_drop: Option<CancelOnDrop>,
    events: Receiver<AgentEvent>,
}

impl Stream for AgentStream {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        self.events.poll_recv(cx)
    }
}

impl Agent {
    /// Runs the same loop as [`Agent::run`] (one decision path: admission,
    /// feedback and checks are shared), streaming the model and yielding
    /// [`AgentEvent`]s; the last event is
    /// [`AgentEvent::ResponseComplete`] or [`AgentEvent::Failed`]. Text
    /// deltas are provisional: a rejected candidate's text is not retracted,
    /// and the final event's diagnostics describe the last candidate.
    ///
    /// Must be called within a tokio runtime (the run is spawned on it).
    pub fn stream(&self, input: impl Into<String>, options: RunOptions) -> AgentStream {
        let (sender, events) = channel(EVENTS_AHEAD);
        let lease = match Lease::take(&self.inner.lease) {
            Ok(lease) => lease,
            Err(error) => {
                // The channel is new: its one slot is free.
                let _ = sender.try_send(AgentEvent::Failed(error.into()));
                return AgentStream {
                    events,
                    _cancel_on_drop: None,
                };
            }
        };
        let cancel = options.cancel.child();
        let options = RunOptions {
            cancel: cancel.clone(),
            ..options
        };
        let agent = self.clone();
        let input = input.into();
        tokio::spawn(async move {
            let sink = Events::to(sender.clone());
            let last = match agent
                .execute(lease, Some(input), options, Mode::STREAM, &sink)
                .await
            {
                Ok(response) => AgentEvent::ResponseComplete(Box::new(response)),
                Err(error) => AgentEvent::Failed(error),
            };
            let _ = sender.send(last).await;
        });
        AgentStream {
            events,
            _cancel_on_drop: Some(CancelOnDrop(cancel)),
        }
    }
}
