//! The worker: the Restate endpoint (HTTP/2) serving the conversation
//! object for one blueprint.

use restate_sdk::prelude::{Endpoint, HttpServer};
use tokio::net::TcpListener;

use crate::blueprint::Blueprint;
use crate::object::ConversationObject;

/// The Restate endpoint serving `blueprint`'s conversations.
pub fn endpoint(blueprint: Blueprint) -> Endpoint {
    Endpoint::builder()
        .bind(ConversationObject::new(blueprint))
        .build()
}

/// A worker process's server.
pub struct Worker {
    endpoint: Endpoint,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker").finish_non_exhaustive()
    }
}

impl Worker {
    /// A worker for `blueprint`.
    pub fn new(blueprint: Blueprint) -> Self {
        Self {
            endpoint: endpoint(blueprint),
        }
    }

    /// Serves on `listener` until `shutdown` resolves (then drains).
    pub async fn serve(self, listener: TcpListener, shutdown: impl Future) {
        HttpServer::new(self.endpoint)
            .serve_with_cancel(listener, shutdown)
            .await;
    }
}
