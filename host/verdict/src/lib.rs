#![cfg_attr(not(doctest), doc = include_str!("../README.md"))]
#![deny(missing_docs)]

// The loop: the agent, its runs and what they return.
pub use verdict_agent::{
    Agent, AgentBuilder, AgentError, AgentEvent, AgentResponse, AgentStream, BuildError,
    CallBudget, ConnectorRegistry, DEFAULT_CHECKER_TIMEOUT, DEFAULT_MAX_ITERATIONS, DirectStream,
    PolicyChoice, RunError, RunOptions, RunOutcome, RunStatus, SettledRun, SuspendedRun,
};
// Routing, the host's scope and the task state.
pub use verdict_agent::{
    DEFAULT_TASK_STATE_BYTES, HostContext, Route, RouteDiagnostics, RouteRequest, Router, RouterFn,
    StaticHost, TaskStateError, TaskStateStore,
};
// Checkers as closures, and the helper model a native checker may consult.
pub use verdict_agent::{Checkers, CompletionFn, HelperError, HelperModel, ProgressFn};
// Tools (sync and async), hooks and permissions.
pub use verdict_agent::{
    AfterToolHook, AskFn, AsyncDelivery, AsyncSettler, BeforeTool, BeforeToolHook,
    DEFAULT_DEADLINE, ExecutionReceipt, Hooks, PendingResult, PermissionPolicy, PermissionRule,
    SettledCall, Suspension, Tool, ToolContext, ToolDefinitionError, ToolError, ToolOutcome,
    ToolReturn, ToolRun,
};
// Cancellation: one handle for runs, tools and checkers.
pub use verdict_policy::{CancelHandle, Cancelled};
// The loop policy and its diagnostics.
pub use verdict_policy::{
    Counters, LoopDiagnostics, LoopPolicy, Phase, PolicyError, PolicyLoadError, PolicyViolation,
    RecoveryTrigger, StopReason, TrackingBound, WorkflowStatus,
};
// Checkers: what they see (the spec's packet) and what they answer.
pub use verdict_policy::{
    CheckContext, CheckFuture, CheckPacket, CheckerError, CheckerErrorKind, CompletionChecker,
    Effect, FailureKind, HostScope, MAX_FEEDBACK_CHARS, MAX_OBSERVATIONS, MAX_OUTPUT_CHARS,
    MAX_PACKET_BYTES, MAX_PROGRESS_KEY_CHARS, MAX_REASON_CHARS, MAX_VERDICT_BYTES, Observation,
    ObservedOutcome, OutcomeStatus, PacketError, PacketParts, ProgressChecker, TaskStateSnapshot,
    Verdict, VerdictError, VerdictParts,
};
// Models: the trait a connector or a scripted model implements, and its data.
pub use verdict_providers::{
    Attempt, AttemptHook, AttemptRefusal, CallContext, EventStream, FinishReason, Message, Model,
    ModelRequest, ModelResponse, OutputSchema, ProviderError, StreamEvent, TimeoutPhase, ToolCall,
    ToolChoice, ToolDefinition, ToolResult, Usage,
};

/// The HTTP connectors: OpenAI (Chat, Responses), Anthropic and Gemini.
#[cfg(feature = "http")]
pub use verdict_providers::{
    ApiKey, Connector, ConnectorConfig, Credential, Protocol, RetryPolicy, Timeouts,
};

/// Verifiers: wasm components run in a per-tenant sandbox.
#[cfg(feature = "wasm")]
pub use verdict_sandbox::{
    ArtifactData, ArtifactError, ArtifactStore, CallMetrics, CallReport, CallStages, CheckError,
    CheckerTotals, ChildCompiler, CompileIn, CompilerChoice, DEFAULT_READY_INSTANCES, DirStore,
    Footprint, HostConfig, Inspection, Limits, LimitsError, LoadError, LoadLimits, LoadSource,
    LoadedVerifier, MAX_READY_INSTANCES, MemoryStore, Role, Tenant, TrapKind, VerifierHost,
    WasmChecker, WasmKind, compile_child_main,
};
/// Recorded and replayed calls: what a guest saw from outside, and a call
/// given it again.
#[cfg(feature = "wasm")]
pub use verdict_sandbox::{ArtifactOp, CallTrace, ClockRun, Tape, TapedReport};

/// Check records: what a verifier saw and answered, a content-addressed
/// store, a hash-chained audit log, and replay.
#[cfg(feature = "records")]
pub mod records {
    pub use verdict_records::*;
}

/// Verifier components from OCI registries: `oci://` references, push,
/// fetch through a local cache, credentials and bounds.
#[cfg(feature = "registry")]
pub mod registry {
    pub use verdict_registry::*;
}
/// Durable executions on Restate: a crash of the worker loses nothing,
/// and a write never runs twice.
#[cfg(feature = "durable")]
pub mod durable {
    pub use verdict_durable::*;
}
/// MCP servers' tools as loop tools: [`mcp::McpToolset`] starts the
/// configured servers and makes each listed tool a [`Tool`] whose effect
/// its annotations decide (the table in [`mcp::effect`]).
#[cfg(feature = "mcp")]
pub mod mcp {
    pub use verdict_mcp::*;
}

/// Verifiers served by `verdict serve`: a completion and progress checker
/// over its HTTP API.
#[cfg(feature = "remote")]
pub use verdict_server::client::{RemoteChecker, RemoteError};

/// The loop policy engine on its own, for a host that drives its own loop:
/// the decisions [`Agent`] asks for at every decision point.
pub mod engine {
    pub use verdict_policy::{
        Admission, BatchDecision, CheckDecision, CheckKind, CheckRequest, CheckTicket, CheckView,
        CheckerIdentities, Decision, Delivery, ExecutionIdentity, FEEDBACK_LABEL, FinalDecision,
        Fingerprint, PolicyExecution, ToolCallRequest, TurnDecision, canonical_json,
    };
}

/// The local fake provider: every wire protocol served on loopback from a
/// script, for tests and demos.
#[cfg(feature = "fake")]
pub mod fake {
    pub use verdict_providers::fake::{
        Action, Conversation, FAKE_API_KEY, FakeProvider, FakeServerError, Fault, Matcher,
        RecordedRequest, Reply, Script, ScriptedCall, ScriptedModel, ScriptedTurn,
    };
}

/// The member crates whole. Not part of the supported surface: everything
/// an embedder needs is exported above.
#[doc(hidden)]
pub mod crates {
    pub use verdict_agent as agent;
    pub use verdict_policy as policy;
    pub use verdict_providers as providers;
    #[cfg(feature = "wasm")]
    pub use verdict_sandbox as sandbox;
    #[cfg(feature = "remote")]
    pub use verdict_server as server;
}
