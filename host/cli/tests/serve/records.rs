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

#[test]
fn a_bundle_fetched_over_http_replays_without_the_record_dir() {
    let served = Served::start(&config("", r#"record_dir = "records""#));
    let addr = served.addr;
    let reply = post(
        addr,
        "/v1/tenants/alpha/completion",
        Some(ALPHA),
        &packet("ready.json"),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    let id = reply.json()["checkId"].as_str().unwrap().to_owned();
    let bundle = get(
        addr,
        &format!("/v1/tenants/alpha/checks/{id}?bundle=1"),
        Some(ALPHA),
    );
    assert_eq!(bundle.status, 200, "{}", bundle.text());
    let b = bundle.json();
    assert_eq!(b["format"], "verdict.check-bundle/1");
    assert_eq!(b["record"]["id"], id.as_str());
    assert_eq!(b["auditLine"]["record"], id.as_str());
    assert!(b["blobs"].as_object().unwrap().len() >= 2, "{b}");
    let file = served.path("fetched.bundle.json");
    std::fs::write(&file, bundle.text()).unwrap();
    // Neither the server's records nor the live artifacts are needed.
    std::fs::remove_dir_all(served.path("records")).unwrap();
    std::fs::remove_file(served.path("alpha/A42")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_verdict"))
        .arg("replay")
        .arg(&file)
        .env("VERDICT_CACHE_DIR", served.path("cli-cache"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("1 of 1 identical"), "{text}");
}

#[test]
fn unknown_ids_are_404_at_once_and_no_store_error_reaches_a_tenant() {
    let served = Served::start(&config("", r#"record_dir = "records""#));
    let addr = served.addr;
    // The audit log cannot be appended to: every flush fails, naming it.
    let audit = served.path("records/audit.jsonl");
    let _ = std::fs::remove_file(&audit);
    std::fs::create_dir_all(&audit).unwrap();
    let reply = post(
        addr,
        "/v1/tenants/alpha/completion",
        Some(ALPHA),
        &packet("ready.json"),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    let mut x: u64 = 48;
    for _ in 0..200 {
        let id: String = (0..32)
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                char::from_digit((x >> 60) as u32, 16).unwrap()
            })
            .collect();
        let r = get(addr, &format!("/v1/tenants/alpha/checks/{id}"), Some(ALPHA));
        assert_eq!(
            (r.status, r.code()),
            (404, "record_not_found".to_owned()),
            "{}",
            r.text()
        );
        assert!(!r.text().contains("audit.jsonl"), "{}", r.text());
    }
}

#[test]
fn the_record_queue_is_sized_per_tenant_within_bounds() {
    // A queue of 1 MiB serves and records.
    let served = Served::start(&config(
        "",
        "record_dir = \"records\"\nrecord_queue_mib = 1",
    ));
    let reply = post(
        served.addr,
        "/v1/tenants/alpha/completion",
        Some(ALPHA),
        &packet("ready.json"),
    );
    assert_eq!(reply.status, 200);
    assert!(reply.json()["checkId"].is_string(), "{}", reply.text());
    drop(served);
    for bad in ["0", "16385"] {
        let dir = tempfile::tempdir().unwrap();
        for tenant in ["alpha", "beta"] {
            std::fs::create_dir(dir.path().join(tenant)).unwrap();
        }
        let file = dir.path().join("verdict.toml");
        let text = config(
            "",
            &format!("record_dir = \"records\"\nrecord_queue_mib = {bad}"),
        );
        std::fs::write(&file, text).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_verdict"))
            .args(["serve", "--config"])
            .arg(&file)
            .args(["--listen", "127.0.0.1:0"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(
            stderr.contains("record_queue_mib") && stderr.contains("between 1 and 16384"),
            "{stderr}"
        );
    }
}
