//! A loaded, prepared verifier and the calls into it.
//!
//! Every call gets a fresh `Store`: its own fuel, epoch deadline, memory cap,
//! WASI context, virtual clocks and artifact budget. A store that trapped is
//! dropped with the call, so a trapped instance is never re-entered.
//!
//! Calls run on wasmtime's async API under the guard of [`crate::exec`]:
//! every call ends by its deadline (plus a tick) or on cancellation, whether
//! the guest computes, sleeps or waits in any host import. The blocking
//! methods ([`Verifier::check`], [`Verifier::progress_key`]) drive the same
//! future on the calling thread; the `_async` ones can be awaited on any
//! executor.

use crate::abi::{AbiFault, GuestText, KeyAnswer, PacketArg, VerdictAnswer};
use crate::bindings::ApiVersion;
use crate::bindings::v0_1::wit;
use crate::cancel::CancelHandle;
use crate::clock::CallClock;
use crate::convert;
use crate::error::{CheckError, LoadError, TrapKind, trap_kind};
use crate::exec::{self, Stop};
use crate::host::Shared;
use crate::imports;
use crate::inspect::{self, Role};
use crate::limits::Limits;
use crate::state::{CallState, Phase};
use crate::tenant::Tenant;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use verdict_policy::{CheckPacket, Verdict};
use wasmtime::component::{
    Component, ComponentExportIndex, ComponentNamedList, InstancePre, Lift, types::ComponentItem,
};
use wasmtime::{Store, UpdateDeadline};

pub use verdict_policy::checker::MAX_PROGRESS_KEY_CHARS;

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
}

/// A call's result together with what it used (also on failure).
#[derive(Debug, Clone)]
pub struct CallOutcome<T> {
    /// The verdict or key, or why there is none.
    pub result: Result<T, CheckError>,
    /// Resource use.
    pub metrics: CallMetrics,
}

impl<T> CallOutcome<T> {
    /// Validates or converts a successful result, keeping the metrics.
    pub fn and_then<U>(self, f: impl FnOnce(T) -> Result<U, CheckError>) -> CallOutcome<U> {
        CallOutcome {
            result: self.result.and_then(f),
            metrics: self.metrics,
        }
    }
}

/// A verifier component, compiled and prepared once, called many times.
#[derive(Clone)]
pub struct Verifier {
    shared: Arc<Shared>,
    pre: InstancePre<CallState>,
    digest: String,
    /// The WIT version the exports were built against: which bindings
    /// prepare and call it.
    api: ApiVersion,
    completion: Option<ComponentExportIndex>,
    progress: Option<ComponentExportIndex>,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier")
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

impl Verifier {
    pub(crate) fn prepare(
        shared: Arc<Shared>,
        component: Component,
        digest: String,
    ) -> Result<Self, LoadError> {
        let ty = component.component_type();
        imports::check_imports(ty.imports(&shared.engine).map(|(name, _)| name))?;
        let exports: Vec<String> = ty
            .exports(&shared.engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        let Some(api) = inspect::api_version(exports.iter().map(String::as_str))? else {
            return Err(LoadError::NoVerifierExport);
        };
        let pre = shared
            .linker
            .instantiate_pre(&component)
            .map_err(|e| LoadError::Link(e.to_string()))?;
        let interface = |role| inspect::role_export(exports.iter().map(String::as_str), role);
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
        })
    }

    /// Lowercase hex SHA-256 of the component bytes: the plugin identity.
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

    /// Runs the completion check for `tenant` on `packet`, blocking the
    /// calling thread (see [`Verifier::check_async`]).
    pub fn check(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        cancel: Option<&CancelHandle>,
    ) -> CallOutcome<Verdict> {
        exec::block_on(self.check_async(tenant, packet, cancel))
    }

    /// Runs the completion check for `tenant` on `packet`. Needs no
    /// particular executor: the deadline and guest sleeps are timed by the
    /// host's epoch ticker.
    pub async fn check_async(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        cancel: Option<&CancelHandle>,
    ) -> CallOutcome<Verdict> {
        let Some(index) = &self.completion else {
            return failed(CheckError::Unsupported("completion"));
        };
        match self.api {
            ApiVersion::V0_1 => {
                let packet = match convert::packet(packet) {
                    Ok(packet) => packet,
                    Err(e) => return failed(e),
                };
                self.call::<VerdictAnswer>(tenant, cancel, index, &packet)
                    .await
                    .and_then(|VerdictAnswer(verdict)| convert::verdict(verdict))
            }
        }
    }

