//! Abuse: headers sent byte by byte, a 1 GiB body, more checks than the
//! limits allow, a dropped request, hostile uploads during checks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::client::{connect, get, post, read_reply, request, send};
use super::server::{ADMIN, ALPHA, Served, config, packet, spinning_config};
use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[test]
fn a_client_sending_headers_byte_by_byte_is_cut_at_the_header_timeout() {
    let served = Served::start(&config("header_read_timeout_ms = 500", ""));
    let mut stream = connect(served.addr);
    let head = format!(
        "POST /v1/tenants/alpha/completion HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ALPHA}\r\nX-Padding: {}\r\n\r\n",
        "p".repeat(200)
    );
    let started = Instant::now();
    let mut sent = 0;
    for byte in head.as_bytes() {
        if stream.write_all(&[*byte]).is_err() {
            break;
        }
        sent += 1;
        std::thread::sleep(Duration::from_millis(20));
        if started.elapsed() > Duration::from_secs(3) {
            break;
        }
    }
    // The server closed the connection (perhaps after a 408) long before
    // the headers were done.
    let mut rest = Vec::new();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let _ = stream.read_to_end(&mut rest);
    let text = String::from_utf8_lossy(&rest);
    assert!(sent < head.len(), "sent all {sent} bytes: {text}");
    assert!(
        rest.is_empty() || text.starts_with("HTTP/1.1 408"),
        "{text}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // Others are served meanwhile.
    assert_eq!(get(served.addr, "/healthz", None).status, 200);
}

/// Streams up to `total` bytes of body after `head`, until the server
/// answers; returns the answer's status and the bytes sent.
fn stream_body(served: &Served, head: &str, total: u64, chunked: bool) -> (u16, u64) {
    let mut stream = connect(served.addr);
    stream.write_all(head.as_bytes()).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let (stop2, sent2) = (stop.clone(), sent.clone());
    let pump = std::thread::spawn(move || {
        let chunk = vec![b'x'; 64 * 1024];
        let framed = {
            let mut f = format!("{:x}\r\n", chunk.len()).into_bytes();
            f.extend_from_slice(&chunk);
            f.extend_from_slice(b"\r\n");
            f
        };
        while !stop2.load(Ordering::Relaxed) && sent2.load(Ordering::Relaxed) < total {
            let data = if chunked { &framed } else { &chunk };
            if writer.write_all(data).is_err() {
                break;
            }
            sent2.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        }
    });
    let reply = read_reply(&mut stream).unwrap();
    stop.store(true, Ordering::Relaxed);
    let _ = stream.shutdown(std::net::Shutdown::Both);
    pump.join().unwrap();
    assert_eq!(reply.code(), "body_too_large");
    (reply.status, sent.load(Ordering::Relaxed))
}

#[test]
fn a_one_gib_body_is_refused_with_413_without_being_read() {
    let served = Served::start(&config("", ""));
    const GIB: u64 = 1 << 30;
    // Announced: refused before any of it is read.
    let head = format!(
        "POST /v1/tenants/alpha/completion HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ALPHA}\r\nContent-Length: {GIB}\r\n\r\n"
    );
    let (status, sent) = stream_body(&served, &head, GIB, false);
    assert_eq!(status, 413);
    assert!(sent < 64 << 20, "{sent} bytes went out before the answer");
    // Not announced (chunked): cut once past the 1 MiB bound.
    let head = format!(
        "POST /v1/tenants/alpha/completion HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ALPHA}\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    let (status, sent) = stream_body(&served, &head, GIB, true);
    assert_eq!(status, 413);
    assert!(sent < 64 << 20, "{sent} bytes went out before the answer");
    // The same for an upload, over the component bound.
    let head = format!(
        "PUT /v1/tenants/alpha/verifiers/completion HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ADMIN}\r\nContent-Length: {GIB}\r\n\r\n"
    );
    let (status, _) = stream_body(&served, &head, GIB, false);
    assert_eq!(status, 413);
    assert_eq!(get(served.addr, "/healthz", None).status, 200);
}

#[test]
fn over_the_tenants_limit_a_check_gets_429_with_retry_after() {
    // Alpha runs one check at a time; a spinning verifier holds it.
    let text = spinning_config(
        "",
        "max_concurrent_checks = 1\n[tenants.alpha.limits]\ntimeout_ms = 1500\nfuel = 100000000000000",
    );
    let served = Served::start(&text);
    let addr = served.addr;
    let slow = std::thread::spawn(move || {
        post(
            addr,
            "/v1/tenants/alpha/completion",
            Some(ALPHA),
            &packet("ready.json"),
        )
    });
    served.wait_metrics(
        &[r#"verdict_checks_in_flight{tenant="alpha"} 1"#],
        Duration::from_secs(10),
    );
    let refused = post(
        addr,
        "/v1/tenants/alpha/completion",
        Some(ALPHA),
        &packet("ready.json"),
    );
    assert_eq!(refused.status, 429, "{}", refused.text());
    assert_eq!(refused.code(), "too_many_requests");
    assert_eq!(refused.header("retry-after"), Some("1"));
    // The spinning check is answered: a timeout, as a checker error.
    let first = slow.join().unwrap();
    assert_eq!(first.status, 200);
    assert_eq!(first.json()["error"]["code"], "timeout");
}

#[test]
fn dropped_requests_cancel_their_checks_on_the_server() {
    // Three spinning checks: the first runs on its connection's thread (the
    // server was idle), the others find it running and go to the check
    // threads; dropping each request cancels its check wherever it runs.
    let text = spinning_config(
        "http_threads = 1\ncheck_threads = 2",
        "[tenants.alpha.limits]\ntimeout_ms = 20000\nfuel = 100000000000000",
    );
    let served = Served::start(&text);
    let mut streams = Vec::new();
    for running in 1..=3 {
        let mut stream = connect(served.addr);
        send(
            &mut stream,
            "POST",
            "/v1/tenants/alpha/completion",
            Some(ALPHA),
            &[],
            &packet("ready.json"),
        );
        streams.push(stream);
        served.wait_metrics(
            &[&format!(
                r#"verdict_checks_in_flight{{tenant="alpha"}} {running}"#
            )],
            Duration::from_secs(10),
        );
    }
    drop(streams);
    // All cancelled long before their 20 s deadline; the server serves on.
    served.wait_metrics(
        &[
            r#"verdict_checks_total{tenant="alpha",role="completion",status="cancelled"} 3"#,
            r#"verdict_checks_in_flight{tenant="alpha"} 0"#,
        ],
        Duration::from_secs(5),
    );
    assert_eq!(get(served.addr, "/healthz", None).status, 200);
}

#[test]
fn hostile_uploads_during_checks_change_nothing_and_a_good_one_swaps_in() {
    let served = Served::start(&config("", ""));
    let addr = served.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let load: Vec<_> = (0..3)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut answered = 0;
                let mut digests = std::collections::BTreeSet::new();
                while !stop.load(Ordering::Relaxed) {
                    let r = post(
                        addr,
                        "/v1/tenants/alpha/completion",
                        Some(ALPHA),
                        &packet("ready.json"),
                    );
                    assert_eq!(r.status, 200, "{}", r.text());
                    let v = r.json();
                    assert_eq!(v["status"], "complete", "{v}");
                    digests.insert(v["verifierDigest"].as_str().unwrap().to_owned());
                    answered += 1;
                }
                (answered, digests)
            })
        })
        .collect();
    let put = |bytes: &[u8]| {
        request(
            addr,
            "PUT",
            "/v1/tenants/alpha/verifiers/completion",
            Some(ADMIN),
            &[],
            bytes,
        )
    };
    let before =
        get(addr, "/v1/tenants/alpha/verifiers", Some(ALPHA)).json()["verifiers"][0]["digest"]
            .clone();
    let read = |path: &str| std::fs::read(path).unwrap();
    use verdict_test_support::{core_guest, guests};
    let hostile: Vec<(&str, Vec<u8>)> = vec![
        ("garbage", b"\0asm garbage".to_vec()),
        ("a core module", b"\0asm\x01\0\0\0".to_vec()),
        ("a 1M-entry table", core_guest::load("table-1m")),
        ("20 memories", core_guest::load("memories-20")),
        ("progress only", read(guests::HOSTILE_HUGE_PROGRESS_KEY)),
    ];
    for (what, bytes) in &hostile {
        let r = put(bytes);
        assert_eq!(r.status, 422, "{what}: {}", r.text());
        assert_eq!(r.code(), "verifier_rejected", "{what}");
    }
    let after =
        get(addr, "/v1/tenants/alpha/verifiers", Some(ALPHA)).json()["verifiers"][0]["digest"]
            .clone();
    assert_eq!(before, after, "a refused upload changed the verifier");
    // A good one (the same checker, another build) swaps in.
    let good = read(guests::GOOD_BOTH);
    let r = put(&good);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["previousDigest"], before);
    let swapped = r.json()["digest"].clone();
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let mut total = 0;
    for t in load {
        let (answered, _digests) = t.join().unwrap();
        total += answered;
    }
    assert!(total > 3, "{total}");
    let now = get(addr, "/v1/tenants/alpha/verifiers", Some(ALPHA)).json();
    assert_eq!(now["verifiers"][0]["digest"], swapped);
    assert_eq!(now["verifiers"][0]["origin"], "upload");
    let refused = get(addr, "/metrics", Some(ADMIN)).text();
    assert!(
        refused.contains(r#"verdict_uploads_refused_total{tenant="alpha"} 5"#),
        "{refused}"
    );
}

