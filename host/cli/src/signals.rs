//! SIGINT, SIGTERM and SIGHUP: each cancels the running execution instead
//! of killing the process, so its summary (or `--json` object) is still
//! written and the exit code says it was cancelled (6).

use std::io;

use verdict::CancelHandle;

/// Which signal arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM or SIGHUP: the session should end.
    Terminate,
}

/// The installed handlers. Installing replaces the default action (death)
/// for the process's lifetime; call within a Tokio runtime.
pub struct Signals {
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    /// Installs the handlers now (signals arriving from here on are caught).
    #[cfg(unix)]
    pub fn install() -> io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            int: signal(SignalKind::interrupt())?,
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    /// Installs the handlers now (signals arriving from here on are caught).
    #[cfg(not(unix))]
    pub fn install() -> io::Result<Self> {
        Ok(Self {})
    }

    /// The next signal.
    #[cfg(unix)]
    pub async fn recv(&mut self) -> Kind {
        tokio::select! {
            _ = self.int.recv() => Kind::Interrupt,
            _ = self.term.recv() => Kind::Terminate,
            _ = self.hup.recv() => Kind::Terminate,
        }
    }

    /// The next signal.
    #[cfg(not(unix))]
    pub async fn recv(&mut self) -> Kind {
        match tokio::signal::ctrl_c().await {
            Ok(()) => Kind::Interrupt,
            Err(_) => std::future::pending().await,
        }
    }

    /// Cancels `cancel` at every signal from now on (spawned on the current
    /// runtime).
    pub fn cancel_on_any(mut self, cancel: CancelHandle) {
        tokio::spawn(async move {
            loop {
                self.recv().await;
                cancel.cancel();
            }
        });
    }
}
