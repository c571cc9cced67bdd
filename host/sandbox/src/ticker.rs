//! The epoch ticker: advances the engine's epoch at a steady rate.
//!
//! Every store sets its own deadline in ticks; the ticker never bumps the
//! epoch to stop one call, so a timeout in one call cannot fail another.
//! At each tick it also wakes the calls whose wake-up instant has passed
//! (see [`crate::timer`]): guests sleeping in a host import, and calls
//! waiting for their deadline.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wasmtime::EngineWeak;

use crate::timer::Timers;

/// Owns the ticker thread; stops and joins it on drop.
#[derive(Debug)]
pub(crate) struct Ticker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    /// Starts ticking `engine` every `period`, firing `timers` at each tick.
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
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(period);
                    match engine.upgrade() {
                        Some(engine) => engine.increment_epoch(),
                        None => break,
                    }
                    timers.fire(Instant::now());
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
        if let Some(thread) = self.thread.take() {
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
