//! The server's life: bind, accept (bounded connections, header-read
//! timeout, optional TLS), and drain on shutdown (reloads: [`crate::reload`]).

use crate::catalog::Catalog;
use crate::error::ServeError;
use crate::metrics::Metrics;
use crate::settings::{Reloader, Settings};
use crate::state::AppState;
use crate::threads::RuntimeThreads;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use verdict_sandbox::VerifierHost;

/// A bound server, ready to run.
pub struct Server {
    listener: TcpListener,
    state: Arc<AppState>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    stop: watch::Sender<Option<Duration>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("addr", &self.listener.local_addr().ok())
            .finish_non_exhaustive()
    }
}

/// Controls a running server from elsewhere (signal handlers, tests).
#[derive(Clone)]
pub struct ServerHandle {
    state: Arc<AppState>,
    stop: watch::Sender<Option<Duration>>,
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle").finish_non_exhaustive()
    }
}

impl ServerHandle {
    /// Drains and stops (what `SIGTERM` does): `/readyz` answers 503 at
    /// once, new connections are accepted for `[server] drain_grace` (and
    /// answered 503), then the backlog is answered and the listener closes.
    pub fn shutdown(&self) {
        self.shutdown_after(self.state.server.drain_grace);
    }

    /// [`Self::shutdown`] with this grace period (`SIGINT`: none).
    pub fn shutdown_after(&self, grace: Duration) {
        self.state.draining.store(true, Ordering::Relaxed);
        self.stop.send_if_modified(|stop| {
            let first = stop.is_none();
            if first {
                *stop = Some(grace);
            }
            first
        });
    }

    /// Re-reads the configuration (what `SIGHUP` does): the number of
    /// tenants served, or why the running configuration stays.
    pub async fn reload(&self) -> Result<usize, String> {
        crate::reload::reload(&self.state).await
    }
}

