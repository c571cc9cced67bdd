//! Keeping the signals that deliver a guest's traps deliverable while it
//! runs.
//!
//! wasmtime turns a guest's out-of-bounds access, `unreachable` or division
//! by zero into a trap through its signal handlers (`SIGSEGV`, `SIGBUS`,
//! `SIGILL`, `SIGFPE`). A fault signal blocked on the faulting thread is not
//! left pending: the kernel kills the process. Embedders often block every
//! signal on their threads and take them on one dedicated thread (with
//! `sigwait`), and a thread a call moves to inherits its creator's mask; so a
//! guest's `unreachable` on such a thread would take the whole host down.
//!
//! [`TrapSignals`] is held for each poll of a call (the only place guest
//! code runs; see [`crate::call::handoff`]): it unblocks these four signals on the
//! polling thread and, when any of them was blocked, restores the thread's
//! mask when the poll returns. A thread whose mask is the default pays one
//! `pthread_sigmask` per poll.

use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};

/// The signals wasmtime's trap handlers need.
const TRAP_SIGNALS: [Signal; 4] = [
    Signal::SIGSEGV,
    Signal::SIGBUS,
    Signal::SIGILL,
    Signal::SIGFPE,
];

/// The trap signals unblocked on this thread until dropped.
pub(crate) struct TrapSignals {
    /// The thread's mask before, when it blocked any trap signal.
    restore: Option<SigSet>,
}

impl TrapSignals {
    pub(crate) fn enter() -> Self {
        let traps: SigSet = TRAP_SIGNALS.into_iter().collect();
        let mut before = SigSet::empty();
        match pthread_sigmask(SigmaskHow::SIG_UNBLOCK, Some(&traps), Some(&mut before)) {
            Ok(()) => Self {
                restore: TRAP_SIGNALS
                    .into_iter()
                    .any(|s| before.contains(s))
                    .then_some(before),
            },
            Err(e) => {
                tracing::warn!(error = %e, "cannot unblock the trap signals for a verifier call");
                Self { restore: None }
            }
        }
    }
}

impl Drop for TrapSignals {
    fn drop(&mut self) {
        if let Some(before) = self.restore.take()
            && let Err(e) = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&before), None)
        {
            tracing::warn!(error = %e, "cannot restore a thread's signal mask after a verifier call");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask() -> SigSet {
        let mut now = SigSet::empty();
        assert!(pthread_sigmask(SigmaskHow::SIG_BLOCK, None, Some(&mut now)).is_ok());
        now
    }

    /// While held the trap signals are unblocked; afterwards the
    /// thread's own mask (everything blocked) is back.
    #[test]
    fn a_poll_unblocks_the_trap_signals_and_restores_the_mask() {
        let seen = std::thread::spawn(|| {
            assert!(pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&SigSet::all()), None).is_ok());
            let during = {
                let _unblocked = TrapSignals::enter();
                mask()
            };
            (during, mask())
        })
        .join();
        let Ok((during, after)) = seen else {
            panic!("the thread panicked")
        };
        for s in TRAP_SIGNALS {
            assert!(!during.contains(s), "{s} blocked during the poll");
            assert!(after.contains(s), "{s} not restored after the poll");
        }
        assert!(
            during.contains(Signal::SIGTERM),
            "other signals stay blocked"
        );
    }
}
