//! Per-call store state: the deny-all WASI context, the limiter, and the
//! tenant-scoped, bounded implementation of the `artifacts` import (each
//! WIT version's bindings adapt it to their types).

use crate::artifacts::{ArtifactData, ArtifactError, ArtifactStore};
use crate::call::usage::Usage;
use crate::limits::Limits;
use crate::store::clock::{CallClock, ClockView};
use crate::store::deny::DenyHttp;
use crate::store::limiter::CallLimiter;
use crate::store::poll::PollView;
use crate::store::stderr::TailPipe;
use crate::store::tape::{ArtifactOp, CallTrace, TapeState};
use std::sync::Arc;
use std::time::Instant;
use verdict_policy::CancelHandle;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtxView, WasiHttpView};

/// Bytes of guest stderr kept per call.
pub(crate) const STDERR_TAIL_BYTES: usize = 4096;

/// Where a call was when it failed; classifies the canonical-ABI errors
/// wasmtime reports untyped (see [`crate::abi`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallPhase {
    /// Setting up the store: only the host can fail.
    Setup,
    /// Instantiating the component under the tenant's limits.
    Instantiating,
    /// The component's `warm` runs (its optional `warm-up` export).
    Warming,
    /// Copying the packet in, through the guest's allocator.
    Lowering,
    /// The guest runs (and calls host imports); its answer is read back.
    Running,
}

/// When a call passed its stage boundaries (for [`crate::CallStages`]).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct StageMarks {
    /// The store was set up.
    pub(crate) ready: Option<Instant>,
    /// The instance and its export were ready.
    pub(crate) instantiated: Option<Instant>,
    /// The packet was in guest memory.
    pub(crate) lowered: Option<Instant>,
}

/// What is a call's own in its store: given when the store is made for the
/// call, or when a ready store is taken for it ([`StoreState::rearm`]).
pub(crate) struct CallArm {
    /// The call's virtual clocks, started when the call started.
    pub(crate) clock: CallClock,
    pub(crate) deadline: Instant,
    pub(crate) cancel: CancelHandle,
    /// The counters the caller reads while the call runs.
    pub(crate) usage: Arc<Usage>,
    /// What the call sees from outside, when it is recorded or replayed.
    pub(crate) tape: Option<Box<TapeState>>,
}

/// Everything a store needs for one call.
pub(crate) struct StoreState {
    /// Deny-all WASI (see `crate::store::deny`), built when the guest first calls
    /// a WASI function (most checks never do; building one costs a few
    /// random-number generators). The clocks are the call's virtual clocks
    /// (`clock`), linked separately.
    wasi: Option<WasiCtx>,
    http: DenyHttp,
    table: ResourceTable,
    pub(crate) limiter: CallLimiter,
    pub(crate) stderr: TailPipe,
    pub(crate) clock: CallClock,
    store: Arc<dyn ArtifactStore>,
    limits: Limits,
    pub(crate) deadline: Instant,
    pub(crate) cancel: CancelHandle,
    pub(crate) phase: CallPhase,
    /// Set when the deadline stopped the guest.
    pub(crate) timed_out: bool,
    /// Set when cancellation stopped the guest.
    pub(crate) cancelled: bool,
    /// Artifact operations performed (including refused ones).
    pub(crate) artifact_ops: u32,
    /// Artifact bytes returned to the guest.
    pub(crate) artifact_bytes: u64,
    /// Stage boundaries reached so far.
    pub(crate) marks: StageMarks,
    /// The counters the caller can read while the call runs.
    pub(crate) usage: Arc<Usage>,
    /// When a guest still running should yield once, so that a call begun
    /// on its caller's thread moves to its own (see [`crate::call::handoff`]).
    pub(crate) yield_at: Option<Instant>,
    /// The call's tape, when it is recorded or replayed.
    tape: Option<Box<TapeState>>,
}

impl StoreState {
    pub(crate) fn new(
        store: Arc<dyn ArtifactStore>,
        limits: Limits,
        arm: CallArm,
        max_memories: u32,
    ) -> Self {
        let CallArm {
            clock,
            deadline,
            cancel,
            usage,
            tape,
        } = arm;
        let stderr = TailPipe::new(STDERR_TAIL_BYTES);
        Self {
            wasi: None,
            http: DenyHttp::new(),
            table: ResourceTable::new(),
            limiter: CallLimiter::new(
                limits.memory_bytes,
                limits.table_elements,
                limits.instances,
                max_memories,
            ),
            stderr,
            clock,
            store,
            limits,
            deadline,
            cancel,
            phase: CallPhase::Setup,
            timed_out: false,
            cancelled: false,
            artifact_ops: 0,
            artifact_bytes: 0,
            marks: StageMarks::default(),
            usage,
            yield_at: None,
            tape,
        }
    }

