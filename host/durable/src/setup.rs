//! An execution's setup: what it runs with (the worker's journal format,
//! the tenant, the model, the tools, the loop policy, the verifiers),
//! journaled as its first step. A replay under another setup — a tool
//! removed, a verifier replaced, the policy changed, another worker
//! version — is a mismatch named field by field, and the execution fails
//! instead of replaying a journal its loop no longer agrees with.

use serde::{Deserialize, Serialize};
use verdict_policy::Effect;

use crate::blueprint::Blueprint;
use crate::entry::{JOURNAL_FORMAT, fingerprint};

/// What an execution runs with, or why it could not start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Setup {
    Ready(Box<Descriptor>),
    /// The execution was refused (unknown tenant, an agent that cannot be
    /// built): its record says why.
    Refused(String),
}

/// A tool as a setup compares it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ToolDescriptor {
    pub name: String,
    pub effect: Effect,
    pub idempotent: bool,
    pub deadline_ms: u64,
    /// SHA-256 of its definition (description and parameter schema).
    pub definition_sha256: String,
}

/// The parts of an execution's agent a replay must agree on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Descriptor {
    pub journal_format: u32,
    pub worker_version: String,
    pub tenant: Option<String>,
    pub model: String,
    pub instructions_sha256: Option<String>,
    pub max_tokens: Option<u32>,
    pub max_iterations: Option<u32>,
    pub checker_timeout_ms: u64,
    pub tools: Vec<ToolDescriptor>,
    pub policy: Option<serde_json::Value>,
    /// The completion checker's identity (a wasm verifier's digest).
    pub completion: Option<String>,
    /// The progress checker's identity.
    pub progress: Option<String>,
}

impl Descriptor {
    /// The setup of an execution of `blueprint` for `tenant`.
    pub(crate) fn of(blueprint: &Blueprint, tenant: Option<&str>) -> Self {
        let parts = blueprint.parts();
        Self {
            journal_format: JOURNAL_FORMAT,
            worker_version: env!("CARGO_PKG_VERSION").to_owned(),
            tenant: tenant.map(str::to_owned),
            model: parts.model_name.to_owned(),
            instructions_sha256: parts.instructions.map(fingerprint),
            max_tokens: parts.max_tokens,
            max_iterations: parts.max_iterations,
            checker_timeout_ms: u64::try_from(parts.checker_timeout.as_millis())
                .unwrap_or(u64::MAX),
            tools: parts
                .tools
                .iter()
                .map(|tool| ToolDescriptor {
                    name: tool.name().to_owned(),
                    effect: tool.effect(),
                    idempotent: tool.is_idempotent(),
                    deadline_ms: u64::try_from(tool.deadline().as_millis()).unwrap_or(u64::MAX),
                    definition_sha256: fingerprint(&tool.definition()),
                })
                .collect(),
            policy: parts
                .policy
                .map(|p| serde_json::to_value(p).unwrap_or(serde_json::Value::Null)),
            completion: parts.checkers.completion.as_ref().map(|c| c.identity()),
            progress: parts.checkers.progress.as_ref().map(|c| c.identity()),
        }
    }
}

/// Notes `name` in `found` when `a` and `b` differ.
fn field(found: &mut Vec<String>, name: &str, a: String, b: String) {
    if a != b {
        found.push(format!("{name} was {a}, now {b}"));
    }
}

/// `Some(name)` of a checker slot, for messages.
fn shown(value: &Option<String>) -> String {
    match value {
        Some(identity) if identity.is_empty() => "a checker".to_owned(),
        Some(identity) => format!("{identity:?}"),
        None => "none".to_owned(),
    }
}

