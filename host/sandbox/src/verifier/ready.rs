//! Ready instances: stores instantiated ahead of their check, so that
//! instantiating (a few microseconds for a Rust verifier, milliseconds for
//! the Python and JavaScript toolchains' start-up work) is off the path a
//! caller waits on.
//!
//! Every instance is still used for exactly one check: a check takes one
//! from its tenant's pool (or instantiates as before when there is none),
//! and the pool is refilled after the check, on the teardown thread
//! ([`TEARDOWN`](crate::call::background::TEARDOWN)) once it dropped the
//! check's store, never on the caller's. A ready store is made under the tenant's limits (memory cap,
//! fuel, a deadline of the tenant's timeout) and given to its check with the
//! check's own clocks, deadline and cancellation ([`StoreState::rearm`]);
//! what instantiating used stays charged to the check, so memory, fuel and
//! artifact figures are what they are when the check instantiates. A pool
//! belongs to one tenant with one set of limits and one artifact store: a
//! tenant seen with other limits or artifacts replaces its pool, and a
//! reloaded verifier is a new verifier with new pools (the old ones drop
//! with the old verifier). A component whose instantiation (or warm-up)
//! fails under the tenant's limits is not pre-instantiated again for them:
//! its checks instantiate (and fail) as before.
//!
//! A component exporting `verdict:verifier/warm-up` has its `warm` called
//! on each ready instance as part of making it, so start-up work its
//! runtime does in the first call into an instance is off the caller's
//! path too; the check then does not call it again.

use super::warm::warm;
use super::{Code, Prepared};
use crate::artifacts::ArtifactStore;
use crate::call::background::{self, drop_later};
use crate::call::guard;
use crate::call::handoff::GuestPolls;
use crate::call::usage::Usage;
use crate::limits::Limits;
use crate::load::shared::Shared;
use crate::store::clock::CallClock;
use crate::store::state::{CallArm, CallPhase, StoreState};
use crate::tenant::Tenant;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, TryLockError, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};
use verdict_policy::{CancelHandle, CheckContext};
use wasmtime::UpdateDeadline;
use wasmtime::component::Instance;

/// A store instantiated ahead of its check.
pub(crate) struct ReadyInstance {
    pub(crate) store: wasmtime::Store<StoreState>,
    pub(crate) instance: Instance,
    /// Fuel instantiating (and warming up) used.
    pub(crate) fuel_used: u64,
    /// Its place in the engine's budget of ready instances, given back
    /// when it is taken for a check or dropped.
    pub(crate) held: Held,
    /// The code it was instantiated from: a check running other code (the
    /// verifier's code was optimized since) does not take it.
    pub(crate) code: Arc<Code>,
}

/// One of an engine's ready instances ([`Shared::ready_budget`]).
pub(crate) struct Held(Arc<Shared>);

