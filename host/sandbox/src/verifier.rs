//! A loaded, prepared verifier and the calls into it.
//!
//! Every call gets a fresh `Store`: its own fuel, epoch deadline, memory cap,
//! WASI context, virtual clocks and artifact budget. A store that trapped is
//! dropped with the call, so a trapped instance is never re-entered.
//!
//! Calls run on wasmtime's async API under the guard of [`crate::exec`]:
//! every call ends by its deadline (plus a tick) or on cancellation, whether
//! the guest computes, sleeps or waits in any host import. The blocking
//! methods ([`LoadedVerifier::check`], [`LoadedVerifier::progress_key`])
//! drive the same future on the calling thread; the `_async` ones can be
//! awaited on any executor.
//!
//! # Deadline
//!
//! A call's deadline is the earlier of the tenant's
//! [`Limits::timeout_ms`](crate::Limits::timeout_ms), counted from the
//! call's start, and the [`CheckContext`]'s deadline (the loop's checker
//! deadline); whichever ends the call, it is reported as
//! [`CheckError::Timeout`] with the limit that applied, in milliseconds.
//! Cancelling the context's [`CancelHandle`](verdict_policy::CancelHandle)
//! stops the call with [`CheckError::Cancelled`].

use crate::abi::{self, AbiFault, Answer, GuestText, KeyAnswer, PacketArg, VerdictAnswer};
use crate::bindings::ApiVersion;
use crate::census::Footprint;
use crate::clock::CallClock;
use crate::component::{self, Role};
use crate::error::{CheckError, LoadError, TrapKind, trap_kind};
use crate::exec::{self, Stop};
use crate::imports;
use crate::limits::Limits;
use crate::shared::Shared;
use crate::state::{CallState, Phase, StageMarks};
use crate::tenant::Tenant;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use verdict_policy::{CheckContext, CheckPacket, Verdict};
use wasmtime::component::{
    Component, ComponentExportIndex, ComponentNamedList, InstancePre, Lift, types::ComponentItem,
};
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
    /// below the truth.
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
}

/// Wall-clock time of each stage of a call, in order. A stage the call did
/// not reach (it failed or was stopped earlier) is zero, and so is every
/// stage of a call refused before it began.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallStages {
    /// Preparing the packet and setting up the fresh store (state, limits,
    /// fuel, clocks).
    pub setup: Duration,
    /// Instantiating the component in the store and finding the export.
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
    /// Dropping the store (the instance goes back to the pool).
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
    fn validated<U>(mut self, f: impl FnOnce(T) -> Result<U, CheckError>) -> CallReport<U> {
        let started = Instant::now();
        let result = self.result.and_then(f);
        self.metrics.stages.validate = started.elapsed();
        CallReport {
            result,
            metrics: self.metrics,
        }
    }
}

/// A verifier component loaded by a [`VerifierHost`](crate::VerifierHost):
/// compiled, checked and prepared once, called many times (each call in a
/// fresh store).
#[derive(Clone)]
pub struct LoadedVerifier {
    shared: Arc<Shared>,
    pre: InstancePre<CallState>,
    digest: String,
    /// The WIT version the exports were built against: which bindings
    /// prepare and call it.
    api: ApiVersion,
    completion: Option<ComponentExportIndex>,
    progress: Option<ComponentExportIndex>,
    /// What instantiating it creates, checked against each call's limits.
    footprint: Footprint,
}

impl std::fmt::Debug for LoadedVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedVerifier")
            .field("digest", &self.digest)
            .field("api", &self.api)
            .field("completion", &self.completion.is_some())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// The export `func` of the interface exported as `interface`, type-checked
