//! The host context a check captures for the stale-view guard.

use verdict_policy::{HostScope, TaskStateSnapshot};

/// Tells the loop the host's current authority and task generation. A check
/// captures both when it starts; if the scope differs when the verdict
/// arrives the check restarts, and if the generation differs the execution
/// stops with `state_changed`.
pub trait HostContext: Send + Sync {
    /// The host scope now (user/account, connector identities, roles,
    /// session, registry scope).
    fn scope(&self) -> HostScope;
    /// The task generation now (bump it on a same-revision restore, too).
    fn task_generation(&self) -> u64 {
        0
    }
    /// The bounded task-state snapshot checkers receive in their packet,
    /// when the host keeps one (data for checking, not permission to
    /// change it).
    fn task_state(&self) -> Option<TaskStateSnapshot> {
        None
    }
}

/// A fixed scope and generation.
#[derive(Debug, Clone, Default)]
pub struct StaticHost(pub HostScope);

impl HostContext for StaticHost {
    fn scope(&self) -> HostScope {
        self.0.clone()
    }
}
