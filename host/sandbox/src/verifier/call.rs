//! One call into a verifier: a fresh store, the guarded run, and its report.
//!
//! The run owns everything it uses (the packet is shared, not copied), so it
//! can finish on another thread while its caller returns at the deadline
//! (see [`crate::call::handoff`]).

use crate::abi::GuestAnswer;
use crate::artifacts::ArtifactStore;
use crate::bindings::Version;
use crate::call::background;
use crate::call::guard::{self, Stop};
use crate::call::handoff::{self, OwnedCall};
use crate::call::timer::Timers;
use crate::call::usage::Usage;
use crate::error::AbiFault;
use crate::error::{CheckError, LoadError, TrapKind, trap_kind};
use crate::limits::Limits;
use crate::load::shared::Shared;
use crate::load::tier::Tier;
use crate::store::state::{CallArm, CallPhase, StageMarks, StoreState};
use crate::store::tape::{Taped, TraceSink};
use crate::verifier::ready::{ReadyInstance, Refill};
use crate::verifier::warm::warm;
use std::sync::Arc;
use std::time::{Duration, Instant};
use verdict_policy::{CancelHandle, CheckPacket};
use wasmtime::component::{ComponentExportIndex, ComponentNamedList, InstancePre, Lift};
use wasmtime::{Store, UpdateDeadline};

/// What one call used.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallMetrics {
    /// Wall-clock time of the call, instantiation included.
    pub duration: Duration,
    /// Fuel consumed, on every exit path. Exact when the guest returns, runs
    /// out of fuel, traps, or is stopped while waiting in a host import; when
    /// the deadline or cancellation interrupts running wasm code, at most
    /// [`HostConfig::fuel_yield_interval`](crate::HostConfig::fuel_yield_interval)
    /// below the truth. When the caller returned at the deadline (or on
    /// cancellation) before the guest's thread got a core to stop it, the
    /// fuel, memory and artifact figures are as of the last epoch tick or
    /// artifact operation, and the stages are zero.
    pub fuel_used: u64,
    /// Largest linear memory reached, in bytes.
    pub peak_memory_bytes: u64,
    /// Artifact operations (`read`/`list`) the guest performed.
    pub artifact_reads: u32,
    /// Artifact bytes returned to the guest.
    pub artifact_bytes: u64,
    /// The wall-clock time the guest saw (`wasi:clocks/wall-clock`): the
    /// call's start in whole milliseconds since the Unix epoch, fixed for
    /// the call. 0 when no guest code ran.
    pub wall_clock_ms: u64,
    /// Where the call's time went, stage by stage.
    pub stages: CallStages,
    /// The compiler tier of the code the call ran (`None` for a call
    /// refused before it began). Fuel counts the same on both tiers (see
    /// the [`crate::host`] docs).
    pub tier: Option<Tier>,
}

/// Wall-clock time of each stage of a call, in order. A stage the call did
/// not reach (it failed or was stopped earlier) is zero, and so is every
/// stage of a call refused before it began.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallStages {
    /// Preparing the packet and setting up the fresh store (state, limits,
    /// fuel, clocks).
    pub setup: Duration,
    /// Instantiating the component in the store, calling its `warm` (when
    /// it exports `warm-up`) and finding the export; near zero on a ready
    /// instance, which was instantiated and warmed up ahead of the call.
    pub instantiate: Duration,
    /// Copying the packet into guest memory, the guest's allocator calls
    /// included.
    pub lower: Duration,
    /// The guest's own code, host imports included, until it returned.
    pub guest: Duration,
    /// Reading and checking the answer in guest memory, and the guest's
    /// post-return cleanup.
    pub lift: Duration,
    /// Validating the answer against its bounds.
    pub validate: Duration,
    /// Handing the store to the teardown thread, which drops it after the
    /// call returned (the instance goes back to the pool there).
    pub teardown: Duration,
}

impl CallStages {
    /// The sum of the stages.
    pub fn total(&self) -> Duration {
        self.setup
            + self.instantiate
            + self.lower
            + self.guest
            + self.lift
            + self.validate
            + self.teardown
    }
}

/// A call's result together with what it used (also on failure).
#[derive(Debug, Clone)]
pub struct CallReport<T> {
    /// The verdict or key, or why there is none.
    pub result: Result<T, CheckError>,
    /// Resource use.
    pub metrics: CallMetrics,
}

