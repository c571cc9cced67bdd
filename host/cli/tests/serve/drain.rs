//! SIGTERM racing requests on fresh connections: every connection the
//! kernel accepted gets an HTTP answer (200, or 503 `draining` with
//! `Connection: close`); the others are refused at connect, so a client
//! always knows whether its request ran.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::client::{get, read_reply, send};
use super::server::{ALPHA, Served, packet, spinning_config};
use nix::sys::signal::Signal;
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CLIENTS: usize = 32;
const EACH: usize = 8;

/// What became of each request.
#[derive(Debug, Default)]
struct Outcomes {
    ok: usize,
    draining: usize,
    other: Vec<u16>,
    refused: usize,
    /// Connected, then closed (or reset) without an HTTP answer.
    unanswered: Vec<String>,
}

/// `CLIENTS` threads each sending `EACH` checks, one per fresh connection,
/// to a server taking 2 connections at once whose checks spin 100 ms (so
/// the listen backlog holds most clients); SIGTERM after 6 answers.
fn race(grace: &str) -> (Outcomes, Served) {
    let text = spinning_config(
        &format!("max_connections = 2\n{grace}"),
        "[tenants.alpha.limits]\ntimeout_ms = 100\nfuel = 100000000000000",
    );
    let mut served = Served::start(&text);
    let addr = served.addr;
    let answered = Arc::new(AtomicUsize::new(0));
    let outcomes = Arc::new(Mutex::new(Outcomes::default()));
    let body = packet("ready.json");
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (answered, outcomes, body) = (answered.clone(), outcomes.clone(), body.clone());
            std::thread::spawn(move || {
                for _ in 0..EACH {
                    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(20))
                    else {
                        outcomes.lock().unwrap().refused += 1;
                        continue;
                    };
                    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
                    s.set_write_timeout(Some(Duration::from_secs(30))).unwrap();
                    let sent = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        send(
                            &mut s,
                            "POST",
                            "/v1/tenants/alpha/completion",
                            Some(ALPHA),
                            &[],
                            &body,
                        );
                    }));
                    let reply = match sent {
                        Ok(()) => read_reply(&mut s),
                        Err(_) => Err(std::io::Error::other("the request could not be sent")),
                    };
                    let mut o = outcomes.lock().unwrap();
                    match reply {
                        Ok(r) if r.status == 200 => o.ok += 1,
                        Ok(r) if r.status == 503 => {
                            assert_eq!(r.header("connection"), Some("close"), "{r:?}");
                            assert_eq!(r.code(), "draining");
                            o.draining += 1;
                        }
                        Ok(r) => o.other.push(r.status),
                        Err(e) => o.unanswered.push(e.to_string()),
                    }
                    answered.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let started = Instant::now();
    while answered.load(Ordering::Relaxed) < 6 {
        assert!(started.elapsed() < Duration::from_secs(60), "no answers");
        std::thread::sleep(Duration::from_millis(5));
    }
    served.signal(Signal::SIGTERM);
    for c in clients {
        c.join().unwrap();
    }
    let status = served.wait(Duration::from_secs(30)).expect("still running");
    assert_eq!(status.code(), Some(0), "{}", served.log());
    let outcomes = std::mem::take(&mut *outcomes.lock().unwrap());
    (outcomes, served)
}

fn assert_every_connection_answered(o: &Outcomes) {
    eprintln!(
        "{} requests: {} answered 200, {} answered 503 draining, {} refused at connect, \
         {} connected without an answer, other {:?}",
        CLIENTS * EACH,
        o.ok,
        o.draining,
        o.refused,
        o.unanswered.len(),
        o.other
    );
    assert!(o.unanswered.is_empty(), "{o:?}");
    assert!(o.other.is_empty(), "{o:?}");
    assert_eq!(o.ok + o.draining + o.refused, CLIENTS * EACH, "{o:?}");
    assert!(o.ok >= 6, "{o:?}");
}

#[test]
fn sigterm_without_grace_answers_the_listen_backlog_and_refuses_the_rest() {
    let (o, _served) = race("drain_grace_ms = 0");
    assert_every_connection_answered(&o);
    // Most clients were waiting in the backlog at SIGTERM: each answered.
    assert!(o.draining >= CLIENTS / 2, "{o:?}");
}

#[test]
fn sigterm_keeps_accepting_for_the_grace_period_answering_503_and_readyz_turns_at_once() {
    let text = spinning_config("drain_grace_ms = 3000", "");
    let mut served = Served::start(&text);
    assert_eq!(get(served.addr, "/readyz", None).status, 200);
    served.signal(Signal::SIGTERM);
    assert!(
        served.wait_log("verdict serve: draining", Duration::from_secs(10)),
        "{}",
        served.log()
    );
    let ready = get(served.addr, "/readyz", None);
    assert_eq!(ready.status, 503, "{}", ready.text());
    assert_eq!(ready.header("connection"), Some("close"));
    // Still accepting during the grace period; alive says so too.
    assert_eq!(get(served.addr, "/healthz", None).status, 200);
    let status = served.wait(Duration::from_secs(30)).expect("still running");
    assert_eq!(status.code(), Some(0), "{}", served.log());

    let (o, _served) = race("drain_grace_ms = 1000");
    assert_every_connection_answered(&o);
    assert!(o.draining > 0, "{o:?}");
}
