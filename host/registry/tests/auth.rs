//! A registry with htpasswd basic auth: 401s that say which registry and
//! how to log in; credentials from the configuration or the Docker file.

use super::support::DevRegistry;
use super::{component, info};
use std::collections::BTreeMap;
use std::time::Duration;
use verdict_registry::{OciRef, Options, Registry, RegistryError, RegistrySettings};

fn with(settings: Option<RegistrySettings>, registry: &str, docker: &std::path::Path) -> Registry {
    Registry::new(Options {
        registries: settings
            .map(|s| BTreeMap::from([(registry.to_owned(), s)]))
            .unwrap_or_default(),
        timeout: Duration::from_secs(20),
        docker_config: Some(docker.to_owned()),
        ..Options::default()
    })
}

#[test]
fn basic_auth_failures_say_which_registry_and_how_to_log_in() {
    let Some(reg) = DevRegistry::start(Some(("alice", "s3cret"))) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let docker = dir.path().join("config.json");
    let tag = OciRef::parse(&reg.reference("team/check:v1")).unwrap();
    let bytes = component(7, 1000);

    // No credentials at all.
    let err = with(None, &reg.addr(), &docker)
        .push_blocking(&tag, &bytes, &info())
        .unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(
            err,
            RegistryError::Unauthorized {
                credentials: None,
                ..
            }
        ),
        "{text}"
    );
    assert!(text.contains(&reg.addr()) && text.contains("401"), "{text}");
    assert!(
        text.contains(&format!("docker login {}", reg.addr())),
        "{text}"
    );
    assert!(
        text.contains(&format!("[registries.\"{}\"]", reg.addr())),
        "{text}"
    );

    // A wrong password from the configuration's variable (PATH: set, and
    // surely not the password).
    let var = "PATH";
    let settings = RegistrySettings {
        username: Some("alice".into()),
        password_env: Some(var.into()),
        ..RegistrySettings::default()
    };
    let err = with(Some(settings), &reg.addr(), &docker)
        .fetch_blocking(&tag, &[])
        .unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(
            err,
            RegistryError::Unauthorized {
                credentials: Some(_),
                ..
            }
        ),
        "{text}"
    );
    assert!(
        text.contains(var),
        "names where the rejected credentials came from: {text}"
    );

    // Right password in the Docker credentials file: push and pull work.
    std::fs::write(
        &docker,
        format!(
            r#"{{"auths":{{"{}":{{"auth":"YWxpY2U6czNjcmV0"}}}}}}"#, // alice:s3cret
            reg.addr()
        ),
    )
    .unwrap();
    let pushed = with(None, &reg.addr(), &docker)
        .push_blocking(&tag, &bytes, &info())
        .unwrap();
    let pulled = with(None, &reg.addr(), &docker)
        .fetch_blocking(&tag, &[])
        .unwrap();
    assert_eq!(
        (pulled.digest, pulled.bytes),
        (pushed.digest.clone(), bytes)
    );

    // The configuration's credentials win over the Docker file's.
    std::fs::remove_file(&docker).unwrap();
    let settings = RegistrySettings {
        username: Some("alice".into()),
        password: Some("s3cret".into()),
        ..RegistrySettings::default()
    };
    let pulled = with(Some(settings), &reg.addr(), &docker)
        .fetch_blocking(&tag, &[])
        .unwrap();
    assert_eq!(pulled.digest, pushed.digest);
}

#[test]
fn an_unset_password_variable_is_named() {
    let settings = RegistrySettings {
        username: Some("alice".into()),
        password_env: Some("VERDICT_TEST_UNSET_VARIABLE_FOR_SURE".into()),
        ..RegistrySettings::default()
    };
    let r = OciRef::parse("oci://127.0.0.1:9/a:v1").unwrap();
    let err = with(
        Some(settings),
        "127.0.0.1:9",
        std::path::Path::new("/nonexistent"),
    )
    .fetch_blocking(&r, &[])
    .unwrap_err();
    assert!(matches!(err, RegistryError::Credentials { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("VERDICT_TEST_UNSET_VARIABLE_FOR_SURE"),
        "{err}"
    );
}

#[test]
fn tls_with_the_registry_certificate_as_ca_file_and_basic_auth() {
    let Some(reg) = DevRegistry::start_tls(Some(("alice", "s3cret"))) else {
        return;
    };
    let tag = OciRef::parse(&reg.reference("team/check:tls")).unwrap();
    let bytes = component(9, 5000);
    let tls = |ca_file: Option<std::path::PathBuf>| RegistrySettings {
        username: Some("alice".into()),
        password: Some("s3cret".into()),
        // TLS although on loopback.
        insecure: Some(false),
        ca_file,
        ..RegistrySettings::default()
    };
    let none = std::path::Path::new("/nonexistent");
    let pushed = with(Some(tls(Some(reg.certificate()))), &reg.addr(), none)
        .push_blocking(&tag, &bytes, &info())
        .unwrap();
    let pulled = with(Some(tls(Some(reg.certificate()))), &reg.addr(), none)
        .fetch_blocking(&tag, &[])
        .unwrap();
    assert_eq!((pulled.digest, pulled.bytes), (pushed.digest, bytes));
    // Without the certificate the registry is not trusted.
    let err = with(Some(tls(None)), &reg.addr(), none)
        .fetch_blocking(&tag, &[])
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, RegistryError::Connect { .. }), "{text}");
    assert!(text.to_lowercase().contains("certificate"), "{text}");
    eprintln!("untrusted: {text}");
    // A ca_file that is not PEM is named.
    let not_pem = reg.dir.path().join("not-pem.txt");
    std::fs::write(&not_pem, "not a certificate").unwrap();
    let err = with(Some(tls(Some(not_pem))), &reg.addr(), none)
        .fetch_blocking(&tag, &[])
        .unwrap_err();
    assert!(err.to_string().contains("no PEM certificate"), "{err}");
}