impl<T> CallReport<T> {
    /// Validates or converts a successful result, keeping the metrics.
    pub fn and_then<U>(self, f: impl FnOnce(T) -> Result<U, CheckError>) -> CallReport<U> {
        CallReport {
            result: self.result.and_then(f),
            metrics: self.metrics,
        }
    }

    /// [`CallReport::and_then`], timed as the call's validate stage.
    pub(crate) fn validated<U>(
        mut self,
        f: impl FnOnce(T) -> Result<U, CheckError>,
    ) -> CallReport<U> {
        let started = Instant::now();
        let result = self.result.and_then(f);
        self.metrics.stages.validate = started.elapsed();
        CallReport {
            result,
            metrics: self.metrics,
        }
    }
}

/// A call set up and ready to run: its future, and what its caller needs to
/// report it if it leaves before the future ends.
pub(crate) struct Call<A> {
    pub(crate) future: OwnedCall<CallReport<A>>,
    pub(crate) timers: Arc<Timers>,
    pub(crate) cancel: CancelHandle,
    pub(crate) deadline: Instant,
    pub(crate) limit_ms: u64,
    pub(crate) started: Instant,
    pub(crate) fuel: u64,
    pub(crate) wall_clock_ms: u64,
    pub(crate) usage: Arc<Usage>,
    /// Where a taped call's trace arrives (see [`crate::verifier::taped`]).
    pub(crate) taped: Option<Taped>,
    /// Ask for prompt wake-ups while a blocking caller waits.
    pub(crate) prompt_wakeups: bool,
    /// The tier of the code the call runs.
    pub(crate) tier: Tier,
}

impl<A: Send + 'static> Call<A> {
    /// Runs the call to its report (see [`crate::call::handoff`]).
    pub(crate) async fn finish(self) -> CallReport<A> {
        match handoff::run(self.future, self.deadline, &self.cancel, &self.timers).await {
            Ok(report) => report,
            Err(stop) => {
                let seen = self.usage.snapshot();
                CallReport {
                    result: Err(match stop {
                        Stop::Deadline => CheckError::Timeout {
                            limit_ms: self.limit_ms,
                        },
                        Stop::Cancelled => CheckError::Cancelled,
                    }),
                    metrics: CallMetrics {
                        duration: self.started.elapsed(),
                        fuel_used: self.fuel.saturating_sub(seen.fuel_left),
                        peak_memory_bytes: seen.peak_memory,
                        artifact_reads: seen.artifact_ops,
                        artifact_bytes: seen.artifact_bytes,
                        wall_clock_ms: self.wall_clock_ms,
                        stages: CallStages::default(),
                        tier: Some(self.tier),
                    },
                }
            }
        }
    }

    /// [`Call::finish`] on the calling thread, which sleeps until the
    /// report, the deadline or cancellation (asking to be woken promptly,
    /// unless the host was told not to).
    pub(crate) fn blocking(self) -> CallReport<A> {
        let (deadline, promptly) = (self.deadline, self.prompt_wakeups);
        guard::block_on_waiting(self.finish(), Some(deadline), promptly)
    }
}

/// What the call future owns.
pub(crate) struct CallRun {
    pub(crate) shared: Arc<Shared>,
    pub(crate) pre: InstancePre<StoreState>,
    pub(crate) index: ComponentExportIndex,
    /// The component's `warm`, if it exports `warm-up`.
    pub(crate) warm: Option<ComponentExportIndex>,
    /// The export at `index` is a packed entry point (`verdict:packed`).
    pub(crate) packed: bool,
    pub(crate) packet: CheckPacket,
    pub(crate) limits: Limits,
    pub(crate) started: Instant,
    pub(crate) limit_ms: u64,
    /// The call's own part of its store.
    pub(crate) arm: CallArm,
    /// The tenant's artifacts (for a fresh store).
    pub(crate) artifacts: Arc<dyn ArtifactStore>,
    /// A store instantiated ahead of the call for this tenant, if the pool
    /// had one.
    pub(crate) ready: Option<ReadyInstance>,
    /// Ready instances to make after the call's teardown.
    pub(crate) refills: Vec<Refill>,
    /// Where a taped call leaves its trace.
    pub(crate) trace_sink: Option<TraceSink>,
}

