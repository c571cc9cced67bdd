//! The checkers an execution runs, and closure adapters for native ones.
//!
//! Checkers are given to the agent apart from the loop policy (the default
//! set with [`crate::AgentBuilder::checkers`], a run's own with
//! [`crate::RunOptions::with_checkers`]); the policy engine knows them only
//! by identity. A checker is any [`CompletionChecker`] / [`ProgressChecker`]:
//! a wasm verifier (`verdict_sandbox::WasmChecker`), an async checker
//! implementing the trait (e.g. one asking a [`crate::HelperModel`]), or a
//! blocking closure wrapped in [`CompletionFn`] / [`ProgressFn`].

use std::sync::Arc;

use verdict_policy::{
    CheckContext, CheckFuture, CheckPacket, CheckerError, CheckerIdentities, CompletionChecker,
    ProgressChecker, Verdict,
};

/// The completion and progress checker of an execution (either may be
/// absent: without a completion checker a final answer is returned
/// unverified).
#[derive(Clone, Default)]
pub struct Checkers {
    /// The completion checker.
    pub completion: Option<Arc<dyn CompletionChecker>>,
    /// The progress checker, sampled after tool batches.
    pub progress: Option<Arc<dyn ProgressChecker>>,
}

impl std::fmt::Debug for Checkers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkers")
            .field("identities", &self.identities())
            .finish()
    }
}

impl Checkers {
    /// No checkers.
    pub fn new() -> Self {
        Self::default()
    }

    /// With `checker` as the completion checker.
    pub fn with_completion(mut self, checker: Arc<dyn CompletionChecker>) -> Self {
        self.completion = Some(checker);
        self
    }

    /// With `checker` as the progress checker.
    pub fn with_progress(mut self, checker: Arc<dyn ProgressChecker>) -> Self {
        self.progress = Some(checker);
        self
    }

    /// What the policy engine keeps of them: their identities.
    pub fn identities(&self) -> CheckerIdentities {
        CheckerIdentities {
            completion: self.completion.as_ref().map(|c| c.identity()),
            progress: self.progress.as_ref().map(|c| c.identity()),
        }
    }
}

/// A [`CompletionChecker`] made from a closure. Made with
/// [`CompletionFn::new`], each check runs it on the tokio runtime's
/// blocking threads (on the calling thread outside a runtime) with the
/// packet and the [`CheckContext`]; a cancelled check returns at once,
/// leaving the closure to finish on its own. Made with
/// [`CompletionFn::inline`], it runs on the checking task itself. Either
/// way an answer given after the check's deadline is a
/// [`CheckerError::Timeout`]: a late verdict never confirms an execution.
pub struct CompletionFn<F> {
    check: Arc<F>,
    inline: bool,
}

impl<F> CompletionFn<F>
where
    F: Fn(&CheckPacket, &CheckContext) -> Result<Verdict, CheckerError> + Send + Sync + 'static,
{
    /// Wraps `check`, a closure that may block (IO, locks, heavy work).
    pub fn new(check: F) -> Self {
        Self {
            check: Arc::new(check),
            inline: false,
        }
    }

    /// Wraps `check`, a quick closure that never blocks (a pure function of
    /// the packet): it runs on the checking task, saving the hand-off to a
    /// blocking thread and back. Neither a cancellation nor the deadline can
    /// interrupt it; if it overruns the deadline, its answer is a timeout.
    pub fn inline(check: F) -> Self {
        Self {
            check: Arc::new(check),
            inline: true,
        }
    }
}

impl<F> CompletionChecker for CompletionFn<F>
where
    F: Fn(&CheckPacket, &CheckContext) -> Result<Verdict, CheckerError> + Send + Sync + 'static,
{
    fn check<'a>(
        &'a self,
        packet: &'a CheckPacket,
        ctx: &'a CheckContext,
    ) -> CheckFuture<'a, Verdict> {
        if self.inline {
            return Box::pin(inline(packet, ctx, &*self.check));
        }
        let check = Arc::clone(&self.check);
        Box::pin(blocking(packet, ctx, move |p, c| check(p, c)))
    }
}

