//! What a check captures for the stale-view guard.
//!
//! A verdict describes the state under the authority it was checked with.
//! If the [`HostScope`] changed before the verdict arrived, the check must
//! start again under the new scope; if the [`ExecutionIdentity`] changed,
//! the execution stops with `state_changed`.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// The host authority a check runs under. Sets compare regardless of order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostScope {
    /// The user or account.
    pub account: String,
    /// Selected connector accounts and identities.
    pub connector_identities: BTreeSet<String>,
    /// Roles granted.
    pub roles: BTreeSet<String>,
    /// The session.
    pub session: String,
    /// The connector-registry scope.
    pub registry_scope: String,
}

/// The task, checker, owner and conversation a check belongs to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExecutionIdentity {
    /// The task generation (bumped by a same-revision restore, too).
    pub task_generation: u64,
    /// The identity of the checker answering (for a wasm verifier: the
    /// component digest); the spec's "plugin".
    pub checker: String,
    /// The owner of the execution.
    pub owner: String,
    /// The conversation / input identity.
    pub conversation: String,
}

/// The view the loop reports when a check starts and when its answer
/// arrives.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckView {
    /// The host scope.
    pub scope: HostScope,
    /// The execution identity.
    pub identity: ExecutionIdentity,
}
