//! `wasi:io/poll` with a call's timers on its tape.
//!
//! Every pollable answers as `wasmtime-wasi-io` answers it, except a timer
//! (a pollable from `subscribe-duration` or `subscribe-instant`) of a
//! recorded or replayed call: recording, each `ready()`, `block()` and
//! `poll` naming a timer is answered live and written down; replaying, it
//! is answered from the tape, at once (a `block` does not sleep the
//! recorded time). A replay asking another question than recorded is noted
//! as a [`TapeMismatch`](crate::store::tape::TapeMismatch) and answered
//! live from there on.

use crate::store::tape::{TapeState, TimerAnswer, TimerQuestion};
use wasmtime::component::{HasData, Resource, ResourceTable};
use wasmtime_wasi_io::bindings::wasi::io::poll;
use wasmtime_wasi_io::poll::DynPollable;

/// `HasData` projection for `wasi:io/poll`.
pub(crate) struct TapedPoll;

impl HasData for TapedPoll {
    type Data<'a> = PollView<'a>;
}

/// What `wasi:io/poll` sees of the call state.
pub(crate) struct PollView<'a> {
    pub(crate) table: &'a mut ResourceTable,
    /// The call's tape, when it is recorded or replayed.
    pub(crate) tape: Option<&'a mut TapeState>,
}

impl poll::Host for PollView<'_> {
    async fn poll(&mut self, pollables: Vec<Resource<DynPollable>>) -> wasmtime::Result<Vec<u32>> {
        let Self { table, tape } = self;
        let tape = tape
            .as_deref_mut()
            .filter(|tape| pollables.iter().any(|p| tape.is_timer(p.rep())));
        let Some(tape) = tape else {
            return poll::Host::poll(&mut **table, pollables).await;
        };
        let question = TimerQuestion::Poll {
            asked: u32::try_from(pollables.len())?,
        };
        let ready = match tape.replayed(question) {
            Some(TimerAnswer::Polled(ready)) => ready,
            _ => poll::Host::poll(&mut **table, pollables).await?,
        };
        tape.timer(question, TimerAnswer::Polled(ready.clone()));
        Ok(ready)
    }
}

impl poll::HostPollable for PollView<'_> {
    async fn block(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<()> {
        let rep = pollable.rep();
        let Self { table, tape } = self;
        let Some(tape) = tape.as_deref_mut().filter(|tape| tape.is_timer(rep)) else {
            return poll::HostPollable::block(&mut **table, pollable).await;
        };
        if tape.replayed(TimerQuestion::Block).is_none() {
            poll::HostPollable::block(&mut **table, pollable).await?;
        }
        tape.timer(TimerQuestion::Block, TimerAnswer::Blocked);
        Ok(())
    }

    async fn ready(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<bool> {
        let rep = pollable.rep();
        let Self { table, tape } = self;
        let Some(tape) = tape.as_deref_mut().filter(|tape| tape.is_timer(rep)) else {
            return poll::HostPollable::ready(&mut **table, pollable).await;
        };
        let ready = match tape.replayed(TimerQuestion::Ready) {
            Some(TimerAnswer::Ready(ready)) => ready,
            _ => poll::HostPollable::ready(&mut **table, pollable).await?,
        };
        tape.timer(TimerQuestion::Ready, TimerAnswer::Ready(ready));
        Ok(ready)
    }

    fn drop(&mut self, pollable: Resource<DynPollable>) -> wasmtime::Result<()> {
        if let Some(tape) = self.tape.as_deref_mut() {
            tape.pollable_dropped(pollable.rep());
        }
        poll::HostPollable::drop(&mut *self.table, pollable)
    }
}
