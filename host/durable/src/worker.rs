//! The worker: the Restate endpoint serving the conversation object for a
//! worker's tenants, behind Restate's request identity, with `GET
//! /readyz` beside it.
//!
//! One port speaks HTTP/2 without TLS (what Restate uses for an `http://`
//! deployment) and HTTP/1.1 (for probes and curl), or both over TLS
//! (ALPN `h2` and `http/1.1`) when the worker has a certificate.

use std::convert::Infallible;
use std::future::Ready;
use std::net::SocketAddr;
use std::time::Duration;

use http_body_util::{Either, Full};
use hyper::body::{Bytes, Incoming};
use hyper::service::Service;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use restate_sdk::endpoint::ResponseBody;
use restate_sdk::hyper::HyperEndpoint;
use restate_sdk::prelude::Endpoint;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::error::DurableError;
use crate::identity::RequestIdentity;
use crate::object::ConversationObject;
use crate::readiness::Readiness;
use crate::tenants::Tenants;

/// How long a stopping worker waits for its connections to close.
const DRAIN: Duration = Duration::from_secs(10);
/// How long a TLS handshake may take.
const HANDSHAKE: Duration = Duration::from_secs(10);
/// The readiness probe's path.
pub const READYZ: &str = "/readyz";

/// The Restate endpoint serving the conversations of `tenants` (or of one
/// [`crate::Blueprint`]) to requests signed by one of `identity`'s keys
/// (or, when it has none, to any request: check
/// [`RequestIdentity::check`] against the address first).
pub fn endpoint(
    tenants: impl Into<Tenants>,
    identity: &RequestIdentity,
) -> Result<Endpoint, DurableError> {
    let mut builder = Endpoint::builder().bind(ConversationObject::new(tenants));
    for key in identity.keys() {
        builder = builder
            .identity_key(key)
            .map_err(|e| DurableError::IdentityKey {
                key: key.clone(),
                detail: e.to_string(),
            })?;
    }
    Ok(builder.build())
}

/// A worker process's server.
pub struct Worker {
    tenants: Tenants,
    identity: RequestIdentity,
    tls: Option<TlsAcceptor>,
    readiness: Readiness,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("identity", &self.identity)
            .field("tls", &self.tls.is_some())
            .finish_non_exhaustive()
    }
}

impl Worker {
    /// A worker for `tenants` (or one [`crate::Blueprint`]). It serves
    /// nothing until given a request identity ([`Worker::identity`]).
    pub fn new(tenants: impl Into<Tenants>) -> Self {
        Self {
            tenants: tenants.into(),
            identity: RequestIdentity::new(),
            tls: None,
            readiness: Readiness::new(),
        }
    }

    /// Which requests it serves: those signed by one of the keys, or
    /// unsigned ones on loopback ([`RequestIdentity`]).
    pub fn identity(mut self, identity: RequestIdentity) -> Self {
        self.identity = identity;
        self
    }

    /// Serves TLS with the PEM certificate chain `cert` and private key
    /// `key` (register it with an `https://` URL; Restate must trust the
    /// chain's root).
    pub fn tls(
        mut self,
        cert: &std::path::Path,
        key: &std::path::Path,
    ) -> Result<Self, DurableError> {
        self.tls = Some(crate::tls::acceptor(cert, key)?);
        Ok(self)
    }

    /// Whether it serves TLS (register it with an `https://` URL).
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// The readiness `GET /readyz` reports: not ready until whatever
    /// registers the worker says so ([`crate::register_until_done`]).
    pub fn readiness(&self) -> Readiness {
        self.readiness.clone()
    }

    /// Serves on `listener` until `shutdown` resolves, then lets open
    /// connections finish (at most 10 s). Refuses to start when the
    /// request identity does not allow serving on the listener's address
    /// ([`RequestIdentity::check`]).
    ///
    /// The SDK's own server does the same, but leaves Nagle's algorithm on:
    /// every journal entry is a small frame the handler waits on, so here
    /// each connection is `TCP_NODELAY`.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future,
    ) -> Result<(), DurableError> {
        let addr = listener
            .local_addr()
            .map_err(|source| DurableError::Listen {
                addr: "the listener".to_owned(),
                source,
            })?;
        self.identity.check(addr)?;
        let routes = Routes {
            endpoint: HyperEndpoint::new(endpoint(self.tenants, &self.identity)?),
            readiness: self.readiness,
        };
        let graceful = GracefulShutdown::new();
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
                    let (routes, watcher, tls) = (routes.clone(), graceful.watcher(), self.tls.clone());
                    tokio::spawn(async move {
                        match tls {
                            None => connection(stream, remote, routes, watcher).await,
                            Some(acceptor) => {
                                match tokio::time::timeout(HANDSHAKE, acceptor.accept(stream)).await {
                                    Ok(Ok(stream)) => connection(stream, remote, routes, watcher).await,
                                    Ok(Err(error)) => tracing::debug!("TLS from {remote}: {error}"),
                                    Err(_) => tracing::debug!("TLS from {remote}: handshake timed out"),
                                }
                            }
                        }
                    });
                }
                _ = &mut shutdown => break,
            }
        }
        let _ = tokio::time::timeout(DRAIN, graceful.shutdown()).await;
        Ok(())
    }
}

/// Serves one connection, HTTP/2 or HTTP/1.1 as the client speaks.
async fn connection<I>(io: I, remote: SocketAddr, routes: Routes, watcher: Watcher)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    let connection = builder.serve_connection(TokioIo::new(io), routes);
    if let Err(error) = watcher.watch(connection).await {
        tracing::debug!("connection from {remote}: {error}");
    }
}

/// `GET /readyz`, else the Restate endpoint.
#[derive(Clone)]
struct Routes {
    endpoint: HyperEndpoint,
    readiness: Readiness,
}

type Body = Either<ResponseBody, Full<Bytes>>;

impl Service<Request<Incoming>> for Routes {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Ready<Result<Self::Response, Infallible>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        if request.uri().path() == READYZ && matches!(*request.method(), Method::GET | Method::HEAD)
        {
            let (ready, detail) = self.readiness.get();
            let status = if ready {
                StatusCode::OK
            } else {
                StatusCode::SERVICE_UNAVAILABLE
            };
            let mut response = Response::new(Either::Right(Full::new(Bytes::from(detail + "\n"))));
            *response.status_mut() = status;
            response.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            return std::future::ready(Ok(response));
        }
        let answer = self.endpoint.call(request).into_inner();
        std::future::ready(answer.map(|response| response.map(Either::Left)))
    }
}
