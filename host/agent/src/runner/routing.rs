//! Optional model routing: a router chooses connector and model once,
//! before a managed execution; everything inside the execution (recovery,
//! empty-answer retries, tool iterations) and its continuations keep that
//! binding and the run's budget.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use verdict_providers::Model;

use super::registry::ConnectorRegistry;

/// What a router sees.
#[derive(Debug, Clone, Copy)]
pub struct RouteRequest<'a> {
    /// The run's user input.
    pub input: &'a str,
    /// The agent's own model id (used when routing fails).
    pub default_model: &'a str,
}

/// A router's choice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    /// A connector name in the router's registry.
    pub connector: String,
    /// The provider's model id sent with every request.
    pub model_name: String,
}

/// Chooses connector and model for a new execution.
pub trait Router: Send + Sync {
    /// The route, or why there is none (the agent's own model is used).
    fn route(&self, request: &RouteRequest<'_>) -> Result<Route, String>;
}

/// A router from a closure.
pub struct RouterFn<F>(pub F);

impl<F> Router for RouterFn<F>
where
    F: Fn(&RouteRequest<'_>) -> Result<Route, String> + Send + Sync,
{
    fn route(&self, request: &RouteRequest<'_>) -> Result<Route, String> {
        (self.0)(request)
    }
}

/// How an execution was routed. Kept apart from the loop diagnostics:
/// routing never decides completion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteDiagnostics {
    /// The route in force; `None` when the agent's own model is used.
    pub route: Option<Route>,
    /// Why routing fell back to the agent's own model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// True when the execution is a continuation keeping an earlier route
    /// (the router was not asked again).
    #[serde(default)]
    pub continued: bool,
}

/// The router of an agent and the registry its routes name.
#[derive(Clone)]
pub(crate) struct Routing {
    pub registry: ConnectorRegistry,
    pub router: Arc<dyn Router>,
}

/// The model an execution is bound to.
#[derive(Clone)]
pub(crate) struct Binding {
    pub model: Arc<dyn Model>,
    pub model_name: String,
    pub diagnostics: RouteDiagnostics,
}

impl Routing {
    /// Asks the router once; falls back to `default` on an error or an
    /// unknown connector.
    pub(crate) fn bind(&self, input: &str, default: Binding) -> Binding {
        let request = RouteRequest {
            input,
            default_model: &default.model_name,
        };
        let fallback = |error: String| Binding {
            diagnostics: RouteDiagnostics {
                route: None,
                error: Some(error),
                continued: false,
            },
            ..default.clone()
        };
        match self.router.route(&request) {
            Err(error) => fallback(error),
            Ok(route) => match self.registry.get(&route.connector) {
                None => fallback(format!("no connector named {:?}", route.connector)),
                Some(model) => Binding {
                    model,
                    model_name: route.model_name.clone(),
                    diagnostics: RouteDiagnostics {
                        route: Some(route),
                        error: None,
                        continued: false,
                    },
                },
            },
        }
    }
}
