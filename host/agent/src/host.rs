//! The host context a check captures for the stale-view guard.

use verdict_policy::HostScope;

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
}

/// A fixed scope and generation.
#[derive(Debug, Clone, Default)]
pub struct StaticHost(pub HostScope);

impl HostContext for StaticHost {
    fn scope(&self) -> HostScope {
        self.0.clone()
    }
}
