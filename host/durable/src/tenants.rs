//! The blueprints a worker serves, by tenant: each tenant's verifiers (and
//! so its checkers) are its own; a conversation stays with the tenant of
//! its first execution.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::blueprint::Blueprint;

/// A worker's blueprints: one without a tenant name, or one per tenant.
#[derive(Debug, Clone, Default)]
pub struct Tenants {
    unnamed: Option<Arc<Blueprint>>,
    named: BTreeMap<String, Arc<Blueprint>>,
}

impl From<Blueprint> for Tenants {
    fn from(blueprint: Blueprint) -> Self {
        Self {
            unnamed: Some(Arc::new(blueprint)),
            named: BTreeMap::new(),
        }
    }
}

impl Tenants {
    /// No blueprints yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds tenant `name` with `blueprint`.
    pub fn tenant(mut self, name: impl Into<String>, blueprint: Blueprint) -> Self {
        self.named.insert(name.into(), Arc::new(blueprint));
        self
    }

    /// The tenant names served.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.named.keys().map(String::as_str)
    }

    /// The blueprint for `wanted`: the named tenant, else the only one.
    pub(crate) fn pick(
        &self,
        wanted: Option<&str>,
    ) -> Result<(Option<String>, Arc<Blueprint>), String> {
        match wanted {
            Some(name) => self
                .named
                .get(name)
                .map(|b| (Some(name.to_owned()), Arc::clone(b)))
                .ok_or_else(|| format!("this worker serves no tenant named {name:?}")),
            None => match (&self.unnamed, self.named.len()) {
                (Some(blueprint), _) => Ok((None, Arc::clone(blueprint))),
                (None, 1) => Ok(self
                    .named
                    .iter()
                    .next()
                    .map(|(name, b)| (Some(name.clone()), Arc::clone(b)))
                    .ok_or_else(String::new)?),
                (None, 0) => Err("this worker serves no agent".to_owned()),
                (None, n) => Err(format!("this worker serves {n} tenants: name one")),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_providers::fake::{Script, ScriptedModel};

    fn blueprint() -> Blueprint {
        Blueprint::new(Arc::new(ScriptedModel::new(Script::default())), "m")
    }

    #[test]
    fn the_only_tenant_is_the_default_and_others_must_be_named() {
        let one = Tenants::new().tenant("acme", blueprint());
        assert_eq!(one.pick(None).unwrap().0.as_deref(), Some("acme"));
        assert!(one.pick(Some("other")).is_err());
        let two = one.tenant("globex", blueprint());
        assert!(two.pick(None).unwrap_err().contains("2 tenants"));
        assert_eq!(
            two.pick(Some("globex")).unwrap().0.as_deref(),
            Some("globex")
        );
        let unnamed = Tenants::from(blueprint());
        assert_eq!(unnamed.pick(None).unwrap().0, None);
        assert!(Tenants::new().pick(None).is_err());
    }
}