#[test]
fn open_connections_are_bounded_and_the_next_waits_for_a_free_one() {
    let served = Served::start(&config("max_connections = 2", ""));
    // Two keep-alive connections, each served once and then held open.
    let keep = |_| {
        let mut s = connect(served.addr);
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        assert_eq!(read_head_status(&mut s), 200);
        s
    };
    let held: Vec<_> = (0..2).map(keep).collect();
    // A third is not served while both are open...
    let mut third = connect(served.addr);
    third
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    third
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut byte = [0u8; 1];
    assert!(third.read(&mut byte).is_err(), "served past the bound");
    // ...and is once one closes.
    drop(held);
    third
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let reply = read_reply(&mut third).unwrap();
    assert_eq!(reply.status, 200);
}

/// Reads one response's head and its small body off a kept-alive stream.
fn read_head_status(stream: &mut std::net::TcpStream) -> u16 {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).unwrap();
        buf.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&buf).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap())
        })
        .unwrap();
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).unwrap();
    head.split(' ').nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_body_slower_than_the_request_timeout_gets_408() {
    let served = Served::start(&config("request_timeout_ms = 400", ""));
    let mut stream = connect(served.addr);
    let head = format!(
        "POST /v1/tenants/alpha/completion HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ALPHA}\r\nContent-Length: 239\r\n\r\n{{"
    );
    stream.write_all(head.as_bytes()).unwrap();
    let started = Instant::now();
    // The rest of the body never comes.
    let reply = read_reply(&mut stream).unwrap();
    assert_eq!(reply.status, 408, "{}", reply.text());
    assert_eq!(reply.code(), "request_timeout");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(350) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
}