impl CallRun {
    /// Instantiates in a fresh store with the tenant's limits (or takes the
    /// ready one) and calls the export with the packet, under the guard of
    /// the call's deadline and cancellation; the store is dropped after the
    /// report, off the caller's path.
    pub(crate) async fn run<
        V: Version,
        A: GuestAnswer + ComponentNamedList + Lift + Send + Sync + 'static,
    >(
        self,
    ) -> CallReport<A> {
        let Self {
            shared,
            pre,
            index,
            warm: warm_index,
            packed,
            packet,
            limits,
            started,
            limit_ms,
            arm,
            artifacts,
            ready,
            refills,
            trace_sink,
        } = self;
        let deadline = arm.deadline;
        let cancel = arm.cancel.clone();
        let (mut store, instance) = match ready {
            Some(ReadyInstance {
                mut store,
                instance,
                fuel_used,
                held,
                ..
            }) => {
                // No longer waiting: the engine's budget has room again.
                drop(held);
                store.data_mut().rearm(arm);
                // Instantiating spent `fuel_used` of the budget, as it does
                // when the call instantiates.
                if let Err(e) = store.set_fuel(limits.fuel.saturating_sub(fuel_used)) {
                    return failed(CheckError::Host(e.to_string()));
                }
                (store, Some(instance))
            }
            None => {
                let state = StoreState::new(artifacts, limits, arm, shared.load.max_memories);
                match crate::store::new_store(
                    &shared.engine,
                    state,
                    limits.fuel,
                    shared.fuel_yield_interval,
                ) {
                    Ok(store) => (store, None),
                    Err(err) => return failed(err),
                }
            }
        };
        // Wake at every tick: publish what the call used so far, stop on
        // cancellation or a passed deadline, yield once when the call has
        // run a tick (so it moves off its caller's thread, whose own timer
        // then ends the wait at the deadline), otherwise keep going for one
        // more tick.
        store.data_mut().yield_at = started.checked_add(shared.epoch_tick);
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|mut ctx| {
            let fuel_left = ctx.get_fuel().unwrap_or(0);
            let state = ctx.data_mut();
            state.publish(fuel_left);
            Ok(if state.should_interrupt() {
                UpdateDeadline::Interrupt
            } else if state.yield_due() {
                UpdateDeadline::Yield(1)
            } else {
                UpdateDeadline::Continue(1)
            })
        });

        store.data_mut().marks.ready = Some(Instant::now());

        let run = async {
            let instance = match instance {
                Some(ready) => ready,
                None => {
                    store.data_mut().phase = CallPhase::Instantiating;
                    let instance = pre.instantiate_async(&mut store).await?;
                    warm(&mut store, &instance, warm_index).await?;
                    instance
                }
            };
            let instantiated = |store: &mut Store<StoreState>| {
                store.data_mut().marks.instantiated = Some(Instant::now());
                store.data_mut().phase = CallPhase::Lowering;
            };
            if packed {
                let func = instance.get_typed_func::<(V::Packed<'_>,), A>(&mut store, index)?;
                instantiated(&mut store);
                func.call_async(&mut store, (V::packed(&packet),)).await
            } else {
                let func = instance.get_typed_func::<(V::Packet<'_>,), A>(&mut store, index)?;
                instantiated(&mut store);
                func.call_async(&mut store, (V::packet(&packet),)).await
            }
        };
        let outcome = guard::guarded(run, deadline, &cancel, &shared.timers).await;
        let returned = Instant::now();

        let fuel_left = store.get_fuel().unwrap_or(0);
        let state = store.data();
        let lift_started = match &outcome {
            Ok(Ok(answer)) => Some(answer.lift_started()),
            _ => None,
        };
        let mut metrics = CallMetrics {
            duration: returned.saturating_duration_since(started),
            fuel_used: limits.fuel.saturating_sub(fuel_left),
            peak_memory_bytes: state.limiter.peak_memory as u64,
            artifact_reads: state.artifact_ops,
            artifact_bytes: state.artifact_bytes,
            wall_clock_ms: state.clock.wall_clock_ms(),
            stages: stages(started, state.marks, lift_started, returned),
            tier: Some(shared.tier),
        };
        let result = match outcome {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(err)) => Err(classify(&err, state, &limits, limit_ms)),
            Err(Stop::Deadline) => Err(CheckError::Timeout { limit_ms }),
            Err(Stop::Cancelled) => Err(CheckError::Cancelled),
        };
        if let Some(sink) = trace_sink {
            let trace = store.data_mut().take_trace();
            *sink.lock().unwrap_or_else(|p| p.into_inner()) = trace;
        }
        let dropping = Instant::now();
        background::drop_then(store, move || refills.into_iter().for_each(Refill::run));
        metrics.stages.teardown = dropping.elapsed();
        CallReport { result, metrics }
    }
}