/// as taking the packet and returning `A`.
fn export_func<A: ComponentNamedList + Lift + 'static>(
    pre: &InstancePre<CallState>,
    interface: &str,
    func: &str,
) -> Result<ComponentExportIndex, LoadError> {
    let component = pre.component();
    let missing = || LoadError::Link(format!("no export `{func}` in `{interface}`"));
    let (_, iface) = component.get_export(None, interface).ok_or_else(missing)?;
    let (item, index) = component
        .get_export(Some(&iface), func)
        .ok_or_else(missing)?;
    match item {
        ComponentItem::ComponentFunc(ty) => ty
            .typecheck::<(PacketArg<'_>,), A>(&pre.instance_type())
            .map_err(|e| LoadError::Link(format!("export `{interface}#{func}`: {e}")))?,
        _ => return Err(missing()),
    }
    Ok(index)
}

impl LoadedVerifier {
    pub(crate) fn prepare(
        shared: Arc<Shared>,
        component: Component,
        digest: String,
        footprint: Footprint,
    ) -> Result<Self, LoadError> {
        let ty = component.component_type();
        imports::check_imports(ty.imports(&shared.engine).map(|(name, _)| name))?;
        let exports: Vec<String> = ty
            .exports(&shared.engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        let Some(api) = component::api_version(exports.iter().map(String::as_str))? else {
            return Err(LoadError::NoVerifierExport);
        };
        let pre = shared
            .linker
            .instantiate_pre(&component)
            .map_err(|e| LoadError::Link(e.to_string()))?;
        let interface = |role| component::role_export(exports.iter().map(String::as_str), role);
        let completion = match (api, interface(Role::Completion)) {
            (_, None) => None,
            (ApiVersion::V0_1, Some(name)) => {
                Some(export_func::<VerdictAnswer>(&pre, name, "check")?)
            }
        };
        let progress = match (api, interface(Role::Progress)) {
            (_, None) => None,
            (ApiVersion::V0_1, Some(name)) => {
                Some(export_func::<KeyAnswer>(&pre, name, "progress-key")?)
            }
        };
        Ok(Self {
            shared,
            pre,
            digest,
            api,
            completion,
            progress,
            footprint,
        })
    }

    /// Lowercase hex SHA-256 of the component bytes: its identity as a checker.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// True when the component exports `completion`.
    pub fn has_completion(&self) -> bool {
        self.completion.is_some()
    }

    /// True when the component exports `progress`.
    pub fn has_progress(&self) -> bool {
        self.progress.is_some()
    }

    /// Runs the completion check for `tenant` on `packet` within `ctx`,
    /// blocking the calling thread (see [`LoadedVerifier::check_async`]).
    pub fn check(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        ctx: &CheckContext,
    ) -> CallReport<Verdict> {
        exec::block_on(self.check_async(tenant, packet, ctx))
    }

    /// Runs the completion check for `tenant` on `packet` within `ctx` (see
    /// the module docs for the deadline). Needs no particular executor: the
    /// deadline and guest sleeps are timed by the host's epoch ticker.
    pub async fn check_async(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        ctx: &CheckContext,
    ) -> CallReport<Verdict> {
        let Some(index) = &self.completion else {
            return failed(CheckError::Unsupported("completion"));
        };
        match self.api {
            ApiVersion::V0_1 => self
                .call::<VerdictAnswer>(tenant, ctx, index, packet)
                .await
                .validated(|VerdictAnswer(verdict, _)| abi::verdict(verdict)),
        }
    }

    /// Samples the progress key for `tenant` on `packet` within `ctx`,
    /// blocking the calling thread (see [`LoadedVerifier::progress_key_async`]).
    pub fn progress_key(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        ctx: &CheckContext,
    ) -> CallReport<String> {
        exec::block_on(self.progress_key_async(tenant, packet, ctx))
    }

    /// Samples the progress key for `tenant` on `packet` within `ctx`.
    pub async fn progress_key_async(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        ctx: &CheckContext,
    ) -> CallReport<String> {
        let Some(index) = &self.progress else {
            return failed(CheckError::Unsupported("progress"));
        };
        match self.api {
            ApiVersion::V0_1 => self
                .call::<KeyAnswer>(tenant, ctx, index, packet)
                .await
                .validated(|KeyAnswer(key, _)| match key {
                    GuestText::Text(key) => Ok(key),
                    GuestText::TooLong { chars } => Err(CheckError::InvalidProgressKey { chars }),
                }),
        }
    }

    /// Instantiates in a fresh store with the tenant's limits and calls the
    /// export at `index` with `packet`, under the deadline and the
    /// cancellation of `ctx`.
    async fn call<A: Answer + ComponentNamedList + Lift + Send + Sync + 'static>(
        &self,
        tenant: &Tenant,
        ctx: &CheckContext,
        index: &ComponentExportIndex,
        packet: &CheckPacket,
    ) -> CallReport<A> {
        let started = Instant::now();
        let wall = SystemTime::now();
        let cancel = ctx.cancel_handle();
        if cancel.is_cancelled() {
            return failed(CheckError::Cancelled);
        }
        let shared = &self.shared;
        let limits = *tenant.limits();
        if let Err(over) = self.footprint.fits(&limits, shared.load.max_memories) {
            return failed(CheckError::LoadRejected(over));
        }
        let (deadline, limit_ms) = deadline(started, &limits, ctx);
        let clock = CallClock::new(started, wall, deadline, Arc::clone(&shared.timers));
        let state = CallState::new(
            Arc::clone(tenant.artifacts()),
            limits,
            clock,
            deadline,
            cancel.clone(),
            shared.load.max_memories,
        );
        let mut store = Store::new(&shared.engine, state);
        store.limiter(|s| &mut s.limiter);
        let fuel = store
            .set_fuel(limits.fuel)
            .and_then(|()| store.fuel_async_yield_interval(Some(shared.fuel_yield_interval)));
        if let Err(e) = fuel {
            return failed(CheckError::Host(e.to_string()));
        }
        // Wake at every tick: stop on cancellation or a passed deadline,
        // otherwise keep going for one more tick.
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|mut ctx| {
            Ok(if ctx.data_mut().should_interrupt() {
                UpdateDeadline::Interrupt
            } else {
                UpdateDeadline::Continue(1)
            })
        });

        store.data_mut().marks.ready = Some(Instant::now());

        let run = async {
            store.data_mut().phase = Phase::Instantiating;
            let instance = self.pre.instantiate_async(&mut store).await?;
            let func = instance.get_typed_func::<(PacketArg<'_>,), A>(&mut store, index)?;
            store.data_mut().marks.instantiated = Some(Instant::now());
            store.data_mut().phase = Phase::Lowering;
            func.call_async(&mut store, (PacketArg(packet),)).await
        };
        let outcome = exec::guarded(run, deadline, cancel, &shared.timers).await;
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
        };
        let result = match outcome {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(err)) => Err(classify(&err, state, &limits, limit_ms)),
            Err(Stop::Deadline) => Err(CheckError::Timeout { limit_ms }),
            Err(Stop::Cancelled) => Err(CheckError::Cancelled),
        };
        let dropping = Instant::now();
        drop(store);
        metrics.stages.teardown = dropping.elapsed();
        CallReport { result, metrics }
    }
}

