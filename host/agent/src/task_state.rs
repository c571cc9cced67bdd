//! The built-in task-state store: a bounded JSON document with a scope, a
//! revision and a generation, whose snapshot goes into every check packet.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use verdict_policy::{HostScope, TaskStateSnapshot};

use crate::host::HostContext;

/// The default bound of the serialized document (64 KiB).
pub const DEFAULT_TASK_STATE_BYTES: usize = 64 * 1024;

/// Why the store refused a change (it is left as it was).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStateError {
    /// The serialized document is over the store's bound.
    #[error("the task state is {size} bytes, over the bound of {max} bytes")]
    TooLarge {
        /// Its serialized size.
        size: usize,
        /// The bound.
        max: usize,
    },
    /// A restored snapshot belongs to another scope.
    #[error("the snapshot belongs to scope {found:?}, not {expected:?}")]
    WrongScope {
        /// The store's scope.
        expected: String,
        /// The snapshot's.
        found: String,
    },
}

#[derive(Debug)]
struct Stored {
    revision: u64,
    generation: u64,
    document: Value,
}

/// A bounded task-state store. Clones share the state, so a tool, the host
/// and the agent can hold the same store. Checkers see a snapshot (data for
/// checking, not permission to change it).
#[derive(Debug, Clone)]
pub struct TaskStateStore {
    scope: String,
    max_bytes: usize,
    stored: Arc<Mutex<Stored>>,
}

impl TaskStateStore {
    /// An empty (`null`) store for `scope`, revision 0, generation 0,
    /// bounded to [`DEFAULT_TASK_STATE_BYTES`].
    pub fn new(scope: impl Into<String>) -> Self {
        Self {
            scope: scope.into(),
            max_bytes: DEFAULT_TASK_STATE_BYTES,
            stored: Arc::new(Mutex::new(Stored {
                revision: 0,
                generation: 0,
                document: Value::Null,
            })),
        }
    }

    /// Sets the bound of the serialized document.
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// Replaces the document; the revision goes up by one. Returns the new
    /// revision.
    pub fn update(&self, document: Value) -> Result<u64, TaskStateError> {
        self.check_size(&document)?;
        let mut stored = self.lock();
        stored.revision = stored.revision.saturating_add(1);
        stored.document = document;
        Ok(stored.revision)
    }

    /// Restores a snapshot of this scope: its revision and document come
    /// back and the generation goes up, so a check in flight (even at the
    /// same revision) ends with `state_changed`.
    pub fn restore(&self, snapshot: &TaskStateSnapshot) -> Result<(), TaskStateError> {
        if snapshot.host_scope != self.scope {
            return Err(TaskStateError::WrongScope {
                expected: self.scope.clone(),
                found: snapshot.host_scope.clone(),
            });
        }
        self.check_size(&snapshot.payload)?;
        let mut stored = self.lock();
        stored.revision = snapshot.revision;
        stored.generation = stored.generation.saturating_add(1);
        stored.document = snapshot.payload.clone();
        Ok(())
    }

    /// The current state.
    pub fn snapshot(&self) -> TaskStateSnapshot {
        let stored = self.lock();
        TaskStateSnapshot {
            host_scope: self.scope.clone(),
            revision: stored.revision,
            generation: stored.generation,
            payload: stored.document.clone(),
        }
    }

    /// The generation (bumped by every restore).
    pub fn generation(&self) -> u64 {
        self.lock().generation
    }

    fn check_size(&self, document: &Value) -> Result<(), TaskStateError> {
        let size = serde_json::to_vec(document).map_or(usize::MAX, |b| b.len());
        if size > self.max_bytes {
            return Err(TaskStateError::TooLarge {
                size,
                max: self.max_bytes,
            });
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Stored> {
        self.stored.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A host context whose task state and generation come from a store.
pub(crate) struct WithTaskState {
    pub host: Arc<dyn HostContext>,
    pub store: TaskStateStore,
}

impl HostContext for WithTaskState {
    fn scope(&self) -> HostScope {
        self.host.scope()
    }

    fn task_generation(&self) -> u64 {
        self.host
            .task_generation()
            .wrapping_add(self.store.generation())
    }

    fn task_state(&self) -> Option<TaskStateSnapshot> {
        Some(self.store.snapshot())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn updates_are_bounded_and_revisioned() {
        let store = TaskStateStore::new("task-1").with_max_bytes(16);
        assert_eq!(store.update(json!({"a": 1})), Ok(1));
        let refused = store.update(json!({"a": "x".repeat(32)}));
        assert!(matches!(
            refused,
            Err(TaskStateError::TooLarge { max: 16, .. })
        ));
        let snap = store.snapshot();
        assert_eq!((snap.revision, snap.generation), (1, 0));
        assert_eq!(snap.payload, json!({"a": 1}));
    }

    #[test]
    fn same_revision_restore_bumps_the_generation() {
        let store = TaskStateStore::new("task-1");
        store.update(json!({"step": 1})).unwrap_or_default();
        let saved = store.snapshot();
        store.restore(&saved).unwrap_or(());
        let now = store.snapshot();
        assert_eq!((now.revision, now.generation), (1, 1));
        let mut foreign = saved;
        foreign.host_scope = "other".into();
        assert!(matches!(
            store.restore(&foreign),
            Err(TaskStateError::WrongScope { .. })
        ));
    }
}
