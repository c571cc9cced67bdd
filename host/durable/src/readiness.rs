//! Whether a worker can be invoked yet, as its `GET /readyz` tells: a
//! worker serves from the start, but Restate invokes it only once it is
//! registered with the admin API.

use std::sync::{Arc, Mutex};

/// A worker's readiness, shared between its server and whatever registers
/// it. Starts not ready ("not registered yet").
#[derive(Debug, Clone)]
pub struct Readiness(Arc<Mutex<State>>);

#[derive(Debug, Clone)]
struct State {
    ready: bool,
    detail: String,
}

impl Default for Readiness {
    fn default() -> Self {
        Self::new()
    }
}

impl Readiness {
    /// Not ready: not registered yet.
    pub fn new() -> Self {
        Self(Arc::new(Mutex::new(State {
            ready: false,
            detail: "not registered: registration not attempted yet".to_owned(),
        })))
    }

    fn set(&self, ready: bool, detail: String) {
        let mut state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *state = State { ready, detail };
    }

    /// Ready (`GET /readyz` answers 200 and `detail`).
    pub fn ready(&self, detail: impl Into<String>) {
        self.set(true, detail.into());
    }

    /// Not ready because it is not registered, for the reason `why`
    /// (`GET /readyz` answers 503 and `not registered: WHY`).
    pub fn not_registered(&self, why: impl std::fmt::Display) {
        self.set(false, format!("not registered: {why}"));
    }

    /// Whether it is ready, and the line `GET /readyz` answers.
    pub fn get(&self) -> (bool, String) {
        let state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        (state.ready, state.detail.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_says_why_until_it_is_ready() {
        let readiness = Readiness::new();
        let shared = readiness.clone();
        assert!(!readiness.get().0);
        shared.not_registered("cannot reach Restate at http://127.0.0.1:9070");
        assert_eq!(
            readiness.get(),
            (
                false,
                "not registered: cannot reach Restate at http://127.0.0.1:9070".to_owned()
            )
        );
        shared.ready("registered");
        assert_eq!(readiness.get(), (true, "registered".to_owned()));
    }
}