    /// Samples the progress key for `tenant` on `packet`, blocking the
    /// calling thread (see [`Verifier::progress_key_async`]).
    pub fn progress_key(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        cancel: Option<&CancelHandle>,
    ) -> CallOutcome<String> {
        exec::block_on(self.progress_key_async(tenant, packet, cancel))
    }

    /// Samples the progress key for `tenant` on `packet`.
    pub async fn progress_key_async(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        cancel: Option<&CancelHandle>,
    ) -> CallOutcome<String> {
        let Some(index) = &self.progress else {
            return failed(CheckError::Unsupported("progress"));
        };
        match self.api {
            ApiVersion::V0_1 => {
                let packet = match convert::packet(packet) {
                    Ok(packet) => packet,
                    Err(e) => return failed(e),
                };
                self.call::<KeyAnswer>(tenant, cancel, index, &packet)
                    .await
                    .and_then(|KeyAnswer(key)| match key {
                        GuestText::Text(key) => Ok(key),
                        GuestText::TooLong { chars } => {
                            Err(CheckError::InvalidProgressKey { chars })
                        }
                    })
            }
        }
    }

    /// Instantiates in a fresh store with the tenant's limits and calls the
    /// export at `index` with `packet`, under the deadline and `cancel`.
    async fn call<A: ComponentNamedList + Lift + Send + Sync + 'static>(
        &self,
        tenant: &Tenant,
        cancel: Option<&CancelHandle>,
        index: &ComponentExportIndex,
        packet: &wit::Packet,
    ) -> CallOutcome<A> {
        let started = Instant::now();
        let wall = SystemTime::now();
        if cancel.is_some_and(CancelHandle::is_cancelled) {
            return failed(CheckError::Cancelled);
        }
        let shared = &self.shared;
        let limits = *tenant.limits();
        // A deadline too far to represent is no deadline (fuel still ends
        // the call).
        let deadline = started
            .checked_add(limits.timeout())
            .or_else(|| started.checked_add(Duration::from_secs(365 * 24 * 3600)))
            .unwrap_or(started);
        let clock = CallClock::new(started, wall, deadline, Arc::clone(&shared.timers));
        let state = CallState::new(
            Arc::clone(tenant.artifacts()),
            limits,
            clock,
            deadline,
            cancel.cloned(),
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

        let run = async {
            store.data_mut().phase = Phase::Instantiating;
            let instance = self.pre.instantiate_async(&mut store).await?;
            let func = instance.get_typed_func::<(PacketArg<'_>,), A>(&mut store, index)?;
            store.data_mut().phase = Phase::Lowering;
            func.call_async(&mut store, (PacketArg(packet),)).await
        };
        let outcome = exec::guarded(run, deadline, cancel, &shared.timers).await;

        let fuel_left = store.get_fuel().unwrap_or(0);
        let state = store.data();
        let metrics = CallMetrics {
            duration: started.elapsed(),
            fuel_used: limits.fuel.saturating_sub(fuel_left),
            peak_memory_bytes: state.limiter.peak_memory as u64,
            artifact_reads: state.artifact_ops,
            artifact_bytes: state.artifact_bytes,
            wall_clock_ms: state.clock.wall_clock_ms(),
        };
        let result = match outcome {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(err)) => Err(classify(&err, state, &limits)),
            Err(Stop::Deadline) => Err(CheckError::Timeout {
                limit_ms: limits.timeout_ms,
            }),
            Err(Stop::Cancelled) => Err(CheckError::Cancelled),
        };
        CallOutcome { result, metrics }
    }
}

fn failed<T>(err: CheckError) -> CallOutcome<T> {
    CallOutcome {
        result: Err(err),
        metrics: CallMetrics::default(),
    }
}

/// Classifies a failed call from typed sources only (see [`crate::error`]).
fn classify(err: &wasmtime::Error, state: &CallState, limits: &Limits) -> CheckError {
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
            wasmtime::Trap::Interrupt if state.timed_out => CheckError::Timeout {
                limit_ms: limits.timeout_ms,
            },
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

    /// The async calls can be spawned on a multi-threaded executor.
    #[allow(dead_code)]
    fn calls_are_send(verifier: &Verifier, tenant: &Tenant, packet: &CheckPacket) {
        fn send<T: Send>(_: T) {}
        let cancel = CancelHandle::new();
        send(verifier.check_async(tenant, packet, Some(&cancel)));
        send(verifier.progress_key_async(tenant, packet, None));
    }
}
