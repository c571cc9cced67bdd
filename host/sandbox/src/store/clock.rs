//! The virtual clocks a verifier sees: `wasi:clocks` implemented per call.
//!
//! A verdict should follow from the packet and the artifacts, so a guest gets
//! no real clock:
//! - `wall-clock.now` is the call's start, whole milliseconds since the Unix
//!   epoch, the same for the whole call (and reported in the call's metrics
//!   as [`CallMetrics::wall_clock_ms`](crate::CallMetrics::wall_clock_ms));
//! - `monotonic-clock.now` is the time elapsed since the call started,
//!   rounded down to [`CLOCK_RESOLUTION`];
//! - `resolution` is [`CLOCK_RESOLUTION`] for both;
//! - a sleep (`subscribe-duration` / `subscribe-instant`, then `poll` or
//!   `block`) waits at most until the call's deadline: a guest sleeping past
//!   it is stopped there with `timeout`, whatever it asked for. When the
//!   call is taped, whether a sleep is over is on the tape
//!   ([`crate::store::poll`]).

use crate::call::timer::{SleepUntil, Timers};
use crate::store::tape::TapeState;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use wasmtime::component::{HasData, Resource, ResourceTable};
use wasmtime_wasi::p2::bindings::clocks::{monotonic_clock, wall_clock};
use wasmtime_wasi_io::poll::{DynPollable, Pollable, subscribe};

/// Resolution of both clocks: 1 ms.
pub const CLOCK_RESOLUTION: Duration = Duration::from_millis(1);

/// One call's clocks.
#[derive(Debug, Clone)]
pub(crate) struct CallClock {
    started: Instant,
    wall_ms: u64,
    deadline: Instant,
    timers: Arc<Timers>,
}

impl CallClock {
    /// Clocks for a call that started at `started` (wall time `wall`) and
    /// must end by `deadline`.
    pub(crate) fn new(
        started: Instant,
        wall: SystemTime,
        deadline: Instant,
        timers: Arc<Timers>,
    ) -> Self {
        let wall_ms = wall
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        Self {
            started,
            wall_ms,
            deadline,
            timers,
        }
    }

    /// The wall clock every read returns: the call's start, in whole
    /// milliseconds since the Unix epoch.
    pub(crate) fn wall_clock_ms(&self) -> u64 {
        self.wall_ms
    }

    /// Monotonic time: nanoseconds since the call started, rounded down to
    /// the resolution.
    fn monotonic_now(&self) -> u64 {
        let step = CLOCK_RESOLUTION.as_nanos();
        let elapsed = self.started.elapsed().as_nanos();
        u64::try_from(elapsed - elapsed % step).unwrap_or(u64::MAX)
    }

    /// When a sleep until `at` (`None`: beyond what an `Instant` holds)
    /// really ends: at the deadline if that is sooner.
    fn sleep_end(&self, at: Option<Instant>) -> Instant {
        at.map_or(self.deadline, |at| at.min(self.deadline))
    }

    /// A pollable that is ready at [`Self::sleep_end`] of `at`.
    fn sleep_until(
        &self,
        table: &mut ResourceTable,
        at: Option<Instant>,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        let until = self.sleep_end(at);
        let sleep = table.push(Sleep {
            until,
            timers: Arc::clone(&self.timers),
        })?;
        subscribe(table, sleep)
    }
}

/// A pending guest sleep.
struct Sleep {
    until: Instant,
    timers: Arc<Timers>,
}

#[wasmtime_wasi::async_trait]
impl Pollable for Sleep {
    async fn ready(&mut self) {
        SleepUntil::new(self.until, Arc::clone(&self.timers)).await;
    }
}

/// `HasData` projection for the clock interfaces.
pub(crate) struct VirtualClocks;

impl HasData for VirtualClocks {
    type Data<'a> = ClockView<'a>;
}

/// What a clock import sees of the call state.
pub(crate) struct ClockView<'a> {
    pub(crate) clock: &'a CallClock,
    pub(crate) table: &'a mut ResourceTable,
    /// The call's tape: monotonic readings are written to it, or (when
    /// replaying) read from it.
    pub(crate) tape: Option<&'a mut TapeState>,
}

