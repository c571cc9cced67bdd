//! A tenant with `record_dir`: every check's id answers
//! `GET /v1/tenants/{t}/checks/{id}` with its record, which `verdict
//! replay` re-runs; a tenant without one, or another tenant, gets 404.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::client::{get, post};
use super::server::{ALPHA, BETA, Served, config, packet};

#[test]
fn a_recording_tenant_serves_each_check_record_and_it_replays() {
    let served = Served::start(&config("", r#"record_dir = "records""#));
    let addr = served.addr;
    let mut ids = Vec::new();
    for name in ["ready.json", "premature.json"] {
        let reply = post(
            addr,
            "/v1/tenants/alpha/completion",
            Some(ALPHA),
            &packet(name),
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
        let id = reply.json()["checkId"].as_str().unwrap().to_owned();
        assert_eq!(reply.header("x-verdict-check-id"), Some(id.as_str()));
        ids.push((id, reply.json()));
    }
    for (id, answer) in &ids {
        // At once: the record is on disk by the time it is asked for.
        let record = get(addr, &format!("/v1/tenants/alpha/checks/{id}"), Some(ALPHA));
        assert_eq!(record.status, 200, "{}", record.text());
        let r = record.json();
        assert_eq!(r["id"], id.as_str());
        assert_eq!(r["tenant"], "alpha");
        assert_eq!(r["format"], "verdict.check-record/1");
        assert_eq!(r["verifier"]["digest"], answer["verifierDigest"]);
        assert_eq!(r["answer"]["verdict"], answer["verdict"]);
        // Another tenant's token does not reach it.
        let other = get(addr, &format!("/v1/tenants/alpha/checks/{id}"), Some(BETA));
        assert_eq!(other.status, 404);
    }
    let unknown = get(
        addr,
        &format!("/v1/tenants/alpha/checks/{}", "0".repeat(32)),
        Some(ALPHA),
    );
    assert_eq!(
        (unknown.status, unknown.code()),
        (404, "record_not_found".to_owned())
    );
    let hostile = get(
        addr,
        "/v1/tenants/alpha/checks/..%2F..%2Fverdict.toml",
        Some(ALPHA),
    );
    assert_eq!(hostile.status, 404);
    // Beta does not record.
    let beta = post(
        addr,
        "/v1/tenants/beta/completion",
        Some(BETA),
        &packet("ready.json"),
    );
    let beta_id = beta.json()["checkId"].as_str().unwrap().to_owned();
    let none = get(
        addr,
        &format!("/v1/tenants/beta/checks/{beta_id}"),
        Some(BETA),
    );
    assert_eq!(
        (none.status, none.code()),
        (404, "not_recording".to_owned())
    );

    // The records replay from the record directory alone.
    std::fs::remove_file(served.path("alpha/A42")).unwrap();
    let files: Vec<_> = ids
        .iter()
        .map(|(id, _)| served.path(&format!("records/{id}.json")))
        .collect();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_verdict"))
        .arg("replay")
        .args(&files)
        .env("VERDICT_CACHE_DIR", served.path("cli-cache"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("2 of 2 identical"), "{text}");
}
