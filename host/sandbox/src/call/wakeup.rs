//! A blocking caller woken at its instant when every core is busy.
//!
//! A blocking check whose guest moved to a worker ([`crate::call::handoff`])
//! leaves its caller asleep until the report, the deadline or cancellation.
//! Its timer fires on time; what makes it late is the scheduler: a
//! normal-priority thread woken beside busy ones waits until the running
//! task's slice ends (one kernel tick, 4 ms at `HZ=250`) unless the
//! scheduler lets it preempt, which Linux's EEVDF scheduler (6.12 and
//! later) does for a task that asked for a shorter slice than the running
//! one's. Measured on 2 cores with 5 busy threads, a 10 ms sleep came back
//! more than 1 ms late in 28 of 300 sleeps with the default slice, and in
//! 2–5 of 300 with a 0.1 ms one.
//!
//! [`PromptWake`] is held while the caller sleeps, and for its whole life
//! by the epoch ticker ([`crate::call::ticker`]), whose wake-ups end guest sleeps
//! and wake async callers at their deadlines: it asks for the
//! shortest slice the kernel grants (0.1 ms) and the smallest timer slack
//! (the sleep ends at its instant, not up to the inherited 50 µs later),
//! and restores both when the wait ends. Neither changes the thread's share
//! of the CPU (its weight is its nice value's) or needs a privilege; a
//! thread under a real-time or idle policy, or one that already asked for a
//! slice this short, is left as it is, as is every thread on a kernel
//! without custom slices (it reports no slice).
//!
//! A caller waiting with prompt wake-ups also wakes every [`CHECK_IN`]
//! to poll again, instead of sleeping to its deadline in one go. The caller
//! ran the guest's first tick itself before the guest moved, so it goes to
//! sleep having used more than its share of the CPU. As we read the
//! measurements, EEVDF keeps that debt (negative lag) across the sleep, and
//! a thread woken in debt is not eligible to run until the others catch up,
//! which with every core busy and no high-resolution tick is the next
//! tick; woken every millisecond, the caller pays it off while it waits.
//! Measured with a standalone model on 2 cores with 5 busy threads, 10 ms
//! sleeps with the short slice: more than 2 ms late in 65 and 66 of 600
//! when 1 ms of work came before each sleep, 6–7 of 300 with no work
//! before it, 0 and 0 of 600 with the work and check-ins every 1 ms (1 and
//! 1 every 2 ms, 3 and 2 every 4 ms; waking only in the last 3–5 ms before
//! the deadline, or only after it, helped less or not at all).
//!
//! The one `unsafe` here is the `sched_getattr`/`sched_setattr` system
//! calls: no maintained crate wraps them (`libc` has only their numbers;
//! `thread-priority` reads the attributes but cannot set a slice).

/// How often a caller waiting with prompt wake-ups wakes to poll again
/// (see the module docs).
pub(crate) const CHECK_IN: std::time::Duration = std::time::Duration::from_millis(1);

/// The slice a waiting caller asks for, in nanoseconds: the kernel's
/// smallest (it clamps requests to 0.1–100 ms).
const SHORT_SLICE_NS: u64 = 100_000;

/// A caller's prompt wake-ups until dropped (see the module docs).
pub(crate) struct PromptWake {
    /// The thread's own timer slack, when it was changed.
    slack: Option<u64>,
    /// The thread's own scheduling attributes, when its slice was changed.
    sched: Option<sched::Attr>,
}

impl PromptWake {
    /// Asks for prompt wake-ups on the calling thread.
    pub(crate) fn enter() -> Self {
        let slack = nix::sys::prctl::get_timerslack()
            .ok()
            .and_then(|ns| u64::try_from(ns).ok())
            .filter(|&ns| ns > 1 && nix::sys::prctl::set_timerslack(1).is_ok());
        let sched = sched::current().filter(|attr| {
            attr.takes_a_slice()
                && attr.runtime > SHORT_SLICE_NS
                && sched::set(&attr.with_slice(SHORT_SLICE_NS))
        });
        Self { slack, sched }
    }
}

impl Drop for PromptWake {
    fn drop(&mut self) {
        if let Some(ns) = self.slack {
            let _ = nix::sys::prctl::set_timerslack(ns);
        }
        if let Some(attr) = &self.sched
            && !sched::set(attr)
        {
            tracing::warn!("a caller kept the short scheduler slice it asked for while it waited");
        }
    }
}

/// The scheduling attributes of the calling thread, as `sched_getattr(2)`
/// and `sched_setattr(2)` read and write them.
mod sched {
    /// `struct sched_attr` (its first, `SCHED_ATTR_SIZE_VER1` layout).
    #[repr(C)]
    #[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
    pub(super) struct Attr {
        size: u32,
        policy: u32,
        flags: u64,
        nice: i32,
        priority: u32,
        /// Under a normal policy: the slice, in nanoseconds (6.12 and
        /// later; 0 on earlier kernels).
        pub(super) runtime: u64,
        deadline: u64,
        period: u64,
        util_min: u32,
        util_max: u32,
    }

