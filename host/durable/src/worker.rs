//! The worker: the Restate endpoint (HTTP/2) serving the conversation
//! object for a worker's tenants.

use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use restate_sdk::hyper::HyperEndpoint;
use restate_sdk::prelude::Endpoint;
use tokio::net::TcpListener;

use crate::object::ConversationObject;
use crate::tenants::Tenants;

/// How long a stopping worker waits for its connections to close.
const DRAIN: Duration = Duration::from_secs(10);

/// The Restate endpoint serving the conversations of `tenants` (or of one
/// [`crate::Blueprint`]).
pub fn endpoint(tenants: impl Into<Tenants>) -> Endpoint {
    Endpoint::builder()
        .bind(ConversationObject::new(tenants))
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
    /// A worker for `tenants` (or one [`crate::Blueprint`]).
    pub fn new(tenants: impl Into<Tenants>) -> Self {
        Self {
            endpoint: endpoint(tenants),
        }
    }

    /// Serves on `listener` until `shutdown` resolves, then lets open
    /// connections finish (at most 10 s).
    ///
    /// The SDK's own server does the same, but leaves Nagle's algorithm on:
    /// every journal entry is a small frame the handler waits on, so here
    /// each connection is `TCP_NODELAY`.
    pub async fn serve(self, listener: TcpListener, shutdown: impl Future) {
        let endpoint = HyperEndpoint::new(self.endpoint);
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let (stream, remote) = match accepted {
                        Ok(accepted) => accepted,
                        Err(error) => {
                            // Out of descriptors, say: wait instead of spinning.
                            tracing::warn!("accept: {error}");
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    };
                    let _ = stream.set_nodelay(true);
                    let connection = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), endpoint.clone());
                    let connection = graceful.watch(connection);
                    tokio::spawn(async move {
                        if let Err(error) = connection.await {
                            tracing::debug!("connection from {remote}: {error}");
                        }
                    });
                }
                _ = &mut shutdown => break,
            }
        }
        let _ = tokio::time::timeout(DRAIN, graceful.shutdown()).await;
    }
}
