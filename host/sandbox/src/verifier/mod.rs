//! A loaded, prepared verifier and the calls into it.
//!
//! Every call gets a fresh `Store`: its own fuel, epoch deadline, memory cap,
//! WASI context, virtual clocks and artifact budget. A store that trapped is
//! dropped with the call, so a trapped instance is never re-entered.
//!
//! Calls run on wasmtime's async API under the guard of [`crate::call::guard`]:
//! every call ends by its deadline (plus a tick) or on cancellation, whether
//! the guest computes, sleeps or waits in any host import. The blocking
//! methods ([`LoadedVerifier::check`], [`LoadedVerifier::progress_key`])
//! drive the same future on the calling thread; the `_async` ones can be
//! awaited on any executor. A call that does not finish at once moves to a
//! thread of its own while its caller waits, so the caller returns at the
//! deadline even when the guest's thread is waiting for a core
//! ([`crate::call::handoff`]).
//!
//! # Entry points
//!
//! A role is entered through its standard export
//! (`verdict:verifier/completion` or `/progress`), or, when the component
//! also exports the packed one (`verdict:packed/completion` or `/progress`,
//! as every guest-SDK verifier does) and the host calls packed entry points
//! ([`HostConfig::packed_packets`](crate::HostConfig::packed_packets)),
//! through that: the same packet, passed in a few large pieces
//! ([`crate::bindings`]). Both are typechecked at load.
//!
//! A component that also exports `verdict:verifier/warm-up` (since 0.1.1)
//! has its `warm` called once on every fresh instance before that
//! instance's one call: on a ready instance ahead of the check, otherwise
//! right after instantiating ([`warm`]). Either way the check is
//! charged what it used, as it is charged instantiating.
//!
//! [`call`] is one call: a fresh store, instantiate, lower, run under the
//! guard, lift, and its report.
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

pub(crate) mod call;
pub(crate) mod optimized;
pub(crate) mod ready;
pub(crate) mod taped;
pub(crate) mod warm;

use crate::abi::GuestAnswer;
use crate::bindings::ApiVersion;
use crate::bindings::{Version, WithVersion};
use crate::call::usage::Usage;
use crate::error::{CheckError, LoadError};
use crate::load::census::Footprint;
use crate::load::component::{self, Role};
use crate::load::imports;
use crate::load::shared::Shared;
use crate::store::clock::CallClock;
use crate::store::state::{CallArm, StoreState};
use crate::store::tape::TapeState;
use crate::store::tape::Taped;
use crate::tenant::Tenant;
use crate::verifier::call::{Call, CallReport, CallRun, failed};
use ready::ReadyPools;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant, SystemTime};
use taped::Tape;
use verdict_policy::{CheckContext, CheckPacket, Verdict};
use wasmtime::component::{
    Component, ComponentExportIndex, ComponentNamedList, InstancePre, Lift, Lower,
    types::ComponentItem,
};

/// A verifier component loaded by a [`VerifierHost`](crate::VerifierHost):
/// compiled, checked and prepared once, called many times (each call in a
/// fresh store). Clones share one prepared component.
#[derive(Clone)]
pub struct LoadedVerifier {
    inner: Arc<Prepared>,
}

/// A verifier that may have been dropped since: what its host remembers of
/// the verifiers it loaded, so that loading the same component again while
/// one is live shares it rather than loading its code again.
#[derive(Clone)]
pub(crate) struct WeakVerifier(Weak<Prepared>);

impl WeakVerifier {
    /// The verifier, if any clone of it is still live.
    pub(crate) fn upgrade(&self) -> Option<LoadedVerifier> {
        self.0.upgrade().map(|inner| LoadedVerifier { inner })
    }
}

