//! Hostile guest: tries to get out of the sandbox through the WASI
//! interfaces the host links deny-all. The packet's output text says what
//! to try:
//!
//! - `file PATH`: list the preopened directories, then read `PATH`;
//! - `tcp ADDR` / `udp ADDR`: connect / send a datagram to `ADDR`;
//! - `lookup NAME`: resolve `NAME` (a `host:port`);
//! - `http AUTHORITY`: send `GET http://AUTHORITY/`.
//!
//! Every attempt that fails answers incomplete with the error as the
//! reason; one that gets through answers complete (`escaped: ...`).

use verdict_guest::{Artifacts, Packet, Verdict, Verifier};

/// The checker that tries its way out.
#[derive(Debug, Default)]
pub struct WasiDeny;

fn escaped(what: String) -> Verdict {
    Verdict::complete().with_reason(format!("escaped: {what}"))
}

fn refused(what: String) -> Verdict {
    Verdict::incomplete("refused").with_reason(what)
}

fn io(result: std::io::Result<String>) -> Verdict {
    match result {
        Ok(what) => escaped(what),
        Err(e) => refused(format!("{:?}: {e}", e.kind())),
    }
}

fn file(path: &str) -> Verdict {
    let preopens = wasip2::filesystem::preopens::get_directories();
    if !preopens.is_empty() {
        return escaped(format!("{} preopened directories", preopens.len()));
    }
    io(std::fs::read(path).map(|bytes| format!("read {} bytes", bytes.len())))
}

fn tcp(addr: &str) -> Verdict {
    io(std::net::TcpStream::connect(addr).map(|s| format!("connected {:?}", s.peer_addr())))
}

fn udp(addr: &str) -> Verdict {
    io(std::net::UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.send_to(b"hello", addr))
        .map(|n| format!("sent {n} bytes")))
}

fn lookup(name: &str) -> Verdict {
    use std::net::ToSocketAddrs;
    io(name
        .to_socket_addrs()
        .map(|addrs| format!("resolved {:?}", addrs.collect::<Vec<_>>())))
}

fn http(authority: &str) -> Verdict {
    use wasip2::http::outgoing_handler;
    use wasip2::http::types::{Fields, OutgoingRequest, Scheme};
    let request = OutgoingRequest::new(Fields::new());
    if request.set_scheme(Some(&Scheme::Http)).is_err()
        || request.set_authority(Some(authority)).is_err()
        || request.set_path_with_query(Some("/")).is_err()
    {
        return refused("request refused its fields".into());
    }
    let response = match outgoing_handler::handle(request, None) {
        Ok(response) => response,
        Err(code) => return refused(format!("handle: {code:?}")),
    };
    response.subscribe().block();
    match response.get() {
        Some(Ok(Ok(response))) => escaped(format!("status {}", response.status())),
        Some(Ok(Err(code))) => refused(format!("response: {code:?}")),
        other => refused(format!("response: {other:?}")),
    }
}

impl Verifier for WasiDeny {
    fn check(&self, packet: &Packet, _artifacts: &dyn Artifacts) -> Verdict {
        let (what, arg) = packet
            .output_text
            .split_once(' ')
            .unwrap_or((packet.output_text.as_str(), ""));
        match what {
            "file" => file(arg),
            "tcp" => tcp(arg),
            "udp" => udp(arg),
            "lookup" => lookup(arg),
            "http" => http(arg),
            other => {
                Verdict::incomplete("unknown").with_reason(format!("unknown attempt {other:?}"))
            }
        }
    }
}

verdict_guest::export!(completion: WasiDeny);