/// The stage times of a call that began at `started`, passed `marks`,
/// began lifting its answer at `lift_started` and returned at `returned`.
/// Each stage ends at the next mark reached; the last one reached ends at
/// `returned`.
pub(crate) fn stages(
    started: Instant,
    marks: StageMarks,
    lift_started: Option<Instant>,
    returned: Instant,
) -> CallStages {
    // The marks are reached in order: the ones reached are a prefix.
    let points = [
        Some(started),
        marks.ready,
        marks.instantiated,
        marks.lowered,
        lift_started,
    ];
    let reached = points.iter().take_while(|p| p.is_some()).count();
    let mut spans = [Duration::ZERO; 5];
    for (i, span) in spans.iter_mut().enumerate().take(reached) {
        let to = points.get(i + 1).copied().flatten().unwrap_or(returned);
        if let Some(from) = points[i] {
            *span = to.saturating_duration_since(from);
        }
    }
    let [setup, instantiate, lower, guest, lift] = spans;
    CallStages {
        setup,
        instantiate,
        lower,
        guest,
        lift,
        ..CallStages::default()
    }
}

pub(crate) fn failed<T>(err: CheckError) -> CallReport<T> {
    CallReport {
        result: Err(err),
        metrics: CallMetrics::default(),
    }
}

/// Classifies a failed call from typed sources only (see [`crate::error`]).
pub(crate) fn classify(
    err: &wasmtime::Error,
    state: &StoreState,
    limits: &Limits,
    limit_ms: u64,
) -> CheckError {
    let trap = |kind| CheckError::Trap {
        kind,
        stderr_tail: state.stderr.contents(),
    };
    if state.cancelled {
        return CheckError::Cancelled;
    }
    if state.limiter.memory_refused {
        return CheckError::OutOfMemory {
            cap_bytes: limits.memory_bytes,
        };
    }
    if let Some(t) = err.downcast_ref::<wasmtime::Trap>() {
        return match t {
            wasmtime::Trap::Interrupt if state.timed_out => CheckError::Timeout { limit_ms },
            wasmtime::Trap::OutOfFuel => CheckError::OutOfFuel {
                budget: limits.fuel,
            },
            other => trap(trap_kind(*other)),
        };
    }
    if let Some(exit) = err.downcast_ref::<wasmtime_wasi::I32Exit>() {
        return trap(TrapKind::Exit(exit.0));
    }
    if let Some(fault) = err.downcast_ref::<AbiFault>() {
        return trap(fault.kind.clone());
    }
    if err
        .downcast_ref::<wasmtime::PoolConcurrencyLimitError>()
        .is_some()
    {
        return CheckError::Host(err.to_string());
    }
    // What remains is wasmtime refusing what the guest did, reported
    // untyped; the phase says what that was.
    match state.phase {
        CallPhase::Setup => CheckError::Host(err.to_string()),
        CallPhase::Instantiating => {
            CheckError::LoadRejected(LoadError::Instantiate(err.to_string()))
        }
        CallPhase::Lowering => trap(TrapKind::BadAllocation),
        CallPhase::Warming | CallPhase::Running => trap(TrapKind::AbiViolation),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_stage_ends_at_the_next_mark_reached() {
        let t0 = Instant::now();
        let at = |us| t0 + Duration::from_micros(us);
        let marks = StageMarks {
            ready: Some(at(1)),
            instantiated: Some(at(4)),
            lowered: Some(at(9)),
        };
        let whole = stages(t0, marks, Some(at(20)), at(22));
        let us = Duration::from_micros;
        assert_eq!(
            (
                whole.setup,
                whole.instantiate,
                whole.lower,
                whole.guest,
                whole.lift
            ),
            (us(1), us(3), us(5), us(11), us(2))
        );
        assert_eq!(whole.total(), us(22));

        // Stopped while instantiating: the stages after it are zero.
        let marks = StageMarks {
            ready: Some(at(1)),
            ..StageMarks::default()
        };
        let stopped = stages(t0, marks, None, at(10));
        assert_eq!((stopped.setup, stopped.instantiate), (us(1), us(9)));
        assert_eq!(stopped.lower + stopped.guest + stopped.lift, Duration::ZERO);
    }
}