impl Setup {
    /// `Ok` when `now` is the setup this one journaled; otherwise every
    /// difference, in words.
    pub(crate) fn differences(&self, now: &Setup) -> Result<(), String> {
        let (was, is) = match (self, now) {
            (Self::Ready(was), Self::Ready(is)) => (was, is),
            (a, b) if a == b => return Ok(()),
            (Self::Refused(why), _) => {
                return Err(format!("the execution was refused when it started ({why})"));
            }
            (_, Self::Refused(why)) => return Err(format!("it is now refused: {why}")),
        };
        let mut found = Vec::new();
        field(
            &mut found,
            "the journal format",
            was.journal_format.to_string(),
            is.journal_format.to_string(),
        );
        field(
            &mut found,
            "the worker version",
            was.worker_version.clone(),
            is.worker_version.clone(),
        );
        field(
            &mut found,
            "the tenant",
            format!("{:?}", was.tenant),
            format!("{:?}", is.tenant),
        );
        field(
            &mut found,
            "the model",
            format!("{:?}", was.model),
            format!("{:?}", is.model),
        );
        if was.instructions_sha256 != is.instructions_sha256 {
            found.push("the instructions changed".to_owned());
        }
        field(
            &mut found,
            "max_tokens",
            format!("{:?}", was.max_tokens),
            format!("{:?}", is.max_tokens),
        );
        field(
            &mut found,
            "max_iterations",
            format!("{:?}", was.max_iterations),
            format!("{:?}", is.max_iterations),
        );
        field(
            &mut found,
            "the checker timeout",
            format!("{} ms", was.checker_timeout_ms),
            format!("{} ms", is.checker_timeout_ms),
        );
        for tool in &was.tools {
            match is.tools.iter().find(|t| t.name == tool.name) {
                None => found.push(format!("tool {} was removed", tool.name)),
                Some(now) if now != tool => found.push(format!("tool {} changed", tool.name)),
                Some(_) => {}
            }
        }
        for tool in &is.tools {
            if !was.tools.iter().any(|t| t.name == tool.name) {
                found.push(format!("tool {} was added", tool.name));
            }
        }
        if was.policy != is.policy {
            found.push(match (&was.policy, &is.policy) {
                (None, Some(_)) => "a loop policy was added".to_owned(),
                (Some(_), None) => "the loop policy was removed".to_owned(),
                _ => "the loop policy changed".to_owned(),
            });
        }
        field(
            &mut found,
            "the completion checker",
            shown(&was.completion),
            shown(&is.completion),
        );
        field(
            &mut found,
            "the progress checker",
            shown(&was.progress),
            shown(&is.progress),
        );
        if found.is_empty() {
            Ok(())
        } else {
            Err(format!("the setup changed: {}", found.join("; ")))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn descriptor() -> Descriptor {
        Descriptor {
            journal_format: JOURNAL_FORMAT,
            worker_version: "1".into(),
            tenant: Some("acme".into()),
            model: "m".into(),
            instructions_sha256: None,
            max_tokens: None,
            max_iterations: Some(8),
            checker_timeout_ms: 10_000,
            tools: vec![ToolDescriptor {
                name: "read_artifact".into(),
                effect: Effect::Read,
                idempotent: false,
                deadline_ms: 1000,
                definition_sha256: "d".into(),
            }],
            policy: Some(serde_json::json!({"maxRecoveryAttempts": 2})),
            completion: Some("sha256:a".into()),
            progress: None,
        }
    }

    #[test]
    fn the_same_setup_agrees_and_each_change_is_named() {
        let was = Setup::Ready(Box::new(descriptor()));
        assert!(was.differences(&was.clone()).is_ok());
        let mut now = descriptor();
        now.tools.clear();
        now.progress = Some("sha256:p".into());
        now.completion = Some("sha256:b".into());
        let why = was.differences(&Setup::Ready(Box::new(now))).unwrap_err();
        assert!(why.contains("tool read_artifact was removed"), "{why}");
        assert!(
            why.contains("the progress checker was none, now \"sha256:p\""),
            "{why}"
        );
        assert!(why.contains("\"sha256:a\", now \"sha256:b\""), "{why}");
        let refused = Setup::Refused("no tenant".into());
        assert!(was.differences(&refused).unwrap_err().contains("no tenant"));
    }
}