impl Held {
    fn take(shared: &Arc<Shared>) -> Option<Held> {
        let held = shared.ready_held.fetch_add(1, Ordering::AcqRel);
        if held >= shared.ready_budget {
            shared.ready_held.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(Held(Arc::clone(shared)))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.0.ready_held.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The longest a ready instance is instantiated on a thread lent from its
/// idle time ([`crate::call::background::run_waiting_jobs`]), whose own
/// work waits meanwhile (plus at most one fuel-yield interval).
pub(crate) const IDLE_MAKE_BUDGET: Duration = Duration::from_millis(2);

/// Why no ready instance was made.
enum NotMade {
    /// The engine holds as many ready instances as it may: try again later.
    OverBudget,
    /// Instantiating outlasted [`IDLE_MAKE_BUDGET`] on an idle thread.
    TooSlowHere,
    /// Instantiating failed under the tenant's limits: do not try again.
    Failed,
}

/// A verifier's pools of ready instances, one per tenant.
#[derive(Default)]
pub(crate) struct ReadyPools {
    pools: Mutex<Vec<Pool>>,
    /// Instantiating once outlasted [`IDLE_MAKE_BUDGET`]: made on the
    /// teardown thread only.
    slow_start: AtomicBool,
}

/// One tenant's ready instances.
struct Pool {
    tenant: String,
    limits: Limits,
    artifacts: Arc<dyn ArtifactStore>,
    ready: Vec<ReadyInstance>,
    /// Refills queued and not yet back.
    pending: usize,
    /// How many ready instances it keeps.
    want: usize,
}

impl Pool {
    fn serves(&self, tenant: &Tenant) -> bool {
        self.tenant == tenant.id()
            && self.limits == *tenant.limits()
            && Arc::ptr_eq(&self.artifacts, tenant.artifacts())
    }
}

impl ReadyPools {
    /// A ready instance for a check of `tenant` running `code`, if its
    /// pool has one, and the refills that top the pool up again, for the
    /// check to run after its teardown. Instances made from other code (the
    /// verifier's code before it was optimized) are dropped.
    pub(crate) fn take(
        &self,
        tenant: &Tenant,
        verifier: &Weak<Prepared>,
        code: &Arc<Code>,
    ) -> (Option<ReadyInstance>, Vec<Refill>) {
        let want = tenant.ready_instances();
        // The refill thread may hold the lock while it waits for a core (it
        // runs only on idle ones): a check then instantiates as without a
        // pool, and never waits for it.
        let mut pools = match self.pools.try_lock() {
            Ok(pools) => pools,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return (None, Vec::new()),
        };
        let found = pools.iter().position(|p| p.tenant == tenant.id());
        let index = match found {
            Some(i) if pools[i].serves(tenant) => i,
            Some(i) => {
                // The tenant's limits or artifacts changed: its ready
                // instances were made for the old ones.
                let stale = pools.swap_remove(i);
                drop_later(stale.ready);
                if want == 0 {
                    return (None, Vec::new());
                }
                pools.push(Pool::new(tenant, want));
                pools.len() - 1
            }
            None if want == 0 => return (None, Vec::new()),
            None => {
                pools.push(Pool::new(tenant, want));
                pools.len() - 1
            }
        };
        let pool = &mut pools[index];
        if pool.ready.iter().any(|r| !Arc::ptr_eq(&r.code, code)) {
            let stale: Vec<_> = pool
                .ready
                .extract_if(.., |r| !Arc::ptr_eq(&r.code, code))
                .collect();
            drop_later(stale);
        }
        let taken = pool.ready.pop();
        if !background::has_room() {
            // Every core is busy (the teardown thread is behind): refills
            // queued now would be dropped unrun, after costing this check
            // their bookkeeping. The next check with room asks for them.
            return (taken, Vec::new());
        }
        let missing = pool.want.saturating_sub(pool.ready.len() + pool.pending);
        pool.pending += missing;
        let refills = (0..missing)
            .map(|_| Refill {
                verifier: verifier.clone(),
                tenant: tenant.clone(),
                ran: false,
            })
            .collect();
        (taken, refills)
    }

    /// A refill that will not run.
    fn unpend(&self, tenant: &Tenant) {
        let mut pools = self.pools.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(pool) = pools.iter_mut().find(|p| p.serves(tenant)) {
            pool.pending = pool.pending.saturating_sub(1);
        }
    }

    /// Files a ready instance made for `tenant` (or drops it, when the pool
    /// moved on); a failed one stops the refills for these limits.
    fn put(&self, tenant: &Tenant, made: Result<ReadyInstance, NotMade>) {
        let mut pools = self.pools.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(pool) = pools.iter_mut().find(|p| p.serves(tenant)) else {
            drop(pools);
            drop(made);
            return;
        };
        pool.pending = pool.pending.saturating_sub(1);
        match made {
            Ok(ready) if pool.ready.len() < pool.want => pool.ready.push(ready),
            Ok(extra) => {
                drop(pools);
                drop(extra);
            }
            Err(NotMade::OverBudget) => {}
            Err(NotMade::TooSlowHere) => self.slow_start.store(true, Ordering::Relaxed),
            Err(NotMade::Failed) => pool.want = 0,
        }
    }

    /// Ready instances held now, over all tenants.
    pub(crate) fn len(&self) -> usize {
        let pools = self.pools.lock().unwrap_or_else(PoisonError::into_inner);
        pools.iter().map(|p| p.ready.len()).sum()
    }
}

impl Pool {
    fn new(tenant: &Tenant, want: usize) -> Self {
        Self {
            tenant: tenant.id().to_owned(),
            limits: *tenant.limits(),
            artifacts: Arc::clone(tenant.artifacts()),
            ready: Vec::new(),
            pending: 0,
            want,
        }
    }
}

/// One ready instance to make for `tenant`, unless the verifier was
/// dropped meanwhile; a refill dropped unrun gives its place back.
pub(crate) struct Refill {
    verifier: Weak<Prepared>,
    tenant: Tenant,
    ran: bool,
}

impl Refill {
    /// Makes the instance and files it (off the caller's path).
    pub(crate) fn run(mut self) {
        if let Some(prepared) = self.verifier.upgrade() {
            if background::on_idle_thread() && prepared.ready.slow_start.load(Ordering::Relaxed) {
                // Dropped unrun: the next check's teardown asks again.
                return;
            }
            self.ran = true;
            let made = make(&prepared, &self.tenant);
            prepared.ready.put(&self.tenant, made);
        }
    }
}

impl Drop for Refill {
    fn drop(&mut self) {
        if !self.ran
            && let Some(prepared) = self.verifier.upgrade()
        {
            prepared.ready.unpend(&self.tenant);
        }
    }
}

/// `inner`, or `None` once polled at or after `give_up` unfinished.
struct Budgeted<F> {
    inner: F,
    give_up: Option<Instant>,
}

impl<F: Future + Unpin> Future for Budgeted<F> {
    type Output = Option<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Poll::Ready(out) = Pin::new(&mut self.inner).poll(cx) {
            return Poll::Ready(Some(out));
        }
        match self.give_up {
            Some(at) if Instant::now() >= at => Poll::Ready(None),
            _ => Poll::Pending,
        }
    }
}

/// Instantiates `prepared` for `tenant` in a store of its own and warms it
/// up (when the component exports `warm-up`), under the tenant's limits and
/// a deadline of its timeout (the check will instantiate, and report why,
/// when that fails).
fn make(prepared: &Prepared, tenant: &Tenant) -> Result<ReadyInstance, NotMade> {
    let code = prepared.code();
    let shared = &code.shared;
    let held = Held::take(shared).ok_or(NotMade::OverBudget)?;
    let limits = *tenant.limits();
    let started = Instant::now();
    let (deadline, _) = limits.deadline(started, &CheckContext::new());
    let arm = CallArm {
        clock: CallClock::new(
            started,
            SystemTime::now(),
            deadline,
            Arc::clone(&shared.timers),
        ),
        deadline,
        cancel: CancelHandle::new(),
        usage: Arc::new(Usage::new(limits.fuel)),
        tape: None,
    };
    let state = StoreState::new(
        Arc::clone(tenant.artifacts()),
        limits,
        arm,
        shared.load.max_memories,
    );
    let mut store = crate::store::new_store(
        &shared.engine,
        state,
        limits.fuel,
        shared.fuel_yield_interval,
    )
    .map_err(|_| NotMade::Failed)?;
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(|mut ctx| {
        Ok(if ctx.data_mut().should_interrupt() {
            UpdateDeadline::Interrupt
        } else {
            UpdateDeadline::Continue(1)
        })
    });
    store.data_mut().phase = CallPhase::Instantiating;
    let warm_index = code.warm;
    let instantiating = GuestPolls(Box::pin(async {
        let instance = code.pre.instantiate_async(&mut store).await?;
        warm(&mut store, &instance, warm_index).await?;
        wasmtime::Result::<Instance>::Ok(instance)
    }));
    // On a thread lent from its idle time, give up after a short while.
    let give_up =
        background::on_idle_thread().then(|| (Instant::now() + IDLE_MAKE_BUDGET).min(deadline));
    let bounded = Budgeted {
        inner: instantiating,
        give_up,
    };
    let instance = guard::block_on(bounded, Some(give_up.unwrap_or(deadline)))
        .ok_or(NotMade::TooSlowHere)?
        .map_err(|_| NotMade::Failed)?;
    if store.data().limiter.memory_refused {
        return Err(NotMade::Failed);
    }
    let fuel_left = store.get_fuel().map_err(|_| NotMade::Failed)?;
    Ok(ReadyInstance {
        store,
        instance,
        fuel_used: limits.fuel.saturating_sub(fuel_left),
        held,
        code: Arc::clone(&code),
    })
}