    /// Gives a ready store (instantiated ahead of its call) to the call
    /// `arm`: its clocks, deadline, cancellation and counters, and the
    /// call's own stage marks. What instantiating used (memory, fuel,
    /// artifact operations, stderr) stays charged to the call, as it is when
    /// the call instantiates.
    pub(crate) fn rearm(&mut self, arm: CallArm) {
        let CallArm {
            clock,
            deadline,
            cancel,
            usage,
            tape,
        } = arm;
        self.clock = clock;
        self.tape = tape;
        self.deadline = deadline;
        self.cancel = cancel;
        self.usage = usage;
        self.phase = CallPhase::Setup;
        self.timed_out = false;
        self.cancelled = false;
        self.marks = StageMarks::default();
        self.yield_at = None;
    }

    /// True once, at the first tick after [`StoreState::yield_at`].
    pub(crate) fn yield_due(&mut self) -> bool {
        match self.yield_at {
            Some(at) if Instant::now() >= at => {
                self.yield_at = None;
                true
            }
            _ => false,
        }
    }

    /// Publishes the fuel left and the peak memory to the caller.
    pub(crate) fn publish(&self, fuel_left: u64) {
        self.usage.tick(fuel_left, self.limiter.peak_memory as u64);
    }

    /// The resource table, for `wasi:io`.
    pub(crate) fn io_table(&mut self) -> &mut ResourceTable {
        &mut self.table
    }

    /// The call's virtual clocks, for `wasi:clocks`.
    pub(crate) fn virtual_clocks(&mut self) -> ClockView<'_> {
        ClockView {
            clock: &self.clock,
            table: &mut self.table,
            tape: self.tape.as_deref_mut(),
        }
    }

    /// `wasi:io/poll`'s view: the table, and the tape for the timers.
    pub(crate) fn poll_view(&mut self) -> PollView<'_> {
        PollView {
            table: &mut self.table,
            tape: self.tape.as_deref_mut(),
        }
    }

    /// What the call saw from outside, when it was recorded or replayed.
    pub(crate) fn take_trace(&mut self) -> Option<CallTrace> {
        self.tape.take().map(|tape| tape.into_trace())
    }

    /// Checks cancellation and the deadline; records which one fired.
    pub(crate) fn should_interrupt(&mut self) -> bool {
        if self.cancel.is_cancelled() {
            self.cancelled = true;
            return true;
        }
        if Instant::now() >= self.deadline {
            self.timed_out = true;
            return true;
        }
        false
    }

    /// Host imports are not interrupted by epochs, so each one checks the
    /// deadline itself, then charges one operation against the call's budget.
    fn begin_op(&mut self) -> wasmtime::Result<Result<(), ArtifactError>> {
        if self.should_interrupt() {
            return Err(wasmtime::Trap::Interrupt.into());
        }
        if self.artifact_ops >= self.limits.artifact_reads_per_call {
            return Ok(Err(ArtifactError::LimitReached));
        }
        self.artifact_ops += 1;
        self.usage.artifacts(self.artifact_ops, self.artifact_bytes);
        Ok(Ok(()))
    }

    /// The `artifacts.read` import, for every WIT version's bindings: one
    /// bounded operation in the tenant's scope. A refusal is a value; only
    /// the deadline or cancellation stop the call (a trap).
    pub(crate) fn read_artifact(
        &mut self,
        id: &str,
    ) -> wasmtime::Result<Result<ArtifactData, ArtifactError>> {
        if let Err(refused) = self.begin_op()? {
            if let Some(tape) = &mut self.tape {
                tape.artifact(ArtifactOp::Read {
                    id: id.to_owned(),
                    result: Err(refused),
                });
            }
            return Ok(Err(refused));
        }
        let read = self.store.read(id, self.limits.artifact_bytes_per_read);
        if let Ok(data) = &read {
            self.artifact_bytes += data.size;
            self.usage.artifacts(self.artifact_ops, self.artifact_bytes);
        }
        if let Some(tape) = &mut self.tape {
            tape.artifact(ArtifactOp::Read {
                id: id.to_owned(),
                result: read.clone(),
            });
        }
        Ok(read)
    }

    /// The `artifacts.list` import, bounded like [`StoreState::read_artifact`].
    pub(crate) fn list_artifacts(
        &mut self,
        prefix: &str,
    ) -> wasmtime::Result<Result<Vec<String>, ArtifactError>> {
        let listed = match self.begin_op()? {
            Err(refused) => Err(refused),
            Ok(()) => self
                .store
                .list(prefix, self.limits.list_max_entries as usize),
        };
        if let Some(tape) = &mut self.tape {
            tape.artifact(ArtifactOp::List {
                prefix: prefix.to_owned(),
                result: listed.clone(),
            });
        }
        Ok(listed)
    }
}

impl WasiView for StoreState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: self.wasi.get_or_insert_with(|| {
                let seed = self.tape.as_ref().map(|tape| &tape.trace.seed);
                crate::store::deny::wasi_ctx(self.stderr.clone(), seed)
            }),
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for StoreState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http.ctx,
            table: &mut self.table,
            hooks: &mut self.http.hooks,
        }
    }
}