impl ClockView<'_> {
    /// Tells the tape that `timer` is a timer: its readiness is taped
    /// ([`crate::store::poll`]).
    fn taped(&mut self, timer: &Resource<DynPollable>) {
        if let Some(tape) = self.tape.as_deref_mut() {
            tape.timer_subscribed(timer.rep());
        }
    }
}

impl wall_clock::Host for ClockView<'_> {
    fn now(&mut self) -> wasmtime::Result<wall_clock::Datetime> {
        Ok(wall_clock::Datetime {
            seconds: self.clock.wall_ms / 1000,
            nanoseconds: u32::try_from(self.clock.wall_ms % 1000)? * 1_000_000,
        })
    }

    fn resolution(&mut self) -> wasmtime::Result<wall_clock::Datetime> {
        Ok(wall_clock::Datetime {
            seconds: CLOCK_RESOLUTION.as_secs(),
            nanoseconds: CLOCK_RESOLUTION.subsec_nanos(),
        })
    }
}

impl monotonic_clock::Host for ClockView<'_> {
    fn now(&mut self) -> wasmtime::Result<monotonic_clock::Instant> {
        let live = self.clock.monotonic_now();
        Ok(match self.tape.as_deref_mut() {
            Some(tape) => tape.monotonic(live),
            None => live,
        })
    }

    fn resolution(&mut self) -> wasmtime::Result<monotonic_clock::Duration> {
        Ok(u64::try_from(CLOCK_RESOLUTION.as_nanos()).unwrap_or(u64::MAX))
    }

    fn subscribe_instant(
        &mut self,
        when: monotonic_clock::Instant,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        let at = self.clock.started.checked_add(Duration::from_nanos(when));
        let timer = self.clock.sleep_until(self.table, at)?;
        self.taped(&timer);
        Ok(timer)
    }

    fn subscribe_duration(
        &mut self,
        duration: monotonic_clock::Duration,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        let at = Instant::now().checked_add(Duration::from_nanos(duration));
        let timer = self.clock.sleep_until(self.table, at)?;
        self.taped(&timer);
        Ok(timer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(timeout: Duration) -> CallClock {
        let now = Instant::now();
        CallClock::new(
            now,
            SystemTime::UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456),
            now + timeout,
            Arc::new(Timers::default()),
        )
    }

    #[test]
    fn wall_clock_is_the_start_in_whole_milliseconds() {
        let clock = clock(Duration::from_secs(1));
        let mut table = ResourceTable::new();
        let mut view = ClockView {
            clock: &clock,
            table: &mut table,
            tape: None,
        };
        let now = wall_clock::Host::now(&mut view).unwrap();
        assert_eq!((now.seconds, now.nanoseconds), (1_700_000_000, 123_000_000));
        assert_eq!(clock.wall_clock_ms(), 1_700_000_000_123);
        let res = wall_clock::Host::resolution(&mut view).unwrap();
        assert_eq!((res.seconds, res.nanoseconds), (0, 1_000_000));
    }

    #[test]
    fn monotonic_time_is_coarse_elapsed_call_time() {
        let clock = clock(Duration::from_secs(1));
        let mut table = ResourceTable::new();
        let mut view = ClockView {
            clock: &clock,
            table: &mut table,
            tape: None,
        };
        let now = monotonic_clock::Host::now(&mut view).unwrap();
        assert_eq!(now % 1_000_000, 0);
        assert!(now < 60_000_000_000, "starts near zero: {now}");
        assert_eq!(
            monotonic_clock::Host::resolution(&mut view).unwrap(),
            1_000_000
        );
    }

    #[test]
    fn sleeps_end_at_the_deadline_at_the_latest() {
        let clock = clock(Duration::from_millis(5));
        let soon = clock.started + Duration::from_millis(1);
        assert_eq!(clock.sleep_end(Some(soon)), soon);
        let late = clock.started + Duration::from_secs(100_000);
        assert_eq!(clock.sleep_end(Some(late)), clock.deadline);
        assert_eq!(clock.sleep_end(None), clock.deadline);
        let mut table = ResourceTable::new();
        assert!(clock.sleep_until(&mut table, None).is_ok());
    }
}
