//! `verdict serve` with a tenant's verifier in a registry: resolved to its
//! digest when the service starts, and served.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use super::client::post;
use super::server::{ALPHA, Served, config, packet};
use crate::registry::dev_registry::DevRegistry;
use sha2::{Digest, Sha256};
use std::process::Command;

const BUILTINS: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/builtins.rs"));

#[test]
fn a_tenants_verifier_pinned_in_a_registry_is_served() {
    let Some(reg) = DevRegistry::start(None) else {
        return;
    };
    let docker = tempfile::tempdir().unwrap();
    let reference = reg.reference("verifiers/served:v1");
    let pushed = Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args(["push", "builtin:artifact-ready", &reference])
        .env("DOCKER_CONFIG", docker.path())
        .output()
        .unwrap();
    assert!(
        pushed.status.success(),
        "{}",
        String::from_utf8_lossy(&pushed.stderr)
    );
    let digest = String::from_utf8_lossy(&pushed.stdout)
        .lines()
        .last()
        .unwrap()
        .to_owned();
    let pinned = reg.reference(&format!("verifiers/served@{digest}"));
    // alpha's completion from the registry, pinned (its builtin line is
    // replaced), with one ready instance.
    let served = Served::start(&config("", "ready_instances = 1").replace(
        "completion = \"builtin:artifact-ready\"\ntoken_hash",
        &format!("completion = \"{pinned}\"\ntoken_hash"),
    ));
    let reply = post(
        served.addr,
        "/v1/tenants/alpha/completion",
        Some(ALPHA),
        &packet("ready.json"),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    let answer = reply.json();
    assert_eq!(answer["status"], "complete");
    let bytes = BUILTINS
        .iter()
        .find(|(name, _)| *name == "artifact-ready")
        .unwrap()
        .1;
    assert_eq!(answer["verifierDigest"], hex::encode(Sha256::digest(bytes)));
}