/// What a loaded verifier is: everything a call needs. Its code may be
/// replaced once, by the same component compiled with Cranelift in the
/// background (see [`optimized`]); everything else is read-only.
pub(crate) struct Prepared {
    /// The code calls run now: a call takes it once, at its start, and
    /// keeps it to its end.
    code: Mutex<Arc<Code>>,
    digest: String,
    /// The WIT version the exports were built against: which bindings
    /// prepare and call it.
    api: ApiVersion,
    /// What instantiating it creates, checked against each call's limits.
    footprint: Footprint,
    /// Instances made ahead of their checks, per tenant.
    ready: ReadyPools,
    /// Where the code stands: its tier and any background compile.
    status: optimized::StatusCell,
}

/// A component compiled on one tier and prepared in that tier's engine:
/// whole (compiled, type-checked, pre-instantiated) before any call sees
/// it.
pub(crate) struct Code {
    shared: Arc<Shared>,
    pre: InstancePre<StoreState>,
    completion: Option<Entry>,
    progress: Option<Entry>,
    /// The optional `warm-up` export's `warm`, called on every fresh
    /// instance before its one call.
    warm: Option<ComponentExportIndex>,
}

impl Code {
    /// Prepares `component` in `shared`'s engine: its imports checked, its
    /// exports found and type-checked, pre-instantiated.
    pub(crate) fn prepare(
        shared: Arc<Shared>,
        component: &Component,
    ) -> Result<(Self, ApiVersion), LoadError> {
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
            .instantiate_pre(component)
            .map_err(|e| LoadError::Link(e.to_string()))?;
        let packed = shared.packed_packets;
        let (completion, progress) = api.with(Entries {
            pre: &pre,
            exports: &exports,
            packed,
        })?;
        let warm = match component::warm_export(exports.iter().map(String::as_str), api) {
            Some(interface) => Some(export_func::<(), ()>(&pre, interface, "warm")?),
            None => None,
        };
        let code = Self {
            shared,
            pre,
            completion,
            progress,
            warm,
        };
        Ok((code, api))
    }

    /// The tier this code was compiled with.
    pub(crate) fn tier(&self) -> crate::load::tier::Tier {
        self.shared.tier
    }
}

impl Prepared {
    /// The code a call starting now runs.
    pub(crate) fn code(&self) -> Arc<Code> {
        Arc::clone(&self.code.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl std::fmt::Debug for LoadedVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = &self.inner;
        let code = inner.code();
        f.debug_struct("LoadedVerifier")
            .field("digest", &inner.digest)
            .field("api", &inner.api)
            .field("tier", &code.tier())
            .field("completion", &code.completion)
            .field("progress", &code.progress)
            .field("warm", &code.warm.is_some())
            .finish()
    }
}

/// The export a call of one role enters.
#[derive(Debug, Clone, Copy)]
struct Entry {
    index: ComponentExportIndex,
    /// A packed entry point (`verdict:packed`), taking [`Version::Packed`].
    packed: bool,
}

/// The entries of both roles of a component, with its version's types.
struct Entries<'a> {
    pre: &'a InstancePre<StoreState>,
    exports: &'a [String],
    packed: bool,
}

impl WithVersion for Entries<'_> {
    type Output = Result<(Option<Entry>, Option<Entry>), LoadError>;

    fn run<V: Version>(self) -> Self::Output {
        let Self {
            pre,
            exports,
            packed,
        } = self;
        Ok((
            entry::<V, V::Verdict>(pre, exports, Role::Completion, "check", packed)?,
            entry::<V, V::Key>(pre, exports, Role::Progress, "progress-key", packed)?,
        ))
    }
}

/// A call about to start, whatever its role.
struct Start<'a> {
    verifier: &'a LoadedVerifier,
    /// The code the call runs, taken once at its start.
    code: Arc<Code>,
    tenant: &'a Tenant,
    ctx: &'a CheckContext,
    entry: Entry,
    packet: &'a CheckPacket,
    tape: Option<Tape<'a>>,
}

/// A completion check starting, with its component's version's types.
struct StartCheck<'a>(Start<'a>);

