//! What the client refuses: tampered blobs, wrong digests, registries that
//! hang or stall mid-blob — bounded, with nothing left in the cache.

use super::support::{DevRegistry, Silent, files_under};
use super::{client, component, info};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};
use verdict_registry::{OciRef, Options, Registry, RegistryError, sha256};

#[test]
fn a_tampered_blob_is_refused_naming_both_digests_and_not_cached() {
    let Some(reg) = DevRegistry::start(None) else {
        return;
    };
    let bytes = component(4, 50_000);
    let tag = OciRef::parse(&reg.reference("team/check:v1")).unwrap();
    let pushed = client(None).push_blocking(&tag, &bytes, &info()).unwrap();
    // Same length, other content, in the registry's own storage.
    let mut tampered = bytes.clone();
    tampered[40_000] ^= 0xff;
    std::fs::write(reg.blob_file(&pushed.layer_digest), &tampered).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let err = client(Some(cache.path()))
        .fetch_blocking(&tag, &[])
        .unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, RegistryError::DigestMismatch { what: "layer", .. }),
        "{text}"
    );
    assert!(text.contains(&pushed.layer_digest), "{text}");
    assert!(text.contains(&sha256(&tampered)), "{text}");
    assert!(
        files_under(cache.path()).is_empty(),
        "{:?}",
        files_under(cache.path())
    );
}

#[test]
fn a_tampered_manifest_and_an_unknown_digest_are_refused() {
    let Some(reg) = DevRegistry::start(None) else {
        return;
    };
    let tag = OciRef::parse(&reg.reference("team/check:v1")).unwrap();
    let pushed = client(None)
        .push_blocking(&tag, &component(5, 1000), &info())
        .unwrap();
    // A digest the registry does not hold.
    let wrong = sha256(b"something else");
    let pinned = OciRef::parse(&reg.reference(&format!("team/check@{wrong}"))).unwrap();
    let err = client(None).fetch_blocking(&pinned, &[]).unwrap_err();
    assert!(matches!(err, RegistryError::NotFound { .. }), "{err}");
    assert!(err.to_string().contains(&wrong), "{err}");
    // The manifest's stored bytes changed under its digest.
    let file = reg.blob_file(&pushed.digest);
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace("\"schemaVersion\":2", "\"schemaVersion\": 2"),
    )
    .unwrap();
    let by_digest =
        OciRef::parse(&reg.reference(&format!("team/check@{}", pushed.digest))).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let err = client(Some(cache.path()))
        .fetch_blocking(&by_digest, &[])
        .unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, RegistryError::DigestMismatch { .. }),
        "{text}"
    );
    assert!(
        text.contains(&pushed.digest),
        "names the pinned digest: {text}"
    );
    assert!(files_under(cache.path()).is_empty());
}

fn bounded(ms: u64, cache: &std::path::Path) -> Registry {
    Registry::new(Options {
        cache_dir: Some(cache.to_owned()),
        timeout: Duration::from_millis(ms),
        connect_timeout: Duration::from_millis(ms),
        docker_config: Some("/nonexistent".into()),
        ..Options::default()
    })
}

#[test]
fn a_registry_that_never_answers_fails_within_the_bound() {
    let silent = Silent::start();
    let cache = tempfile::tempdir().unwrap();
    let r = OciRef::parse(&format!("oci://{}/team/check:v1", silent.addr)).unwrap();
    let started = Instant::now();
    let err = bounded(1500, cache.path())
        .fetch_blocking(&r, &[])
        .unwrap_err();
    let took = started.elapsed();
    eprintln!("silent registry refused after {took:?}");
    assert!(matches!(err, RegistryError::Timeout { .. }), "{err}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(files_under(cache.path()).is_empty());
}

/// A registry that serves a wasm manifest, then half of the layer, then
/// stalls with the connection open (`stall`) or closes it (dies).
fn stalling_registry(layer: Vec<u8>, stall: bool) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let config = br#"{"architecture":"wasm","os":"wasip2","layerDigests":[]}"#.to_vec();
    let manifest = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.wasm.config.v0+json", "digest": sha256(&config), "size": config.len()},
        "layers": [{"mediaType": "application/wasm", "digest": sha256(&layer), "size": layer.len()}],
    }))
    .unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let (manifest, layer) = (manifest.clone(), layer.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
                    loop {
                        let mut header = String::new();
                        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                            break;
                        }
                    }
                    if path.contains("/blobs/") {
                        let head = format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\n\r\n",
                            layer.len()
                        );
                        let _ = stream.write_all(head.as_bytes());
                        let _ = stream.write_all(&layer[..layer.len() / 2]);
                        let _ = stream.flush();
                        if stall {
                            // Stalls mid-blob, connection open.
                            std::thread::sleep(Duration::from_secs(30));
                        }
                        return;
                    }
                    let (ctype, body): (&str, &[u8]) = if path.contains("/manifests/") {
                        ("application/vnd.oci.image.manifest.v1+json", &manifest)
                    } else {
                        ("application/json", b"{}")
                    };
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nDocker-Content-Digest: {}\r\nContent-Length: {}\r\n\r\n",
                        sha256(body),
                        body.len()
                    );
                    let _ = stream.write_all(head.as_bytes());
                    let _ = stream.write_all(body);
                }
            });
        }
    });
    addr
}

#[test]
fn a_registry_that_stalls_mid_blob_fails_within_the_bound_and_leaves_no_partial_file() {
    let addr = stalling_registry(component(6, 400_000), true);
    let cache = tempfile::tempdir().unwrap();
    let r = OciRef::parse(&format!("oci://{addr}/team/check:v1")).unwrap();
    let started = Instant::now();
    let err = bounded(2000, cache.path())
        .fetch_blocking(&r, &[])
        .unwrap_err();
    let took = started.elapsed();
    eprintln!("stalled blob refused after {took:?}");
    assert!(matches!(err, RegistryError::Timeout { .. }), "{err}");
    assert!(took < Duration::from_secs(6), "{took:?}");
    assert!(
        files_under(cache.path()).is_empty(),
        "{:?}",
        files_under(cache.path())
    );
}

#[test]
fn a_registry_that_dies_mid_blob_fails_and_leaves_no_partial_file() {
    let addr = stalling_registry(component(8, 400_000), false);
    let cache = tempfile::tempdir().unwrap();
    let r = OciRef::parse(&format!("oci://{addr}/team/check:v1")).unwrap();
    let started = Instant::now();
    let err = bounded(5000, cache.path())
        .fetch_blocking(&r, &[])
        .unwrap_err();
    let took = started.elapsed();
    eprintln!("dead blob refused after {took:?}");
    assert!(
        err.to_string().contains("the layer download failed"),
        "{err}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(
        files_under(cache.path()).is_empty(),
        "{:?}",
        files_under(cache.path())
    );
}
