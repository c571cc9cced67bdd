//! Typed errors for loading verifiers and running checks.
//!
//! Guest failures are classified from typed sources only: wasmtime's `Trap`
//! (downcast), WASI's `I32Exit`, the host's own checks of what the guest
//! handed back ([`crate::abi`]), and the per-call record of what the host
//! itself refused (memory growth, deadline, cancellation) and of the phase
//! the call was in when an untyped canonical-ABI error arose (instantiating,
//! lowering the packet, running). No error string is ever matched. Messages
//! carry no host paths or secrets.

use verdict_policy::VerdictError;

/// Why a component was refused at load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The bytes are not WebAssembly at all, or are malformed.
    #[error("not a valid WebAssembly component: {0}")]
    Corrupt(String),
    /// A core module was given where a component is required.
    #[error(
        "a core WebAssembly module, not a component (build for wasm32-wasip2, or make it one with `verdict componentize` or `wasm-tools component new`)"
    )]
    CoreModule,
    /// The component imports something this host does not grant: every
    /// such import, in the component's order.
    #[error("imports {}, which verifiers may not use", quoted(.imports))]
    ForbiddenImport {
        /// The full import names, e.g. `wasi:keyvalue/store@0.2.0`; never
        /// empty.
        imports: Vec<String>,
    },
    /// The component exports neither `completion` nor `progress`.
    #[error("exports neither verdict:verifier/completion nor verdict:verifier/progress")]
    NoVerifierExport,
    /// The component is over a load limit ([`crate::LoadLimits`]) or, at a
    /// call, over a structural limit of the tenant's [`crate::Limits`].
    #[error("over the limit `{limit}`: {found} (at most {max})")]
    OverLimit {
        /// The limit's name, e.g. `max_functions` or `table_elements`.
        limit: &'static str,
        /// What the component has or asks for.
        found: u64,
        /// The limit.
        max: u64,
    },
    /// The component cannot be instantiated under the tenant's limits (too
    /// many instances, memories or tables, or a table too large).
    #[error("cannot be instantiated under this tenant's limits: {0}")]
    Instantiate(String),
    /// Compiling or linking the component failed.
    #[error("cannot prepare the component: {0}")]
    Link(String),
    /// Compiling the component in a child process overran one of the
    /// child's bounds ([`crate::ChildCompiler`]): its memory
    /// (`compile_memory_bytes`, bytes) or its deadline
    /// (`compile_timeout_ms`, milliseconds).
    #[error("compiling it overran the bound `{bound}` (at most {max})")]
    CompileBound {
        /// The bound's name.
        bound: &'static str,
        /// The bound.
        max: u64,
    },
    /// Reading the component or the compile cache failed.
    #[error("cannot read the component: {0}")]
    Io(String),
}

/// `a`, `b`, `c`: names quoted in backticks, comma-separated (one line).
fn quoted(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    quoted.join(", ")
}

/// What kind of trap stopped a guest.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TrapKind {
    /// Call stack exhausted (e.g. unbounded recursion).
    StackOverflow,
    /// An `unreachable` instruction: a Rust guest's panic or abort.
    Unreachable,
    /// Out-of-bounds memory access.
    MemoryOutOfBounds,
    /// Integer division by zero.
    DivisionByZero,
    /// Integer overflow.
    IntegerOverflow,
    /// The guest called `exit` with this code.
    Exit(i32),
    /// A pointer or pointer+length the guest handed back is out of bounds of
    /// its memory, wraps around, or is misaligned (e.g. a 2 GiB string, or
    /// a verdict address outside memory).
    InvalidPointer {
        /// Which value: `verdict`, `verdict.reason`, `progress key`, ...
        at: &'static str,
    },
    /// A string the guest handed back is not valid in its encoding (UTF-8).
    InvalidEncoding {
        /// Which value.
        at: &'static str,
    },
    /// An out-of-range option or variant tag in what the guest handed back.
    InvalidDiscriminant {
        /// Which value.
        at: &'static str,
    },
    /// The guest's allocator (`cabi_realloc`) returned an invalid pointer
    /// while the host copied the packet in.
    BadAllocation,
    /// The guest called a host import with arguments the canonical ABI
    /// refuses (an invalid pointer, encoding, tag or handle, or more data
    /// than one host call may carry).
    AbiViolation,
    /// Any other trap, by wasmtime's name for it.
    Other(String),
}

impl std::fmt::Display for TrapKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::StackOverflow => f.write_str("stack overflow"),
            Self::Unreachable => f.write_str("unreachable (guest panic or abort)"),
            Self::MemoryOutOfBounds => f.write_str("out-of-bounds memory access"),
            Self::DivisionByZero => f.write_str("integer division by zero"),
            Self::IntegerOverflow => f.write_str("integer overflow"),
            Self::Exit(code) => write!(f, "guest exited with code {code}"),
            Self::InvalidPointer { at } => write!(f, "invalid pointer or length in {at}"),
            Self::InvalidEncoding { at } => write!(f, "invalid UTF-8 in {at}"),
            Self::InvalidDiscriminant { at } => write!(f, "invalid option tag in {at}"),
            Self::BadAllocation => f.write_str("the guest allocator returned an invalid pointer"),
            Self::AbiViolation => f.write_str("invalid arguments to a host import"),
            Self::Other(name) => f.write_str(name),
        }
    }
}