impl WithVersion for StartCheck<'_> {
    type Output = Result<Call<Verdict>, CheckError>;

    fn run<V: Version>(self) -> Self::Output {
        let Start {
            verifier,
            code,
            tenant,
            ctx,
            entry,
            packet,
            tape,
        } = self.0;
        verifier.start::<V, V::Verdict, _>(code, tenant, ctx, entry, packet, tape, V::verdict)
    }
}

/// A progress-key sample starting, with its component's version's types.
struct StartProgress<'a>(Start<'a>);

impl WithVersion for StartProgress<'_> {
    type Output = Result<Call<String>, CheckError>;

    fn run<V: Version>(self) -> Self::Output {
        let Start {
            verifier,
            code,
            tenant,
            ctx,
            entry,
            packet,
            tape,
        } = self.0;
        verifier.start::<V, V::Key, _>(code, tenant, ctx, entry, packet, tape, V::key)
    }
}

/// The entry of `role` (its function `func` returning `A`): the standard
/// export, or the packed one beside it when the host calls packed entry
/// points. `None` without the standard export; both are typechecked
/// whenever present.
fn entry<V: Version, A: ComponentNamedList + Lift + 'static>(
    pre: &InstancePre<StoreState>,
    exports: &[String],
    role: Role,
    func: &str,
    packed_packets: bool,
) -> Result<Option<Entry>, LoadError> {
    let names = || exports.iter().map(String::as_str);
    let Some(standard) = component::role_export(names(), role) else {
        return Ok(None);
    };
    let index = export_func::<(V::Packet<'_>,), A>(pre, standard, func)?;
    let packed = match component::packed_export(names(), role, V::PACKED_SERIES) {
        Some(name) => Some(export_func::<(V::Packed<'_>,), A>(pre, name, func)?),
        None => None,
    };
    Ok(Some(match packed {
        Some(index) if packed_packets => Entry {
            index,
            packed: true,
        },
        _ => Entry {
            index,
            packed: false,
        },
    }))
}

/// The export `func` of the interface exported as `interface`, type-checked
/// as taking `P` and returning `A`.
fn export_func<P: ComponentNamedList + Lower, A: ComponentNamedList + Lift + 'static>(
    pre: &InstancePre<StoreState>,
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
            .typecheck::<P, A>(&pre.instance_type())
            .map_err(|e| LoadError::Link(format!("export `{interface}#{func}`: {e}")))?,
        _ => return Err(missing()),
    }
    Ok(index)
}

impl LoadedVerifier {
    /// The verifier of `component`, compiled on `shared`'s tier; `status`
    /// says whether a background compile will replace its code.
    pub(crate) fn prepare(
        shared: Arc<Shared>,
        component: Component,
        digest: String,
        footprint: Footprint,
        status: optimized::TierStatus,
    ) -> Result<Self, LoadError> {
        let (code, api) = Code::prepare(shared, &component)?;
        let inner = Prepared {
            code: Mutex::new(Arc::new(code)),
            digest,
            api,
            footprint,
            ready: ReadyPools::default(),
            status: optimized::StatusCell::new(status),
        };
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    /// A reference that does not keep this verifier loaded.
    pub(crate) fn downgrade(&self) -> WeakVerifier {
        WeakVerifier(Arc::downgrade(&self.inner))
    }

    /// Lowercase hex SHA-256 of the component bytes: its identity as a checker.
    pub fn digest(&self) -> &str {
        &self.inner.digest
    }

    /// The WIT version the component was built against, `major.minor`
    /// (`"0.1"`).
    pub fn wit_version(&self) -> &'static str {
        self.inner.api.major_minor()
    }

    /// True when the component exports `completion`.
    pub fn has_completion(&self) -> bool {
        self.inner.code().completion.is_some()
    }

    /// The instances made ahead of their checks that this verifier holds
    /// now, over all tenants ([`Tenant::with_ready_instances`]).
    pub fn ready_instances(&self) -> usize {
        self.inner.ready.len()
    }

    /// True when the component exports `progress`.
    pub fn has_progress(&self) -> bool {
        self.inner.code().progress.is_some()
    }

    /// True when the component exports `verdict:verifier/warm-up`: each of
    /// its instances is warmed up before its call.
    pub fn warms_up(&self) -> bool {
        self.inner.code().warm.is_some()
    }

    /// True when calls of `role` enter the component's packed entry point
    /// (see [`HostConfig::packed_packets`](crate::HostConfig::packed_packets)).
    pub fn calls_packed(&self, role: Role) -> bool {
        let code = self.inner.code();
        let entry = match role {
            Role::Completion => code.completion,
            Role::Progress => code.progress,
        };
        entry.is_some_and(|e| e.packed)
    }

    /// Runs the completion check for `tenant` on `packet` within `ctx`,
    /// blocking the calling thread (see [`LoadedVerifier::check_async`]).
    pub fn check(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        ctx: &CheckContext,
    ) -> CallReport<Verdict> {
        match self.start_check(tenant, packet, ctx, None) {
            Ok(call) => call.blocking(),
            Err(refused) => failed(refused),
        }
    }

    /// Runs the completion check for `tenant` on `packet` within `ctx` (see
    /// the module docs for the deadline). Needs no particular executor: the
    /// deadline and guest sleeps are timed by the host's epoch ticker.
    ///
    /// The guest runs in the first poll, on the polling thread, and most
    /// checks finish there without ever returning `Pending`: a task that
    /// runs checks in a loop never gives its executor back, so other tasks
    /// on that thread wait for the whole loop. Yield between checks
    /// (`tokio::task::yield_now().await`) to share the thread.
    pub async fn check_async(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        ctx: &CheckContext,
    ) -> CallReport<Verdict> {
        match self.start_check(tenant, packet, ctx, None) {
            Ok(call) => call.finish().await,
            Err(refused) => failed(refused),
        }
    }

    pub(crate) fn start_check(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        ctx: &CheckContext,
        tape: Option<Tape<'_>>,
    ) -> Result<Call<Verdict>, CheckError> {
        let code = self.inner.code();
        let Some(entry) = code.completion else {
            return Err(CheckError::Unsupported("completion"));
        };
        self.inner.api.with(StartCheck(Start {
            verifier: self,
            code,
            tenant,
            ctx,
            entry,
            packet,
            tape,
        }))
    }

    /// Samples the progress key for `tenant` on `packet` within `ctx`,
    /// blocking the calling thread (see [`LoadedVerifier::progress_key_async`]).
    pub fn progress_key(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        ctx: &CheckContext,
    ) -> CallReport<String> {
        match self.start_progress(tenant, packet, ctx, None) {
            Ok(call) => call.blocking(),
            Err(refused) => failed(refused),
        }
    }

    /// Samples the progress key for `tenant` on `packet` within `ctx`.
    pub async fn progress_key_async(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        ctx: &CheckContext,
    ) -> CallReport<String> {
        match self.start_progress(tenant, packet, ctx, None) {
            Ok(call) => call.finish().await,
            Err(refused) => failed(refused),
        }
    }

    pub(crate) fn start_progress(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        ctx: &CheckContext,
        tape: Option<Tape<'_>>,
    ) -> Result<Call<String>, CheckError> {
        let code = self.inner.code();
        let Some(entry) = code.progress else {
            return Err(CheckError::Unsupported("progress"));
        };
        self.inner.api.with(StartProgress(Start {
            verifier: self,
            code,
            tenant,
            ctx,
            entry,
            packet,
            tape,
        }))
    }

    /// Sets up a call of the export `entry` with `packet` for `tenant`,
    /// under the deadline and the cancellation of `ctx`: the limits are
    /// checked, the deadline fixed, and the call future owns what it uses
    /// (see [`crate::call::handoff`]). A refusal here is a call that never began.
    /// A taped call (recorded or replayed) never takes a ready instance:
    /// what instantiating saw belongs to its trace.
    #[allow(clippy::too_many_arguments)]
    fn start<
        V: Version,
        A: GuestAnswer + ComponentNamedList + Lift + Send + Sync + 'static,
        T: Send + 'static,
    >(
        &self,
        code: Arc<Code>,
        tenant: &Tenant,
        ctx: &CheckContext,
        entry: Entry,
        packet: &CheckPacket,
        tape: Option<Tape<'_>>,
        validate: fn(A) -> Result<T, CheckError>,
    ) -> Result<Call<T>, CheckError> {
        let started = Instant::now();
        let cancel = ctx.cancel_handle();
        if cancel.is_cancelled() {
            return Err(CheckError::Cancelled);
        }
        let limits = *tenant.limits();
        if let Err(over) = self
            .inner
            .footprint
            .fits(&limits, code.shared.load.max_memories)
        {
            return Err(CheckError::LoadRejected(over));
        }
        let (deadline, limit_ms) = limits.deadline(started, ctx);
        let wall = match &tape {
            Some(Tape::Replay(trace)) => {
                SystemTime::UNIX_EPOCH + Duration::from_millis(trace.wall_clock_ms)
            }
            _ => SystemTime::now(),
        };
        let clock = CallClock::new(started, wall, deadline, Arc::clone(&code.shared.timers));
        let usage = Arc::new(Usage::new(limits.fuel));
        let wall_clock_ms = clock.wall_clock_ms();
        // A replayed call reads the artifacts its trace read, not the live ones.
        let artifacts = match &tape {
            Some(Tape::Replay(trace)) => trace.artifact_store(),
            _ => Arc::clone(tenant.artifacts()),
        };
        let (tape, taped) = match tape {
            None => (None, None),
            Some(tape) => {
                let state = match tape {
                    Tape::Record => {
                        let seed = crate::store::tape::draw_seed()
                            .map_err(|e| CheckError::Host(format!("no random seed: {e}")))?;
                        TapeState::record(seed, wall_clock_ms)
                    }
                    Tape::Replay(trace) => TapeState::replay(trace),
                };
                let taped = Taped {
                    sink: Arc::new(Mutex::new(None)),
                    seed: state.trace.seed,
                    wall_clock_ms,
                };
                (Some(Box::new(state)), Some(taped))
            }
        };
        let (ready, refills) = if taped.is_some() {
            (None, Vec::new())
        } else {
            self.inner
                .ready
                .take(tenant, &Arc::downgrade(&self.inner), &code)
        };
        let run = CallRun {
            shared: Arc::clone(&code.shared),
            pre: code.pre.clone(),
            index: entry.index,
            warm: code.warm,
            packed: entry.packed,
            packet: packet.clone(),
            limits,
            started,
            limit_ms,
            arm: CallArm {
                clock,
                deadline,
                cancel: cancel.clone(),
                usage: Arc::clone(&usage),
                tape,
            },
            artifacts,
            ready,
            refills,
            trace_sink: taped.as_ref().map(|t| Arc::clone(&t.sink)),
        };
        Ok(Call {
            future: Box::pin(async move { run.run::<V, A>().await.validated(validate) }),
            timers: Arc::clone(&code.shared.timers),
            cancel: cancel.clone(),
            deadline,
            limit_ms,
            started,
            fuel: limits.fuel,
            wall_clock_ms,
            usage,
            prompt_wakeups: code.shared.prompt_wakeups,
            tier: code.shared.tier,
            taped,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The async calls can be spawned on a multi-threaded executor.
    #[allow(dead_code)]
    fn calls_are_send(verifier: &LoadedVerifier, tenant: &Tenant, packet: &CheckPacket) {
        fn send<T: Send>(_: T) {}
        let ctx = CheckContext::new();
        send(verifier.check_async(tenant, packet, &ctx));
        send(verifier.progress_key_async(tenant, packet, &ctx));
    }
}
