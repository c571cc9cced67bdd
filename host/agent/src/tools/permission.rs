//! Permissions: allow, deny, or ask a host callback, per tool with a default.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use verdict_providers::ToolCall;

/// Asks the host whether a call may run; `true` allows it.
pub type AskFn = Arc<dyn Fn(&ToolCall) -> BoxFuture<'static, bool> + Send + Sync>;

/// What to do with a call to a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PermissionRule {
    /// Run it.
    Allow,
    /// Refuse it: a permission failure, and the tool never runs.
    Deny,
    /// Ask the host callback (denied when there is none).
    Ask,
}

/// The permission policy of a tool manager. The default allows everything.
#[derive(Clone)]
pub struct PermissionPolicy {
    default: PermissionRule,
    per_tool: HashMap<String, PermissionRule>,
    ask: Option<AskFn>,
}

impl Default for PermissionPolicy {
    fn default() -> Self {
        Self {
            default: PermissionRule::Allow,
            per_tool: HashMap::new(),
            ask: None,
        }
    }
}

impl fmt::Debug for PermissionPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PermissionPolicy")
            .field("default", &self.default)
            .field("per_tool", &self.per_tool)
            .field("ask", &self.ask.is_some())
            .finish()
    }
}

impl PermissionPolicy {
    /// A policy applying `rule` to every tool without its own rule.
    pub fn with_default(rule: PermissionRule) -> Self {
        Self {
            default: rule,
            ..Self::default()
        }
    }

    /// Sets the rule for one tool.
    pub fn with_rule(mut self, tool: impl Into<String>, rule: PermissionRule) -> Self {
        self.per_tool.insert(tool.into(), rule);
        self
    }

    /// Sets the host callback used by [`PermissionRule::Ask`].
    pub fn with_ask(mut self, ask: AskFn) -> Self {
        self.ask = Some(ask);
        self
    }

    /// Whether `call` may run.
    pub(crate) async fn allows(&self, call: &ToolCall) -> bool {
        match self
            .per_tool
            .get(&call.name)
            .copied()
            .unwrap_or(self.default)
        {
            PermissionRule::Allow => true,
            PermissionRule::Deny => false,
            PermissionRule::Ask => match &self.ask {
                Some(ask) => ask(call).await,
                None => false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: json!({}),
            signature: None,
        }
    }

    #[tokio::test]
    async fn per_tool_rules_override_the_default_and_ask_without_callback_denies() {
        let policy = PermissionPolicy::with_default(PermissionRule::Deny)
            .with_rule("read", PermissionRule::Allow)
            .with_rule("pay", PermissionRule::Ask);
        assert!(policy.allows(&call("read")).await);
        assert!(!policy.allows(&call("other")).await);
        assert!(!policy.allows(&call("pay")).await);
        let asking = policy.with_ask(Arc::new(|c| {
            let yes = c.name == "pay";
            Box::pin(async move { yes })
        }));
        assert!(asking.allows(&call("pay")).await);
        assert!(PermissionPolicy::default().allows(&call("any")).await);
    }
}
