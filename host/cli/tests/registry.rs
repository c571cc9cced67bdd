//! `verdict push`, `pull`, `inspect`, `check` and `demo` with verifiers in
//! a real registry on 127.0.0.1 (Debian's docker-registry, started through
//! `scripts/registry-dev.sh`), interop with skopeo both ways, the cache
//! and `--offline`. Tests print SKIPPED when the registry cannot be
//! installed here.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

#[path = "../../registry/tests/support/dev_registry.rs"]
pub(crate) mod dev_registry;

use crate::support;
use dev_registry::{DevRegistry, files_under};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Instant;

const BUILTINS: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/builtins.rs"));

fn artifact_ready() -> &'static [u8] {
    BUILTINS
        .iter()
        .find(|(name, _)| *name == "artifact-ready")
        .unwrap()
        .1
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The binary, with a private cache and Docker credentials directory, and
/// a dead proxy in the environment (never used for a loopback registry).
fn run(args: &[&str], cache: &Path, docker: &Path) -> Output {
    let mut command = support::command(args, cache);
    command
        .env("DOCKER_CONFIG", docker)
        .env("VERDICT_REGISTRY_TIMEOUT_MS", "20000")
        .env("HTTP_PROXY", "http://127.0.0.1:9")
        .env("HTTPS_PROXY", "http://127.0.0.1:9");
    support::Running::spawn(command).output()
}

/// `verdict push builtin:artifact-ready REF`: the printed digest.
fn push(reference: &str, docker: &Path) -> String {
    let cache = tempfile::tempdir().unwrap();
    let out = run(
        &["push", "builtin:artifact-ready", reference],
        cache.path(),
        docker,
    );
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
    let digest = support::stdout(&out).lines().last().unwrap().to_owned();
    assert!(
        digest.starts_with("sha256:") && digest.len() == 71,
        "{digest}"
    );
    digest
}

