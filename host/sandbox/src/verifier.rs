//! A loaded, prepared verifier and the calls into it.
//!
//! Every call gets a fresh `Store`: its own fuel, epoch deadline, memory cap,
//! WASI context and artifact budget. A store that trapped is dropped with the
//! call, so a trapped instance is never re-entered.

use crate::bindings::{CompletionIndices, ProgressIndices, wit};
use crate::cancel::CancelHandle;
use crate::convert;
use crate::error::{CheckError, LoadError, trap_kind};
use crate::host::Shared;
use crate::imports;
use crate::inspect::{self, Role};
use crate::state::CallState;
use crate::tenant::Tenant;
use std::sync::Arc;
use std::time::{Duration, Instant};
use verdict_policy::{CheckPacket, Verdict};
use wasmtime::component::{Component, Instance, InstancePre};
use wasmtime::{Store, UpdateDeadline};

pub use verdict_policy::checker::MAX_PROGRESS_KEY_CHARS;

/// What one call used.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallMetrics {
    /// Wall-clock time of the call, instantiation included.
    pub duration: Duration,
    /// Fuel consumed. Exact when the guest returns; when it is interrupted
    /// (deadline, cancellation) wasmtime may not have written back the fuel
    /// of the running function, so it is then a lower bound.
    pub fuel_used: u64,
    /// Largest linear memory reached, in bytes.
    pub peak_memory_bytes: u64,
    /// Artifact operations (`read`/`list`) the guest performed.
    pub artifact_reads: u32,
    /// Artifact bytes returned to the guest.
    pub artifact_bytes: u64,
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
    completion: Option<CompletionIndices>,
    progress: Option<ProgressIndices>,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier")
            .field("digest", &self.digest)
            .field("completion", &self.completion.is_some())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl Verifier {
    pub(crate) fn prepare(
        shared: Arc<Shared>,
        component: Component,
        digest: String,
    ) -> Result<Self, LoadError> {
        let ty = component.component_type();
        imports::check_imports(ty.imports(&shared.engine).map(|(name, _)| name))?;
        let roles = inspect::roles(ty.exports(&shared.engine).map(|(name, _)| name));
        if roles.is_empty() {
            return Err(LoadError::NoVerifierExport);
        }
        let pre = shared
            .linker
            .instantiate_pre(&component)
            .map_err(|e| LoadError::Link(e.to_string()))?;
        let link = |e: wasmtime::Error| LoadError::Link(e.to_string());
        let completion = if roles.contains(&Role::Completion) {
            Some(CompletionIndices::new(&pre).map_err(link)?)
        } else {
            None
        };
        let progress = if roles.contains(&Role::Progress) {
            Some(ProgressIndices::new(&pre).map_err(link)?)
        } else {
            None
        };
        Ok(Self {
            shared,
            pre,
            digest,
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

    /// Runs the completion check for `tenant` on `packet`.
    pub fn check(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        cancel: Option<&CancelHandle>,
    ) -> CallOutcome<Verdict> {
        let Some(indices) = &self.completion else {
            return failed(CheckError::Unsupported("completion"));
        };
        self.call_with_packet(tenant, packet, cancel, |store, instance, packet| {
            indices
                .load(&mut *store, instance)?
                .call_check(&mut *store, packet)
        })
        .and_then(convert::verdict)
    }

    /// Samples the progress key for `tenant` on `packet`.
    pub fn progress_key(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        cancel: Option<&CancelHandle>,
    ) -> CallOutcome<String> {
        let Some(indices) = &self.progress else {
            return failed(CheckError::Unsupported("progress"));
        };
        self.call_with_packet(tenant, packet, cancel, |store, instance, packet| {
            indices
                .load(&mut *store, instance)?
                .call_progress_key(&mut *store, packet)
        })
        .and_then(|key| {
            let chars = key.chars().count();
            if chars > MAX_PROGRESS_KEY_CHARS {
                Err(CheckError::InvalidProgressKey { chars })
            } else {
                Ok(key)
            }
        })
    }

    /// Lowers `packet` (refusing one over the size bound before any guest
    /// code runs), then calls `f` with it in a fresh store.
    fn call_with_packet<R>(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        cancel: Option<&CancelHandle>,
        f: impl FnOnce(&mut Store<CallState>, &Instance, &wit::Packet) -> wasmtime::Result<R>,
    ) -> CallOutcome<R> {
        match convert::packet(packet) {
            Ok(packet) => self.call(tenant, cancel, |store, instance| {
                f(store, instance, &packet)
            }),
            Err(e) => failed(e),
        }
    }

    /// Instantiates in a fresh store with the tenant's limits and runs `f`.
    fn call<R>(
        &self,
        tenant: &Tenant,
        cancel: Option<&CancelHandle>,
        f: impl FnOnce(&mut Store<CallState>, &Instance) -> wasmtime::Result<R>,
    ) -> CallOutcome<R> {
        let started = Instant::now();
        if cancel.is_some_and(CancelHandle::is_cancelled) {
            return failed(CheckError::Cancelled);
        }
        let limits = *tenant.limits();
        let state = CallState::new(
            Arc::clone(tenant.artifacts()),
            limits,
            started + limits.timeout(),
            cancel.cloned(),
        );
        let mut store = Store::new(&self.shared.engine, state);
        store.limiter(|s| &mut s.limiter);
        if let Err(e) = store.set_fuel(limits.fuel) {
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

        let result = self
            .pre
            .instantiate(&mut store)
            .and_then(|instance| f(&mut store, &instance));

        let fuel_left = store.get_fuel().unwrap_or(0);
        let state = store.data();
        let metrics = CallMetrics {
            duration: started.elapsed(),
            fuel_used: limits.fuel.saturating_sub(fuel_left),
            peak_memory_bytes: state.limiter.peak_memory as u64,
            artifact_reads: state.artifact_ops,
            artifact_bytes: state.artifact_bytes,
        };
        let result = result.map_err(|err| classify(&err, state, &limits));
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
fn classify(err: &wasmtime::Error, state: &CallState, limits: &crate::Limits) -> CheckError {
    if state.cancelled {
        return CheckError::Cancelled;
    }
    if state.limiter.memory_refused {
        return CheckError::OutOfMemory {
            cap_bytes: limits.memory_bytes,
        };
    }
    if let Some(trap) = err.downcast_ref::<wasmtime::Trap>() {
        return match trap {
            wasmtime::Trap::Interrupt if state.timed_out => CheckError::Timeout {
                limit_ms: limits.timeout_ms,
            },
            wasmtime::Trap::OutOfFuel => CheckError::OutOfFuel {
                budget: limits.fuel,
            },
            other => CheckError::Trap {
                kind: trap_kind(*other),
                stderr_tail: state.stderr.contents(),
            },
        };
    }
    if let Some(exit) = err.downcast_ref::<wasmtime_wasi::I32Exit>() {
        return CheckError::Trap {
            kind: crate::TrapKind::Exit(exit.0),
            stderr_tail: state.stderr.contents(),
        };
    }
    CheckError::Host(err.to_string())
}