impl Server {
    /// Loads every tenant's verifiers and binds the listener (call inside
    /// a tokio runtime).
    pub async fn bind(
        settings: Settings,
        host: VerifierHost,
        reloader: Option<Reloader>,
        log_json: bool,
    ) -> Result<Self, ServeError> {
        if settings.server.max_concurrent_checks == 0 || settings.server.max_connections == 0 {
            return Err(ServeError::Settings(
                "[server] max_concurrent_checks and max_connections must be positive".into(),
            ));
        }
        // Compiles may take seconds: off the async workers.
        let (build_host, build_settings) = (host.clone(), settings.clone());
        let (catalog, metrics) = tokio::task::spawn_blocking(move || {
            let metrics = Metrics::new();
            Catalog::build(&build_host, &build_settings, None, &metrics).map(|c| (c, metrics))
        })
        .await
        .map_err(|e| ServeError::Settings(format!("the loading task failed: {e}")))??;
        let tls = settings
            .server
            .tls
            .as_ref()
            .map(crate::tls::acceptor)
            .transpose()?;
        let addr = settings.server.listen;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, source })?;
        let check_threads = match settings.server.check_threads {
            0 => None,
            // Idle, a check thread tears down finished checks and makes the
            // next ready instances, on its own core.
            n => Some(
                RuntimeThreads::start(
                    "verdict-check",
                    n,
                    Arc::new(verdict_sandbox::run_waiting_jobs),
                )
                .map_err(|source| ServeError::Threads {
                    what: "check",
                    source,
                })?,
            ),
        };
        let state = Arc::new(AppState::new(
            catalog,
            host,
            metrics,
            settings.server,
            reloader,
            log_json,
            check_threads,
        ));
        let (stop, _) = watch::channel(None);
        Ok(Self {
            listener,
            state,
            tls,
            stop,
        })
    }

    /// The bound address (with the port chosen for port 0).
    pub fn local_addr(&self) -> Result<SocketAddr, ServeError> {
        self.listener
            .local_addr()
            .map_err(|source| ServeError::Bind {
                addr: self.state.server.listen,
                source,
            })
    }

    /// A handle to stop or reload the server.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            state: self.state.clone(),
            stop: self.stop.clone(),
        }
    }

    /// Serves until [`ServerHandle::shutdown`], then drains: for the
    /// grace period new connections are still accepted (every request is
    /// answered 503 with `Connection: close`, `/readyz` too), then the
    /// listener refuses new handshakes, what waits in its backlog is
    /// accepted and answered, and the listener closes; accepted requests
    /// then have the drain timeout to finish. True when every connection
    /// closed within the drain timeout.
    pub async fn run(self) -> bool {
        let Self {
            listener,
            state,
            tls,
            stop,
        } = self;
        let graceful = GracefulShutdown::new();
        let connections = Arc::new(Semaphore::new(state.server.max_connections));
        let mut stopped = stop.subscribe();
        // Idle, a serving thread does the teardowns and refills too, unless
        // checks run on the check threads (they do it there, away from
        // this core).
        let checks_here = Arc::clone(&state);
        let when_idle = Arc::new(move || {
            if checks_here
                .check_threads
                .as_ref()
                .is_none_or(RuntimeThreads::idle)
            {
                verdict_sandbox::run_waiting_jobs();
            }
        });
        // Without its own threads (they could not start), the server
        // serves on the runtime that runs it.
        let threads = RuntimeThreads::start("verdict-http", state.server.http_threads, when_idle)
            .inspect_err(|e| tracing::warn!(error = %e, "serving on the main runtime"))
            .ok();
        let acceptor = Acceptor {
            router: crate::routes::router(state.clone()),
            state: state.clone(),
            tls,
            threads,
        };
        // Serving, then (stopped) the grace period.
        let grace = loop {
            if let Some(grace) = *stopped.borrow() {
                break grace;
            }
            let permit = tokio::select! {
                p = connections.clone().acquire_owned() => p,
                _ = stopped.changed() => continue,
            };
            let Ok(permit) = permit else {
                break Duration::ZERO;
            };
            tokio::select! {
                a = listener.accept() => acceptor.take(a, Some(permit), &graceful).await,
                _ = stopped.changed() => continue,
            }
        };
        state.draining.store(true, Ordering::Relaxed);
        let grace_over = tokio::time::sleep(grace);
        tokio::pin!(grace_over);
        loop {
            let permit = tokio::select! {
                p = connections.clone().acquire_owned() => p,
                () = &mut grace_over => break,
            };
            let Ok(permit) = permit else { break };
            tokio::select! {
                a = listener.accept() => acceptor.take(a, Some(permit), &graceful).await,
                () = &mut grace_over => break,
            }
        }
        // The backlog: no new handshakes, those under way complete, then
        // every connection waiting is accepted (past `max_connections`:
        // each is answered 503 at once) before the listener closes.
        match listener.into_std() {
            Ok(listener) => {
                crate::listen::refuse_new_handshakes(&listener);
                tokio::time::sleep(HANDSHAKES_SETTLE).await;
                loop {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let stream = stream
                                .set_nonblocking(true)
                                .and_then(|()| tokio::net::TcpStream::from_std(stream));
                            let accepted = stream.map(|s| (s, None));
                            let _ = acceptor.take_stream(accepted, None, &graceful);
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            tracing::warn!(error = %e, "accept failed while closing");
                            break;
                        }
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot drain the listen backlog"),
        }
        // A connection told to shut down before it read its first request
        // closes unanswered: each gets its header read time to send it (and
        // closes after its answer: `Connection: close`) before the rest are
        // told.
        let drain_over = tokio::time::Instant::now() + state.server.drain_timeout;
        let first_requests = tokio::time::Instant::now()
            + state
                .server
                .header_read_timeout
                .min(state.server.drain_timeout);
        while graceful.count() > 0 && tokio::time::Instant::now() < first_requests {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let drained = tokio::time::timeout_at(drain_over, graceful.shutdown())
            .await
            .is_ok();
        drop(acceptor);
        crate::access::flush();
        drained
    }
}

/// How long handshakes under way get to complete into the backlog once
/// new ones are refused (a loopback or LAN round trip, with room).
const HANDSHAKES_SETTLE: Duration = Duration::from_millis(100);

/// Serves each accepted connection.
struct Acceptor {
    router: axum::Router,
    state: Arc<AppState>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    threads: Option<RuntimeThreads>,
}

impl Acceptor {
    /// Serves an accepted connection (an accept error: backs off a little).
    async fn take(
        &self,
        accepted: std::io::Result<(tokio::net::TcpStream, SocketAddr)>,
        permit: Option<OwnedSemaphorePermit>,
        graceful: &GracefulShutdown,
    ) {
        let accepted = accepted.map(|(s, peer)| (s, Some(peer)));
        if self.take_stream(accepted, permit, graceful).is_err() {
            // Out of descriptors and the like: back off, go on.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn take_stream(
        &self,
        accepted: std::io::Result<(tokio::net::TcpStream, Option<SocketAddr>)>,
        permit: Option<OwnedSemaphorePermit>,
        graceful: &GracefulShutdown,
    ) -> Result<(), ()> {
        let stream = match accepted {
            Ok((stream, _peer)) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                return Err(());
            }
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(self.router.clone());
        let state = self.state.clone();
        let watcher = graceful.watcher();
        let tls = self.tls.clone();
        let conn = move |stream: tokio::net::TcpStream| async move {
            state.metrics.connections.inc();
            let header_timeout = state.server.header_read_timeout;
            match tls {
                None => serve(stream, service, header_timeout, watcher).await,
                Some(acceptor) => {
                    match tokio::time::timeout(header_timeout, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => serve(tls, service, header_timeout, watcher).await,
                        _ => tracing::debug!("TLS handshake failed or timed out"),
                    }
                }
            }
            state.metrics.connections.dec();
            drop(permit);
        };
        match &self.threads {
            // The socket moves to the serving thread's own reactor.
            Some(threads) => match stream.into_std() {
                Ok(socket) => threads.spawn(async move {
                    match tokio::net::TcpStream::from_std(socket) {
                        Ok(stream) => conn(stream).await,
                        Err(e) => tracing::warn!(error = %e, "cannot serve a connection"),
                    }
                }),
                Err(e) => tracing::warn!(error = %e, "cannot serve a connection"),
            },
            None => {
                tokio::spawn(conn(stream));
            }
        }
        Ok(())
    }
}

async fn serve<I>(
    io: I,
    service: TowerToHyperService<axum::Router>,
    header_timeout: std::time::Duration,
    watcher: hyper_util::server::graceful::Watcher,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .keep_alive(true);
    let connection = builder.serve_connection(TokioIo::new(io), service);
    if let Err(e) = watcher.watch(connection).await {
        tracing::debug!(error = %e, "connection ended with an error");
    }
}
