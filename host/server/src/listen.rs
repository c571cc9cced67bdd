//! Closing the listener without resetting a connection: first refuse new
//! handshakes, then take what waits in the backlog, then close.

use std::net::TcpListener;

/// Makes the kernel drop new handshakes (pure SYN segments) aimed at
/// `listener`, while handshakes already under way complete into its
/// backlog. A client whose SYN is dropped retries it and, once the
/// listener is closed, is refused: it knows its request never ran. Only
/// Linux has socket filters; elsewhere this does nothing (a handshake
/// completing between the last accept and the close is then reset).
pub(crate) fn refuse_new_handshakes(listener: &TcpListener) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use socket2::{SockFilter, SockRef};
        // Classic BPF over the TCP header (a TCP socket's filter sees the
        // segment from its TCP header on): byte 13 holds the flags.
        const LD_B_ABS: u16 = 0x30;
        const JSET_K: u16 = 0x45;
        const RET_K: u16 = 0x06;
        const ACK: u32 = 0x10;
        const SYN: u32 = 0x02;
        let program = [
            SockFilter::new(LD_B_ABS, 0, 0, 13),
            // ACK set: a handshake's last segment or later, keep it.
            SockFilter::new(JSET_K, 2, 0, ACK),
            // SYN without ACK: a new handshake, drop it.
            SockFilter::new(JSET_K, 0, 1, SYN),
            SockFilter::new(RET_K, 0, 0, 0),
            SockFilter::new(RET_K, 0, 0, u32::MAX),
        ];
        if let Err(e) = SockRef::from(listener).attach_filter(&program) {
            tracing::warn!(error = %e, "cannot refuse new handshakes before closing");
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = listener;
}
