#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

// The loop.
pub use verdict_agent::{
    Agent, AgentBuilder, AgentError, AgentEvent, AgentResponse, AgentStream, BuildError,
    CallBudget, Checkers, CompletionFn, ConnectorRegistry, DEFAULT_CHECKER_TIMEOUT,
    DEFAULT_MAX_ITERATIONS, HelperError, HelperModel, HostContext, PolicyChoice, Route,
    RouteRequest, Router, RunError, RunOptions, RunOutcome, RunStatus, SettledRun, StaticHost,
    TaskStateStore,
};
// Tools, hooks and permissions.
pub use verdict_agent::{
    AfterToolHook, BeforeTool, BeforeToolHook, Hooks, PermissionPolicy, PermissionRule, Tool,
    ToolContext, ToolDefinitionError, ToolError, ToolOutcome, ToolReturn,
};
// The loop policy, checkers and what they see and answer.
pub use verdict_policy::{
    CancelHandle, CheckContext, CheckFuture, CheckPacket, CheckerError, CompletionChecker, Effect,
    LoopDiagnostics, LoopPolicy, PacketError, PolicyError, PolicyLoadError, ProgressChecker,
    StopReason, Verdict, WorkflowStatus,
};
// Models.
pub use verdict_providers::{
    Message, Model, ModelRequest, ModelResponse, ProviderError, ToolCall, ToolDefinition, Usage,
};

/// The HTTP connectors: OpenAI (Chat, Responses), Anthropic and Gemini.
#[cfg(feature = "http")]
pub use verdict_providers::{
    ApiKey, Connector, ConnectorConfig, Credential, Protocol, RetryPolicy, Timeouts,
};

/// Verifiers: wasm components run in a per-tenant sandbox.
#[cfg(feature = "wasm")]
pub use verdict_sandbox::{
    ArtifactStore, CheckError, ChildCompiler, CompileIn, DirStore, HostConfig, Inspection, Limits,
    LoadError, LoadLimits, LoadedVerifier, MemoryStore, Tenant, VerifierHost, WasmChecker,
    compile_child_main,
};

/// The local fake provider: every wire protocol served on loopback from a
/// script, for tests and demos.
#[cfg(feature = "fake")]
pub mod fake {
    pub use verdict_providers::fake::{
        Action, Conversation, FAKE_API_KEY, FakeProvider, FakeServerError, Fault, Matcher,
        RecordedRequest, Reply, Script, ScriptedCall, ScriptedModel, ScriptedTurn,
    };
}

/// Everything of the member crates, for what the curated surface above
/// leaves out.
pub mod crates {
    pub use verdict_agent as agent;
    pub use verdict_policy as policy;
    pub use verdict_providers as providers;
    #[cfg(feature = "wasm")]
    pub use verdict_sandbox as sandbox;
}

// The repository README's Rust examples are compiled with this crate's tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct RepositoryReadme;
