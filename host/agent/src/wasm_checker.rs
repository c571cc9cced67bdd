//! A wasm verifier as the policy's completion and progress checker: the
//! sandbox's [`verdict_sandbox::WasmChecker`], re-exported here because the
//! loop runs it (on a blocking thread, under its checker deadline).

pub use verdict_sandbox::WasmChecker;
