//! Named connectors: the agent picks its model by connector name.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

#[cfg(feature = "http")]
use verdict_providers::Connector;
use verdict_providers::Model;

/// Models by connector name.
#[derive(Clone, Default)]
pub struct ConnectorRegistry {
    models: HashMap<String, Arc<dyn Model>>,
}

impl fmt::Debug for ConnectorRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&String> = self.models.keys().collect();
        names.sort();
        f.debug_struct("ConnectorRegistry")
            .field("names", &names)
            .finish()
    }
}

impl ConnectorRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers an HTTP connector under its own name (feature `http`).
    #[cfg(feature = "http")]
    pub fn register_connector(&mut self, connector: Connector) {
        let name = connector.name().to_owned();
        self.models.insert(name, Arc::new(connector));
    }

    /// Registers any model (a scripted one, a wrapper) under `name`.
    pub fn register(&mut self, name: impl Into<String>, model: Arc<dyn Model>) {
        self.models.insert(name.into(), model);
    }

    /// The model registered under `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Model>> {
        self.models.get(name).cloned()
    }
}