impl TrapKind {
    /// A stable snake_case name for machine-readable output.
    pub fn code(&self) -> &'static str {
        match self {
            Self::StackOverflow => "stack_overflow",
            Self::Unreachable => "unreachable",
            Self::MemoryOutOfBounds => "memory_out_of_bounds",
            Self::DivisionByZero => "division_by_zero",
            Self::IntegerOverflow => "integer_overflow",
            Self::Exit(_) => "exit",
            Self::InvalidPointer { .. } => "invalid_pointer",
            Self::InvalidEncoding { .. } => "invalid_encoding",
            Self::InvalidDiscriminant { .. } => "invalid_discriminant",
            Self::BadAllocation => "bad_allocation",
            Self::AbiViolation => "abi_violation",
            Self::Other(_) => "other",
        }
    }
}

/// Why a check produced no usable verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// The wall-clock deadline passed; the guest was preempted. The
    /// deadline is the earlier of the tenant's timeout and the check
    /// context's deadline.
    #[error("verifier exceeded its {limit_ms} ms deadline")]
    Timeout {
        /// The deadline that applied, in milliseconds from the call's start.
        limit_ms: u64,
    },
    /// The fuel budget ran out.
    #[error("verifier ran out of fuel (budget {budget})")]
    OutOfFuel {
        /// The budget given.
        budget: u64,
    },
    /// The guest tried to grow memory past its cap.
    #[error("verifier exceeded its memory cap of {cap_bytes} bytes")]
    OutOfMemory {
        /// The cap in bytes.
        cap_bytes: u64,
    },
    /// The guest trapped.
    #[error("verifier trapped: {kind}")]
    Trap {
        /// What kind of trap.
        kind: TrapKind,
        /// The last bytes the guest wrote to stderr (e.g. a panic message).
        stderr_tail: String,
    },
    /// The verdict broke a bound (reason, feedback, size).
    #[error("verifier returned an invalid verdict: {0}")]
    InvalidVerdict(#[from] VerdictError),
    /// The progress key is longer than 4,000 characters.
    #[error(
        "progress key has {chars} characters (limit {})",
        verdict_policy::MAX_PROGRESS_KEY_CHARS
    )]
    InvalidProgressKey {
        /// Characters found.
        chars: usize,
    },
    /// The component was refused when loading.
    #[error("verifier rejected at load: {0}")]
    LoadRejected(#[from] LoadError),
    /// The component does not implement the requested role.
    #[error("verifier does not export the {0} interface")]
    Unsupported(&'static str),
    /// The check was cancelled through its context's
    /// [`CancelHandle`](verdict_policy::CancelHandle).
    #[error("check cancelled")]
    Cancelled,
    /// The host failed in a way not attributable to the guest.
    #[error("verifier host error: {0}")]
    Host(String),
}

impl CheckError {
    /// A stable snake_case name for machine-readable output.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Timeout { .. } => "timeout",
            Self::OutOfFuel { .. } => "out_of_fuel",
            Self::OutOfMemory { .. } => "out_of_memory",
            Self::Trap { .. } => "trap",
            Self::InvalidVerdict(_) => "invalid_verdict",
            Self::InvalidProgressKey { .. } => "invalid_progress_key",
            Self::LoadRejected(_) => "load_rejected",
            Self::Unsupported(_) => "unsupported",
            Self::Cancelled => "cancelled",
            Self::Host(_) => "host_error",
        }
    }
}

/// Maps a wasmtime trap to our kind.
pub(crate) fn trap_kind(trap: wasmtime::Trap) -> TrapKind {
    use wasmtime::Trap;
    match trap {
        Trap::StackOverflow => TrapKind::StackOverflow,
        Trap::UnreachableCodeReached => TrapKind::Unreachable,
        Trap::MemoryOutOfBounds => TrapKind::MemoryOutOfBounds,
        Trap::IntegerDivisionByZero => TrapKind::DivisionByZero,
        Trap::IntegerOverflow => TrapKind::IntegerOverflow,
        other => TrapKind::Other(other.to_string()),
    }
}

/// A guest broke the canonical ABI in what it handed to the host (found by
/// the host's own lowering and lifting, [`crate::abi`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the guest broke the canonical ABI: {kind}")]
pub(crate) struct AbiFault {
    /// What was wrong, and where.
    pub(crate) kind: TrapKind,
}

impl From<TrapKind> for AbiFault {
    fn from(kind: TrapKind) -> Self {
        Self { kind }
    }
}