/// The stage times of a call that began at `started`, passed `marks`,
/// began lifting its answer at `lift_started` and returned at `returned`.
/// Each stage ends at the next mark reached; the last one reached ends at
/// `returned`.
fn stages(
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

/// The call's deadline: the earlier of the tenant's timeout from `started`
/// and the context's deadline; with the limit that applied, in
/// milliseconds from `started`.
fn deadline(started: Instant, limits: &Limits, ctx: &CheckContext) -> (Instant, u64) {
    // A tenant deadline too far to represent is no deadline (fuel still
    // ends the call).
    let tenant = started
        .checked_add(limits.timeout())
        .or_else(|| started.checked_add(Duration::from_secs(365 * 24 * 3600)))
        .unwrap_or(started);
    match ctx.deadline() {
        Some(outer) if outer < tenant => {
            let ms = outer.saturating_duration_since(started).as_millis();
            (outer, u64::try_from(ms).unwrap_or(u64::MAX))
        }
        _ => (tenant, limits.timeout_ms),
    }
}

fn failed<T>(err: CheckError) -> CallReport<T> {
    CallReport {
        result: Err(err),
        metrics: CallMetrics::default(),
    }
}

/// Classifies a failed call from typed sources only (see [`crate::error`]).
fn classify(
    err: &wasmtime::Error,
    state: &CallState,
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
        Phase::Setup => CheckError::Host(err.to_string()),
        Phase::Instantiating => CheckError::LoadRejected(LoadError::Instantiate(err.to_string())),
        Phase::Lowering => trap(TrapKind::BadAllocation),
        Phase::Running => trap(TrapKind::AbiViolation),
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

    /// The async calls can be spawned on a multi-threaded executor.
    #[allow(dead_code)]
    fn calls_are_send(verifier: &LoadedVerifier, tenant: &Tenant, packet: &CheckPacket) {
        fn send<T: Send>(_: T) {}
        let ctx = CheckContext::new();
        send(verifier.check_async(tenant, packet, &ctx));
        send(verifier.progress_key_async(tenant, packet, &ctx));
    }
}
