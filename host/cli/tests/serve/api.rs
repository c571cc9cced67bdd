//! Every route and every error status, and tenants kept apart.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::client::{get, post, request};
use super::server::{ADMIN, ALPHA, BETA, Served, config, packet, spinning_config};

#[test]
fn every_route_answers_and_every_error_is_one_json_shape() {
    let served = Served::start(&config("", ""));
    let addr = served.addr;

    assert_eq!(get(addr, "/healthz", None).status, 200);
    assert_eq!(get(addr, "/readyz", None).json()["status"], "ready");

    // A check: the `check --json` object plus checkId and witVersion.
    let ok = post(
        addr,
        "/v1/tenants/alpha/completion",
        Some(ALPHA),
        &packet("ready.json"),
    );
    assert_eq!(ok.status, 200, "{}", ok.text());
    let v = ok.json();
    assert_eq!(v["status"], "complete");
    assert_eq!(v["tenant"], "alpha");
    assert_eq!(v["verdict"]["complete"], true);
    assert_eq!(v["witVersion"], "verdict:verifier@0.1.1");
    assert_eq!(v["verifierDigest"].as_str().unwrap().len(), 64);
    assert!(v["metrics"]["fuelUsed"].as_u64().unwrap() > 0);
    assert_eq!(ok.header("x-verdict-check-id"), v["checkId"].as_str());
    let not = post(
        addr,
        "/v1/tenants/alpha/completion",
        Some(ALPHA),
        &packet("premature.json"),
    );
    assert_eq!(not.json()["status"], "not_complete");
    assert!(not.json()["verdict"]["feedback"].is_string());
    // The same object as `verdict check --json` (less the per-call values).
    let cli = std::process::Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args([
            "check",
            "--verifier",
            "builtin:artifact-ready",
            "--json",
            "--tenant",
            "alpha",
        ])
        .arg("--packet")
        .arg(super::server::examples().join("packets/premature.json"))
        .arg("--artifacts")
        .arg(served.path("alpha"))
        .env("VERDICT_CACHE_DIR", served.path("cli-cache"))
        .output()
        .unwrap();
    let mut printed: serde_json::Value = serde_json::from_slice(&cli.stdout).unwrap();
    let mut answered = not.json();
    for v in [&mut printed, &mut answered] {
        v["metrics"] = serde_json::Value::Null;
    }
    answered.as_object_mut().unwrap().remove("checkId");
    answered.as_object_mut().unwrap().remove("witVersion");
    assert_eq!(printed, answered);

    // Progress: beta has a progress verifier, alpha has none (404).
    let key = post(
        addr,
        "/v1/tenants/beta/progress",
        Some(BETA),
        &packet("ready.json"),
    );
    assert_eq!(key.json()["status"], "progress_key", "{}", key.text());
    assert!(key.json()["progressKey"].is_string());
    let none = post(
        addr,
        "/v1/tenants/alpha/progress",
        Some(ALPHA),
        &packet("ready.json"),
    );
    assert_eq!(
        (none.status, none.code().as_str()),
        (404, "verifier_not_found")
    );

    // The verifiers: roles, digests and limits.
    let list = get(addr, "/v1/tenants/beta/verifiers", Some(BETA)).json();
    let roles: Vec<&str> = list["verifiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["completion", "progress"]);
    assert_eq!(list["limits"]["timeout_ms"], 1000);

    // 400: not a packet, a packet over a bound (refused, never cut), a bad deadline.
    let bad = post(
        addr,
        "/v1/tenants/alpha/completion",
        Some(ALPHA),
        b"{\"nope\":1}",
    );
    assert_eq!((bad.status, bad.code().as_str()), (400, "invalid_packet"));
    let long = serde_json::json!({
        "executionId": "e", "iteration": 1, "outputText": "x".repeat(300_000),
        "observations": [], "observedToolCalls": 0
    });
    let over = post(
        addr,
        "/v1/tenants/alpha/completion",
        Some(ALPHA),
        long.to_string().as_bytes(),
    );
    assert_eq!(
        (over.status, over.code().as_str()),
        (400, "invalid_packet"),
        "{}",
        over.text()
    );
    let deadline = request(
        addr,
        "POST",
        "/v1/tenants/alpha/completion",
        Some(ALPHA),
        &[("X-Verdict-Deadline-Ms", "soon")],
        &packet("ready.json"),
    );
    assert_eq!(
        (deadline.status, deadline.code().as_str()),
        (400, "invalid_deadline")
    );
    // 401: no token, a wrong one, another scheme.
    for token in [None, Some("wrong")] {
        let r = post(
            addr,
            "/v1/tenants/alpha/completion",
            token,
            &packet("ready.json"),
        );
        assert_eq!((r.status, r.code().as_str()), (401, "unauthorized"));
    }
    assert_eq!(get(addr, "/metrics", None).status, 401);
    // 403: a tenant's token on the admin's routes.
    let r = post(addr, "/v1/admin/reload", Some(ALPHA), b"");
    assert_eq!((r.status, r.code().as_str()), (403, "forbidden"));
    let r = request(
        addr,
        "PUT",
        "/v1/tenants/alpha/verifiers/completion",
        Some(ALPHA),
        &[],
        b"x",
    );
    assert_eq!((r.status, r.code().as_str()), (403, "forbidden"));
    // 404: an unknown tenant, role or route.
    let r = post(
        addr,
        "/v1/tenants/gamma/completion",
        Some(ADMIN),
        &packet("ready.json"),
    );
    assert_eq!((r.status, r.code().as_str()), (404, "tenant_not_found"));
    let r = request(
        addr,
        "PUT",
        "/v1/tenants/alpha/verifiers/judge",
        Some(ADMIN),
        &[],
        b"x",
    );
    assert_eq!((r.status, r.code().as_str()), (404, "verifier_not_found"));
    let r = get(addr, "/v2/anything", None);
    assert_eq!((r.status, r.code().as_str()), (404, "not_found"));
    let r = get(addr, "/v1/tenants/alpha/completion", Some(ALPHA));
    assert_eq!((r.status, r.code().as_str()), (405, "method_not_allowed"));
    // 413: a body over the packet bound, announced.
    let big = vec![b' '; 2 * 1024 * 1024];
    let r = post(addr, "/v1/tenants/alpha/completion", Some(ALPHA), &big);
    assert_eq!((r.status, r.code().as_str()), (413, "body_too_large"));

    // Metrics: checks by tenant/role/status, durations, fuel, rejections.
    let metrics = get(addr, "/metrics", Some(ADMIN)).text();
    for series in [
        r#"verdict_checks_total{tenant="alpha",role="completion",status="complete"} 1"#,
        r#"verdict_checks_total{tenant="alpha",role="completion",status="not_complete"} 1"#,
        r#"verdict_checks_total{tenant="beta",role="progress",status="progress_key"} 1"#,
        "verdict_check_duration_seconds_bucket",
        "verdict_check_fuel_total",
        "verdict_checks_in_flight",
        r#"verdict_rejections_total{tenant="alpha",reason="invalid_packet"} 2"#,
        "verdict_verifier_load_seconds",
    ] {
        assert!(metrics.contains(series), "{series} missing:\n{metrics}");
    }
    // A refused packet (the long one is parsed where checks run) is no check.
    assert!(!metrics.contains(r#"status="cancelled""#), "{metrics}");
    // The access log names the check.
    let check_id = v["checkId"].as_str().unwrap();
    assert!(
        served.wait_log(
            &format!("check_id={check_id}"),
            std::time::Duration::from_secs(5)
        ),
        "{}",
        served.log()
    );
}

#[test]
fn the_served_openapi_document_is_the_checked_in_file_and_every_path_is_served() {
    let served = Served::start(&config("", ""));
    let file = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/openapi.json"),
    )
    .unwrap();
    let served_doc = get(served.addr, "/v1/openapi.json", None);
    assert_eq!(served_doc.status, 200);
    assert_eq!(served_doc.text(), file);
    let doc = served_doc.json();
    let paths = doc["paths"].as_object().unwrap();
    assert_eq!(paths.len(), 10, "{:?}", paths.keys());
    for (path, ops) in paths {
        for method in ops.as_object().unwrap().keys() {
            let concrete = path
                .replace("{tenant}", "alpha")
                .replace("{role}", "completion")
                .replace("{id}", &"0".repeat(32));
            let r = request(
                served.addr,
                &method.to_uppercase(),
                &concrete,
                Some(ADMIN),
                &[],
                b"",
            );
            // Served: whatever it answers, it is not the unknown-route 404.
            let unknown = r.status == 404 && r.json()["code"] == "not_found";
            assert!(!unknown && r.status != 405, "{method} {path}: {}", r.text());
        }
    }
}

#[test]
fn a_tenants_token_never_reaches_or_names_another_tenant() {
    let served = Served::start(&config("", ""));
    let addr = served.addr;
    // Each token reaches its own artifact root: A42 is ready for alpha only.
    let a = post(
        addr,
        "/v1/tenants/alpha/completion",
        Some(ALPHA),
        &packet("ready.json"),
    );
    assert_eq!(a.json()["status"], "complete");
    let b = post(
        addr,
        "/v1/tenants/beta/completion",
        Some(BETA),
        &packet("ready.json"),
    );
    assert_eq!(b.json()["status"], "not_complete");
    assert_eq!(b.json()["verdict"]["reason"], "artifact A42 is not ready");

    // Alpha's token against beta's routes: the answer of a missing tenant.
    let missing = post(
        addr,
        "/v1/tenants/nobody/completion",
        Some(ALPHA),
        &packet("ready.json"),
    );
    for (method, path) in [
        ("POST", "/v1/tenants/beta/completion"),
        ("POST", "/v1/tenants/beta/progress"),
        ("GET", "/v1/tenants/beta/verifiers"),
    ] {
        let r = request(addr, method, path, Some(ALPHA), &[], &packet("ready.json"));
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(r.body, missing.body, "{path}");
        assert!(!r.text().contains("beta"), "{}", r.text());
    }
    // Metrics: alpha sees its own series and none of beta's.
    let mine = get(addr, "/metrics", Some(ALPHA));
    assert_eq!(mine.status, 200);
    assert!(mine.text().contains(r#"tenant="alpha""#), "{}", mine.text());
    assert!(!mine.text().contains("beta"), "{}", mine.text());
    // Alpha's verifier list names alpha only.
    let list = get(addr, "/v1/tenants/alpha/verifiers", Some(ALPHA)).text();
    assert!(!list.contains("beta"), "{list}");
    // The admin sees both.
    let all = get(addr, "/metrics", Some(ADMIN)).text();
    assert!(all.contains(r#"tenant="beta""#), "{all}");
}

#[test]
fn the_deadline_header_shortens_a_check_but_never_past_the_tenants_timeout() {
    let text = spinning_config(
        "",
        "[tenants.alpha.limits]\ntimeout_ms = 400\nfuel = 100000000000000",
    );
    let served = Served::start_with(&text, &["--log-format", "json"]);
    let spin = |deadline: &str| {
        let r = request(
            served.addr,
            "POST",
            "/v1/tenants/alpha/completion",
            Some(ALPHA),
            &[("X-Verdict-Deadline-Ms", deadline)],
            &packet("ready.json"),
        );
        assert_eq!(r.status, 200, "{}", r.text());
        let v = r.json();
        assert_eq!(v["error"]["code"], "timeout", "{v}");
        v["metrics"]["durationUs"].as_u64().unwrap() / 1000
    };
    // The caller's 100 ms applies; 60 s is capped at the tenant's 400 ms.
    let short = spin("100");
    assert!((90..350).contains(&short), "{short} ms");
    let capped = spin("60000");
    assert!((390..5000).contains(&capped), "{capped} ms");
    // The access log is JSON with the check's fields.
    assert!(
        served.wait_log(
            "\"checkStatus\":\"checker_error\"",
            std::time::Duration::from_secs(5)
        ),
        "{}",
        served.log()
    );
    let line = served
        .log()
        .lines()
        .find(|l| l.contains("\"checkId\""))
        .unwrap()
        .to_owned();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["tenant"], "alpha");
    assert_eq!(v["role"], "completion");
    assert_eq!(v["status"], 200);
    assert_eq!(v["verifierDigest"].as_str().unwrap().len(), 64);
}