    const SCHED_OTHER: u32 = 0;
    const SCHED_BATCH: u32 = 3;
    /// The thread the call is about: 0 is the calling one.
    const THIS_THREAD: libc::pid_t = 0;

    impl Attr {
        /// Whether the thread runs under a normal policy, where the
        /// runtime field is its slice.
        pub(super) fn takes_a_slice(&self) -> bool {
            matches!(self.policy, SCHED_OTHER | SCHED_BATCH)
        }

        /// The same attributes with another slice. The flags are the ones
        /// `sched_getattr` reported (at most reset-on-fork), so the
        /// utilization clamps, which only their flags would change, stay.
        pub(super) fn with_slice(&self, ns: u64) -> Self {
            Self {
                runtime: ns,
                ..*self
            }
        }
    }

    /// The calling thread's attributes; `None` where the system call is
    /// missing or refused (e.g. by a seccomp filter).
    pub(super) fn current() -> Option<Attr> {
        let mut attr = Attr::default();
        let size = u32::try_from(std::mem::size_of::<Attr>()).ok()?;
        // SAFETY: the kernel writes at most `size` bytes, the size of
        // `attr`, a live and aligned `repr(C)` local laid out as its
        // `struct sched_attr`; it keeps no reference after the call.
        #[allow(unsafe_code)]
        let ret = unsafe {
            libc::syscall(
                libc::SYS_sched_getattr,
                THIS_THREAD,
                &raw mut attr,
                size,
                0u32,
            )
        };
        (ret == 0).then_some(attr)
    }

    /// Sets the calling thread's attributes; whether the kernel took them.
    pub(super) fn set(attr: &Attr) -> bool {
        let Ok(size) = u32::try_from(std::mem::size_of::<Attr>()) else {
            return false;
        };
        let attr = Attr { size, ..*attr };
        // SAFETY: the kernel reads `attr.size` bytes, the size of `attr`,
        // a live and aligned `repr(C)` local laid out as its
        // `struct sched_attr`; it keeps no reference after the call.
        #[allow(unsafe_code)]
        let ret =
            unsafe { libc::syscall(libc::SYS_sched_setattr, THIS_THREAD, &raw const attr, 0u32) };
        ret == 0
    }
}

/// The calling thread's scheduler slice in nanoseconds, as the kernel
/// reports it (`None` where it reports none).
#[cfg(test)]
pub(crate) fn current_slice() -> Option<u64> {
    sched::current()
        .filter(sched::Attr::takes_a_slice)
        .map(|attr| attr.runtime)
        .filter(|&ns| ns > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiting_caller_asks_for_the_short_slice_and_gets_its_own_back() {
        // A fresh thread: the test harness's may share state with others.
        let seen = std::thread::spawn(|| {
            let before = (current_slice(), nix::sys::prctl::get_timerslack().ok());
            let during = {
                let _wake = PromptWake::enter();
                (current_slice(), nix::sys::prctl::get_timerslack().ok())
            };
            let after = (current_slice(), nix::sys::prctl::get_timerslack().ok());
            (before, during, after)
        })
        .join();
        let Ok((before, during, after)) = seen else {
            panic!("the test thread panicked")
        };
        assert_eq!(during.1, Some(1), "timer slack while waiting (ns)");
        assert_eq!(after, before, "the thread's own slice and slack, restored");
        match before.0 {
            // A kernel with custom slices (6.12+) reports the default one.
            Some(default) if default > SHORT_SLICE_NS => {
                assert_eq!(during.0, Some(SHORT_SLICE_NS), "slice while waiting");
            }
            // An older kernel reports none, and nothing is asked of it.
            _ => assert_eq!(during.0, before.0),
        }
    }

    #[test]
    fn a_thread_that_asked_for_a_shorter_slice_keeps_it() {
        let seen = std::thread::spawn(|| {
            let own = sched::current().filter(|a| a.takes_a_slice() && a.runtime > 0)?;
            // 0.1 ms is the floor; ask for exactly it, then wait.
            if !sched::set(&own.with_slice(SHORT_SLICE_NS)) {
                return None;
            }
            let during = {
                let wake = PromptWake::enter();
                (wake.sched.is_some(), current_slice())
            };
            Some((during, current_slice()))
        })
        .join();
        let Ok(seen) = seen else {
            panic!("the test thread panicked")
        };
        // `None`: a kernel without custom slices, nothing to check.
        if let Some(((changed, during), after)) = seen {
            assert!(!changed, "an already short slice is not touched");
            assert_eq!(during, Some(SHORT_SLICE_NS));
            assert_eq!(after, Some(SHORT_SLICE_NS));
        }
    }
}
