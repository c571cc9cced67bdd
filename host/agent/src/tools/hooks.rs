//! Before-tool and after-tool hooks.
//!
//! Before-tool hooks run in registration order before admission: one may
//! skip the call with a message (it never starts) or replace its arguments
//! (later hooks, the policy's fingerprint and the tool all see the new
//! arguments). After-tool hooks see every settled call, in call order.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use verdict_providers::ToolCall;

use super::outcome::SettledCall;

/// A before-tool hook's answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum BeforeTool {
    /// Leave the call as it is.
    Proceed,
    /// Do not start the call; send `message` as its result.
    Skip {
        /// The result text for the model.
        message: String,
    },
    /// Run the call with these arguments instead.
    Modify {
        /// The replacement arguments.
        arguments: Value,
    },
}

/// A before-tool hook.
pub type BeforeToolHook = Arc<dyn Fn(&ToolCall) -> BeforeTool + Send + Sync>;
/// An after-tool hook.
pub type AfterToolHook = Arc<dyn Fn(&SettledCall) + Send + Sync>;

/// The hooks of a tool manager.
#[derive(Clone, Default)]
pub struct Hooks {
    pub(crate) before: Vec<BeforeToolHook>,
    pub(crate) after: Vec<AfterToolHook>,
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks")
            .field("before", &self.before.len())
            .field("after", &self.after.len())
            .finish()
    }
}

impl Hooks {
    /// Adds a before-tool hook.
    pub fn before_tool(mut self, hook: BeforeToolHook) -> Self {
        self.before.push(hook);
        self
    }

    /// Adds an after-tool hook.
    pub fn after_tool(mut self, hook: AfterToolHook) -> Self {
        self.after.push(hook);
        self
    }

    /// Runs the before-tool hooks: `Err(message)` when one skips the call.
    pub(crate) fn run_before(&self, call: &mut ToolCall) -> Result<(), String> {
        for hook in &self.before {
            match hook(call) {
                BeforeTool::Proceed => {}
                BeforeTool::Skip { message } => return Err(message),
                BeforeTool::Modify { arguments } => call.arguments = arguments,
            }
        }
        Ok(())
    }

    /// Runs the after-tool hooks.
    pub(crate) fn run_after(&self, settled: &SettledCall) {
        for hook in &self.after {
            hook(settled);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call() -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: "t".into(),
            arguments: json!({"n": 1}),
            signature: None,
        }
    }

    #[test]
    fn modifications_chain_and_a_skip_stops_later_hooks() {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        let hooks = Hooks::default()
            .before_tool(Arc::new(|c| BeforeTool::Modify {
                arguments: json!({"n": c.arguments["n"].as_i64().unwrap_or(0) + 1}),
            }))
            .before_tool(Arc::new(move |c| {
                log.lock().unwrap().push(c.arguments.clone());
                BeforeTool::Proceed
            }));
        let mut modified = call();
        assert_eq!(hooks.run_before(&mut modified), Ok(()));
        assert_eq!(modified.arguments, json!({"n": 2}));
        assert_eq!(*seen.lock().unwrap(), [json!({"n": 2})]);

        let skipping = Hooks::default()
            .before_tool(Arc::new(|_| BeforeTool::Skip {
                message: "no".into(),
            }))
            .before_tool(Arc::new(|_| {
                panic!("a later hook must not run after a skip")
            }));
        assert_eq!(skipping.run_before(&mut call()), Err("no".to_owned()));
    }
}