impl<F> std::fmt::Debug for CompletionFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompletionFn")
    }
}

/// A [`ProgressChecker`] made from a closure, run as [`CompletionFn`] runs
/// its closure.
pub struct ProgressFn<F> {
    sample: Arc<F>,
    inline: bool,
}

impl<F> ProgressFn<F>
where
    F: Fn(&CheckPacket, &CheckContext) -> Result<String, CheckerError> + Send + Sync + 'static,
{
    /// Wraps `sample`, a closure that may block.
    pub fn new(sample: F) -> Self {
        Self {
            sample: Arc::new(sample),
            inline: false,
        }
    }

    /// Wraps `sample`, a quick closure that never blocks, run on the
    /// checking task (see [`CompletionFn::inline`]).
    pub fn inline(sample: F) -> Self {
        Self {
            sample: Arc::new(sample),
            inline: true,
        }
    }
}

impl<F> ProgressChecker for ProgressFn<F>
where
    F: Fn(&CheckPacket, &CheckContext) -> Result<String, CheckerError> + Send + Sync + 'static,
{
    fn progress_key<'a>(
        &'a self,
        packet: &'a CheckPacket,
        ctx: &'a CheckContext,
    ) -> CheckFuture<'a, String> {
        if self.inline {
            return Box::pin(inline(packet, ctx, &*self.sample));
        }
        let sample = Arc::clone(&self.sample);
        Box::pin(blocking(packet, ctx, move |p, c| sample(p, c)))
    }
}

impl<F> std::fmt::Debug for ProgressFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressFn")
    }
}

/// Runs `call` here, unless `ctx` is cancelled already. An answer given
/// after the context's deadline is a timeout (see [`on_time`]).
async fn inline<T>(
    packet: &CheckPacket,
    ctx: &CheckContext,
    call: &(impl Fn(&CheckPacket, &CheckContext) -> Result<T, CheckerError> + ?Sized),
) -> Result<T, CheckerError> {
    if let Some(stop) = ctx.interruption() {
        return Err(stop);
    }
    on_time(ctx, call(packet, ctx))
}

/// `answer` if the closure gave it by the context's deadline; a timeout if
/// it came late. A closure cannot be interrupted, so one that overran its
/// deadline (on the checking task, or on a blocking thread just before the
/// deadline's timer fired) still returns: its late verdict must not confirm
/// the execution, as if it had been abandoned at the deadline.
fn on_time<T>(ctx: &CheckContext, answer: Result<T, CheckerError>) -> Result<T, CheckerError> {
    if ctx.timed_out() {
        return Err(CheckerError::Timeout);
    }
    answer
}

/// Runs `call` on a blocking thread and waits for it or the signal of
/// `ctx` (cancellation or deadline), whichever comes first. The closure gets
/// a clone of `ctx`: its signal fires at the deadline too, so a closure that
/// watches it stops there instead of running on in the pool.
async fn blocking<T: Send + 'static>(
    packet: &CheckPacket,
    ctx: &CheckContext,
    call: impl FnOnce(&CheckPacket, &CheckContext) -> Result<T, CheckerError> + Send + 'static,
) -> Result<T, CheckerError> {
    if let Some(stop) = ctx.interruption() {
        return Err(stop);
    }
    if tokio::runtime::Handle::try_current().is_err() {
        return on_time(ctx, call(packet, ctx));
    }
    let (packet, owned) = (packet.clone(), ctx.clone());
    let task = tokio::task::spawn_blocking(move || {
        let answer = call(&packet, &owned);
        on_time(&owned, answer)
    });
    tokio::select! {
        biased;
        () = ctx.cancelled() => Err(ctx.interruption().unwrap_or(CheckerError::Cancelled)),
        joined = task => joined.unwrap_or_else(|_| {
            Err(CheckerError::Failed("the checker panicked".to_owned()))
        }),
    }
}