fn check(verifier: &str, cache: &Path, docker: &Path, extra: &[&str]) -> Output {
    let examples = support::examples();
    let packet = examples.join("packets/ready.json");
    let artifacts = examples.join("artifacts");
    let mut args = vec![
        "check",
        "--verifier",
        verifier,
        "--packet",
        packet.to_str().unwrap(),
        "--artifacts",
        artifacts.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    run(&args, cache, docker)
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_str(&support::stdout(out))
        .unwrap_or_else(|e| panic!("{e}: {} {}", support::stdout(out), support::stderr(out)))
}

fn skopeo(args: &[&str]) -> Output {
    let out = Command::new("timeout")
        .arg("60")
        .arg("skopeo")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "skopeo {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn pushed_components_are_read_by_skopeo_pulled_and_inspected() {
    let Some(reg) = DevRegistry::start(None) else {
        return;
    };
    let docker = tempfile::tempdir().unwrap();
    let reference = reg.reference("verifiers/artifact-ready:v1");
    let started = Instant::now();
    let digest = push(&reference, docker.path());
    eprintln!("verdict push: {:?}", started.elapsed());

    // skopeo reads the manifest verdict wrote: the wasm artifact layout.
    let docker_ref = format!("docker://{}/verifiers/artifact-ready:v1", reg.addr());
    let raw = skopeo(&["inspect", "--raw", "--tls-verify=false", &docker_ref]).stdout;
    assert_eq!(sha256(&raw), digest, "the printed digest is the manifest's");
    let manifest: serde_json::Value = serde_json::from_slice(&raw).unwrap();
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    assert_eq!(manifest["layers"][0]["digest"], sha256(artifact_ready()));
    let annotations = &manifest["annotations"];
    assert_eq!(annotations["dev.verdict.roles"], "completion");
    assert_eq!(annotations["dev.verdict.wit.package"], "verdict:verifier");
    assert_eq!(annotations["dev.verdict.wit.version"], "0.1.0");
    assert_eq!(
        annotations["dev.verdict.version"],
        env!("CARGO_PKG_VERSION")
    );
    // ... and copies it, layer and all, into an OCI layout.
    let layout = tempfile::tempdir().unwrap();
    let dest = format!("oci:{}:v1", layout.path().display());
    skopeo(&["copy", "--src-tls-verify=false", &docker_ref, &dest]);
    let layer = layout
        .path()
        .join("blobs/sha256")
        .join(&sha256(artifact_ready())[7..]);
    assert_eq!(std::fs::read(layer).unwrap(), artifact_ready());

    // verdict pull writes the same bytes.
    let cache = tempfile::tempdir().unwrap();
    let file = cache.path().join("pulled.wasm");
    let pinned = reg.reference(&format!("verifiers/artifact-ready@{digest}"));
    let out = run(
        &["pull", &pinned, "-o", file.to_str().unwrap()],
        cache.path(),
        docker.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
    assert_eq!(support::stdout(&out).trim(), digest);
    assert_eq!(std::fs::read(&file).unwrap(), artifact_ready());

    // verdict inspect takes the reference.
    let out = run(
        &["inspect", &reference, "--json"],
        cache.path(),
        docker.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
    let info = json(&out);
    assert_eq!(info["rejected"], serde_json::Value::Null);
    assert_eq!(info["oci"]["manifestDigest"], digest);
    assert_eq!(
        info["oci"]["annotations"]["dev.verdict.roles"],
        "completion"
    );
}

#[test]
fn check_resolves_a_tag_once_then_a_second_start_neither_pulls_nor_compiles() {
    let Some(mut reg) = DevRegistry::start(None) else {
        return;
    };
    let docker = tempfile::tempdir().unwrap();
    let digest = push(&reg.reference("verifiers/artifact-ready:v1"), docker.path());
    let cache = tempfile::tempdir().unwrap();

    let started = Instant::now();
    let out = check(
        &reg.reference("verifiers/artifact-ready:v1"),
        cache.path(),
        docker.path(),
        &[],
    );
    eprintln!("first check (pull + compile): {:?}", started.elapsed());
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
    let first = json(&out);
    assert_eq!(first["status"], "complete");
    let layer = sha256(artifact_ready());
    // The checker identity is the component's SHA-256: the layer digest.
    assert_eq!(first["verifierDigest"], layer[7..]);
    assert_eq!(first["oci"]["layerDigest"], layer);
    assert_eq!(first["oci"]["manifestDigest"], digest);
    assert_eq!(
        first["oci"]["resolved"],
        reg.reference(&format!("verifiers/artifact-ready@{digest}"))
    );
    assert_eq!(
        (&first["oci"]["pulled"], &first["oci"]["compiled"]),
        (&true.into(), &true.into())
    );

    // The registry is gone; the pinned digest loads from the caches.
    reg.stop();
    let pinned = reg.reference(&format!("verifiers/artifact-ready@{digest}"));
    let started = Instant::now();
    let out = check(&pinned, cache.path(), docker.path(), &[]);
    eprintln!("second start (cache hit): {:?}", started.elapsed());
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
    let second = json(&out);
    assert_eq!(second["status"], "complete");
    assert_eq!(
        (&second["oci"]["pulled"], &second["oci"]["compiled"]),
        (&false.into(), &false.into())
    );
    assert!(
        support::stderr(&out).contains("from the local cache, not pulled")
            && support::stderr(&out).contains("compile cache hit, not compiled"),
        "{}",
        support::stderr(&out)
    );
    // Offline, the tag is what it resolved to last.
    let out = check(
        &reg.reference("verifiers/artifact-ready:v1"),
        cache.path(),
        docker.path(),
        &["--offline"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
    assert_eq!(json(&out)["oci"]["manifestDigest"], digest);
    assert!(
        files_under(cache.path())
            .iter()
            .all(|p| !p.to_string_lossy().contains(".partial-"))
    );
}

#[test]
fn offline_with_an_empty_cache_and_wrong_or_tampered_digests_fail_clearly() {
    let docker = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let out = check(
        "oci://127.0.0.1:9/verifiers/x:v1",
        cache.path(),
        docker.path(),
        &["--offline"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", support::stderr(&out));
    let err = support::stderr(&out);
    assert!(
        err.contains("is not in the local cache") && err.contains("--offline"),
        "{err}"
    );

    let Some(reg) = DevRegistry::start(None) else {
        return;
    };
    let digest = push(&reg.reference("verifiers/artifact-ready:v1"), docker.path());
    let wrong = sha256(b"not the manifest");
    let out = check(
        &reg.reference(&format!("verifiers/artifact-ready@{wrong}")),
        cache.path(),
        docker.path(),
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", support::stderr(&out));
    assert!(
        support::stderr(&out).contains(&wrong),
        "{}",
        support::stderr(&out)
    );

    // A blob changed in the registry's storage.
    let layer = sha256(artifact_ready());
    let mut tampered = artifact_ready().to_vec();
    let at = tampered.len() / 2;
    tampered[at] ^= 1;
    std::fs::write(reg.blob_file(&layer), &tampered).unwrap();
    let out = check(
        &reg.reference(&format!("verifiers/artifact-ready@{digest}")),
        cache.path(),
        docker.path(),
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", support::stderr(&out));
    let err = support::stderr(&out);
    assert!(
        err.contains(&layer) && err.contains(&sha256(&tampered)),
        "{err}"
    );
    assert!(
        files_under(&cache.path().join("oci")).is_empty(),
        "nothing cached"
    );
}

#[test]
fn a_401_says_which_registry_and_how_to_log_in_and_docker_credentials_work() {
    let Some(reg) = DevRegistry::start(Some(("ci", "pa55"))) else {
        return;
    };
    let docker = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let reference = reg.reference("verifiers/artifact-ready:v1");
    let out = run(
        &["push", "builtin:artifact-ready", &reference],
        cache.path(),
        docker.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = support::stderr(&out);
    assert!(
        err.contains(&format!("{} answered 401", reg.addr())),
        "{err}"
    );
    assert!(
        err.contains(&format!("docker login {}", reg.addr())),
        "{err}"
    );
    // base64("ci:pa55")
    std::fs::write(
        docker.path().join("config.json"),
        format!(
            r#"{{"auths":{{"{}":{{"auth":"Y2k6cGE1NQ=="}}}}}}"#,
            reg.addr()
        ),
    )
    .unwrap();
    let digest = push(&reference, docker.path());
    let out = check(&reference, cache.path(), docker.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
    assert_eq!(json(&out)["oci"]["manifestDigest"], digest);
}

/// An OCI image layout written here (the wasm artifact layout, as `wkg`
/// writes it), copied into the registry by skopeo.
fn write_layout(dir: &Path, wasm: &[u8]) -> String {
    let blobs = dir.join("blobs/sha256");
    std::fs::create_dir_all(&blobs).unwrap();
    let put = |bytes: &[u8]| {
        let digest = sha256(bytes);
        std::fs::write(blobs.join(&digest[7..]), bytes).unwrap();
        digest
    };
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": "wasm", "os": "wasip2", "layerDigests": [sha256(wasm)],
    }))
    .unwrap();
    let manifest = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.wasm.config.v0+json", "digest": put(&config), "size": config.len()},
        "layers": [{"mediaType": "application/wasm", "digest": put(wasm), "size": wasm.len()}],
    }))
    .unwrap();
    let digest = put(&manifest);
    std::fs::write(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
    let index = serde_json::json!({"schemaVersion": 2, "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": digest, "size": manifest.len(),
        "annotations": {"org.opencontainers.image.ref.name": "v1"},
    }]});
    std::fs::write(dir.join("index.json"), index.to_string()).unwrap();
    digest
}

#[test]
fn a_component_copied_in_by_skopeo_from_an_oci_layout_is_run_by_check() {
    let Some(reg) = DevRegistry::start(None) else {
        return;
    };
    let layout = tempfile::tempdir().unwrap();
    let digest = write_layout(layout.path(), artifact_ready());
    let src = format!("oci:{}:v1", layout.path().display());
    let dest = format!("docker://{}/layout/artifact-ready:v1", reg.addr());
    skopeo(&["copy", "--dest-tls-verify=false", &src, &dest]);
    let docker = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let out = check(
        &reg.reference("layout/artifact-ready:v1"),
        cache.path(),
        docker.path(),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", support::stderr(&out));
    let value = json(&out);
    assert_eq!(value["status"], "complete");
    assert_eq!(value["oci"]["manifestDigest"], digest);
}

#[test]
fn the_demo_runs_its_verifier_from_the_registry_then_offline_from_the_cache() {
    let Some(mut reg) = DevRegistry::start(None) else {
        return;
    };
    let docker = tempfile::tempdir().unwrap();
    let reference = reg.reference("verifiers/artifact-ready:demo");
    let digest = push(&reference, docker.path());
    let cache = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = run(
        &["demo", "--verifier", &reference],
        cache.path(),
        docker.path(),
    );
    eprintln!("demo, verifier pulled: {:?}", started.elapsed());
    let text = support::stdout(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        support::stderr(&out)
    );
    assert!(
        text.contains("verdict: true (complete) - artifact A42 is ready"),
        "{text}"
    );
    assert!(
        support::stderr(&out).contains(&format!("@{digest}")),
        "{}",
        support::stderr(&out)
    );
    assert!(
        support::stderr(&out).contains("pulled"),
        "{}",
        support::stderr(&out)
    );

    reg.stop();
    let started = Instant::now();
    let out = run(
        &["demo", "--offline", "--verifier", &reference],
        cache.path(),
        docker.path(),
    );
    eprintln!("demo, offline from the cache: {:?}", started.elapsed());
    let text = support::stdout(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        support::stderr(&out)
    );
    assert!(text.contains("outcome: completed (exit 0)"), "{text}");
    let err = support::stderr(&out);
    assert!(
        err.contains("from the local cache, not pulled") && err.contains("not compiled"),
        "{err}"
    );
}

/// `verdict run` of a configuration whose tenant names `completion`,
/// with `tenant` lines in the tenant's table and `top` sections before the
/// tenants: exit code and stderr.
fn run_config(
    completion: &str,
    tenant: &str,
    top: &str,
    dirs: (&Path, &Path),
) -> (Option<i32>, String) {
    let setup = support::Setup::new();
    let text = format!(
        "{}{top}\n[loop_policy]\nmax_recovery_attempts = 1\n\n[tenants.acme]\nartifact_root = \"workspace\"\ncompletion = {completion:?}\n{tenant}\n",
        support::base_config("http://127.0.0.1:9/v1", 2)
    );
    let config = setup.write("verdict.toml", &text);
    let out = run(
        &["run", "--config", config.to_str().unwrap(), "hi"],
        dirs.0,
        dirs.1,
    );
    (out.status.code(), support::stderr(&out))
}

#[test]
fn the_configuration_pins_allows_and_refuses_digests() {
    let docker = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let dirs = (cache.path(), docker.path());
    let d = |c: char| format!("sha256:{}", c.to_string().repeat(64));
    let (code, err) = run_config("oci://127.0.0.1:9/a@sha256:12", "", "", dirs);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("tenants.acme.completion") && err.contains("not a digest"),
        "{err}"
    );
    let allow = format!("allowed_digests = [\"{}\", \"sha256:xyz\"]", d('a'));
    let (code, err) = run_config("oci://127.0.0.1:9/a:v1", &allow, "", dirs);
    assert_eq!(code, Some(2));
    assert!(err.contains("tenants.acme.allowed_digests[1]"), "{err}");
    let allow = format!("allowed_digests = [\"{}\"]", d('a'));
    let pinned = format!("oci://127.0.0.1:9/a@{}", d('b'));
    let (code, err) = run_config(&pinned, &allow, "", dirs);
    assert_eq!(code, Some(2));
    assert!(
        err.contains(&d('b')) && err.contains("not in this tenant's allowed_digests"),
        "{err}"
    );
    let registries = "\n[registries.\"127.0.0.1:9\"]\nusername = \"ci\"\n";
    let (code, err) = run_config("oci://127.0.0.1:9/a:v1", "", registries, dirs);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("registries.127.0.0.1:9.username: needs password_env"),
        "{err}"
    );

    // A tag that resolves to a digest the tenant does not allow.
    let Some(reg) = DevRegistry::start(None) else {
        return;
    };
    let reference = reg.reference("verifiers/artifact-ready:v1");
    let digest = push(&reference, docker.path());
    let (code, err) = run_config(&reference, &allow, "", dirs);
    assert_eq!(code, Some(2));
    assert!(
        err.contains(&digest) && err.contains(&d('a')),
        "names both digests: {err}"
    );
}

#[test]
fn a_registry_that_hangs_fails_the_load_within_the_bound_and_caches_nothing() {
    let silent = dev_registry::Silent::start();
    let cache = tempfile::tempdir().unwrap();
    let docker = tempfile::tempdir().unwrap();
    let examples = support::examples();
    let packet = examples.join("packets/ready.json");
    let reference = format!("oci://{}/verifiers/x:v1", silent.addr);
    let mut command = support::command(
        &[
            "check",
            "--verifier",
            &reference,
            "--packet",
            packet.to_str().unwrap(),
        ],
        cache.path(),
    );
    command
        .env("DOCKER_CONFIG", docker.path())
        .env("VERDICT_REGISTRY_TIMEOUT_MS", "1500");
    let started = Instant::now();
    let out = support::Running::spawn(command).output();
    let took = started.elapsed();
    eprintln!("check against a silent registry: {took:?}");
    assert_eq!(out.status.code(), Some(2), "{}", support::stderr(&out));
    let err = support::stderr(&out);
    assert!(
        err.contains("did not finish within 1500 ms") && err.contains(&reference),
        "{err}"
    );
    assert!(took < std::time::Duration::from_secs(6), "{took:?}");
    assert!(files_under(&cache.path().join("oci")).is_empty());
}

#[test]
fn run_json_reports_what_the_tag_resolved_to() {
    use verdict::fake::{Script, ScriptedTurn};
    let Some(reg) = DevRegistry::start(None) else {
        return;
    };
    let docker = tempfile::tempdir().unwrap();
    let reference = reg.reference("verifiers/artifact-ready:v1");
    let digest = push(&reference, docker.path());
    let fake = support::Fake::start(Script::new(vec![
        ScriptedTurn::text("A42 is ready."),
        ScriptedTurn::tool_call("read-1", "read_artifact", serde_json::json!({"id": "A42"})),
        ScriptedTurn::text("I read A42: it is ready."),
    ]));
    let setup = support::Setup::new();
    let config = support::base_config(&fake.base_url(), 6)
        + &support::verified(2).replace("builtin:artifact-ready", &reference);
    let path = setup.write("verdict.toml", &config);
    let out = run(
        &[
            "run",
            "--config",
            path.to_str().unwrap(),
            "--json",
            "Verify A42.",
        ],
        &setup.path("cache"),
        docker.path(),
    );
    let value = json(&out);
    assert_eq!(out.status.code(), Some(0), "{value}");
    assert_eq!(value["outcome"], "completed");
    let oci = &value["oci"][0];
    assert_eq!(
        (&oci["tenant"], &oci["role"]),
        (&"acme".into(), &"completion".into())
    );
    assert_eq!(oci["ref"], reference);
    assert_eq!(oci["manifestDigest"], digest);
    assert_eq!(oci["layerDigest"], sha256(artifact_ready()));
}

#[test]
fn a_configured_registry_over_tls_with_a_relative_ca_file_and_password_env() {
    use verdict::fake::{Script, ScriptedTurn};
    use verdict::registry::{ComponentInfo, OciRef, Options, Registry, RegistrySettings};
    let Some(reg) = DevRegistry::start_tls(Some(("ci", "pa55"))) else {
        return;
    };
    let settings = RegistrySettings {
        username: Some("ci".into()),
        password: Some("pa55".into()),
        insecure: Some(false),
        ca_file: Some(reg.certificate()),
        ..RegistrySettings::default()
    };
    let reference = reg.reference("verifiers/artifact-ready:tls");
    let pushed = Registry::new(Options {
        registries: [(reg.addr(), settings)].into(),
        ..Options::default()
    })
    .push_blocking(
        &OciRef::parse(&reference).unwrap(),
        artifact_ready(),
        &ComponentInfo::default(),
    )
    .unwrap();

    let fake = support::Fake::start(Script::new(vec![
        ScriptedTurn::text("A42 is ready."),
        ScriptedTurn::tool_call("read-1", "read_artifact", serde_json::json!({"id": "A42"})),
        ScriptedTurn::text("I read A42: it is ready."),
    ]));
    let setup = support::Setup::new();
    std::fs::copy(reg.certificate(), setup.path("registry.pem")).unwrap();
    let config = support::base_config(&fake.base_url(), 6)
        + &format!(
            "\n[registries.\"{}\"]\nusername = \"ci\"\npassword_env = \"VERDICT_TEST_REGISTRY_PASSWORD\"\ninsecure = false\nca_file = \"registry.pem\"\n",
            reg.addr()
        )
        + &support::verified(2).replace("builtin:artifact-ready", &reference);
    let path = setup.write("verdict.toml", &config);
    let docker = tempfile::tempdir().unwrap();
    let mut command = support::command(
        &[
            "run",
            "--config",
            path.to_str().unwrap(),
            "--json",
            "Verify A42.",
        ],
        &setup.path("cache"),
    );
    command
        .env("DOCKER_CONFIG", docker.path())
        .env("VERDICT_TEST_REGISTRY_PASSWORD", "pa55");
    let out = support::Running::spawn(command).output();
    let value = json(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{value} {}",
        support::stderr(&out)
    );
    assert_eq!(value["oci"][0]["manifestDigest"], pushed.digest);
}
