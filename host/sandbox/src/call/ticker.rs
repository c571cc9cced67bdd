//! The epoch ticker: advances the engine's epoch at a steady rate.
//!
//! Every store sets its own deadline in ticks; the ticker never bumps the
//! epoch to stop one call, so a timeout in one call cannot fail another.
//! Between ticks it also wakes the calls whose wake-up instant has come
//! (see [`crate::call::timer`]): guests sleeping in a host import, and calls
//! waiting for their deadline.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wasmtime::EngineWeak;

use crate::call::timer::Timers;
use crate::call::wakeup::PromptWake;

/// Owns the ticker thread; stops and joins it on drop.
#[derive(Debug)]
pub(crate) struct Ticker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    /// Starts ticking `engine` every `period`, firing `timers` as they come due.
    pub(crate) fn start(
        engine: EngineWeak,
        period: Duration,
        timers: Arc<Timers>,
    ) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("verdict-epoch".into())
            .spawn(move || {
                // Its sleeps end at their instant and it runs then, also
                // when every core is busy: every deadline interrupt and
                // wake-up it serves is only as prompt as it is.
                let _prompt = PromptWake::enter();
                // Ticks at fixed instants (no drift from the work between
                // sleeps); wakes earlier for a wake-up due before the tick.
                let mut next_tick = Instant::now() + period;
                while !flag.load(Ordering::Relaxed) {
                    let wake = timers.plan_wake(next_tick);
                    let now = Instant::now();
                    if wake > now {
                        // Returns early when an earlier wake-up is
                        // registered (or spuriously): then it re-plans.
                        std::thread::park_timeout(wake - now);
                    }
                    let now = Instant::now();
                    if now >= next_tick {
                        match engine.upgrade() {
                            Some(engine) => engine.increment_epoch(),
                            None => break,
                        }
                        next_tick += period;
                        if next_tick <= now {
                            // Descheduled past a tick: resume from now
                            // rather than catch up in a burst.
                            next_tick = now + period;
                        }
                    }
                    timers.fire(now);
                    crate::call::background::nudge();
                }
            })?;
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // What the last calls queued runs even when no ticker is left.
        crate::call::background::nudge();
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            // A waker the ticker fires can hold the last reference to the
            // host (an async task holding a verifier), and then this runs on
            // the ticker thread itself, which must not join itself: it stops
            // at its next check of the flag.
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::sync::mpsc;
    use std::task::{Wake, Waker};

    struct Notify(Mutex<mpsc::Sender<Instant>>);

    impl Wake for Notify {
        fn wake(self: Arc<Self>) {
            let _ = self.0.lock().map(|tx| tx.send(Instant::now()));
        }
    }

    /// Reports the timer slack and the scheduler slice of the thread that
    /// wakes it (the ticker's, read there: another thread's slack needs
    /// `CAP_SYS_NICE`).
    struct SlackOfWaker(Mutex<mpsc::Sender<(Option<i32>, Option<u64>)>>);

    impl Wake for SlackOfWaker {
        fn wake(self: Arc<Self>) {
            let slack = nix::sys::prctl::get_timerslack().ok();
            let slice = crate::call::wakeup::current_slice();
            let _ = self.0.lock().map(|tx| tx.send((slack, slice)));
        }
    }

    /// A ticker started by a thread with a 50 ms timer slack (its thread
    /// would inherit it) sleeps with the smallest slack, and asks for the
    /// shortest scheduler slice where the kernel takes one.
    #[test]
    fn the_ticker_does_not_inherit_a_large_timer_slack() {
        let own_slice = crate::call::wakeup::current_slice();
        let seen = std::thread::spawn(|| {
            assert!(nix::sys::prctl::set_timerslack(50_000_000).is_ok());
            let engine = wasmtime::Engine::default();
            let timers = Arc::new(Timers::default());
            let ticker =
                Ticker::start(engine.weak(), Duration::from_millis(1), Arc::clone(&timers));
            assert!(ticker.is_ok());
            let (tx, rx) = mpsc::channel();
            let waker = Waker::from(Arc::new(SlackOfWaker(Mutex::new(tx))));
            timers.wake_at(Instant::now(), &waker);
            rx.recv_timeout(Duration::from_secs(30)).ok()
        })
        .join();
        let Ok(Some((slack, slice))) = seen else {
            panic!("the test thread panicked or the ticker never woke it")
        };
        assert_eq!(slack, Some(1), "the ticker's timer slack (ns)");
        // A kernel with custom slices (6.12+) reports a default longer than
        // 0.1 ms for this thread; an older one reports none.
        if own_slice.is_some_and(|ns| ns > 100_000) {
            assert_eq!(slice, Some(100_000), "the ticker's slice (ns)");
        }
    }

    #[test]
    fn a_wake_up_between_ticks_comes_at_its_instant_not_at_the_next_tick() {
        let engine = wasmtime::Engine::default();
        let timers = Arc::new(Timers::default());
        // Ticks 60 s apart: a wake-up served only at ticks would wait that.
        let ticker = Ticker::start(engine.weak(), Duration::from_secs(60), Arc::clone(&timers));
        assert!(ticker.is_ok());
        let (tx, rx) = mpsc::channel();
        let waker = Waker::from(Arc::new(Notify(Mutex::new(tx))));
        // Once the ticker is asleep (planned for its tick), and once right
        // away (it may not have planned yet).
        for delay in [Duration::from_millis(50), Duration::ZERO] {
            std::thread::sleep(delay);
            let at = Instant::now() + Duration::from_millis(20);
            timers.wake_at(at, &waker);
            let woken = rx.recv_timeout(Duration::from_secs(30));
            assert!(woken.is_ok_and(|t| t >= at), "woken at its instant");
        }
        drop(ticker);
        assert_eq!(timers.len(), 0);
    }
}
