//! Credentials: `[registries."HOST"]`, else the Docker credentials file,
//! else anonymous.

use crate::error::RegistryError;
use crate::settings::Options;
use base64::Engine;
use oci_client::secrets::RegistryAuth;
use std::path::PathBuf;

/// Credentials for one registry and where they came from.
pub(crate) struct Credentials {
    pub auth: RegistryAuth,
    /// `None` for anonymous.
    pub source: Option<String>,
}

/// The Docker credentials file: `$DOCKER_CONFIG/config.json`, else
/// `~/.docker/config.json`.
pub fn docker_config_path() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("DOCKER_CONFIG")
        .map(|d| d.join("config.json"))
        .or_else(|| env("HOME").map(|h| h.join(".docker").join("config.json")))
}

/// What to tell a user a registry refused: how to log in to it.
pub(crate) fn login_hint(registry: &str) -> String {
    format!(
        "log in with `docker login {registry}` (verdict reads auths in $DOCKER_CONFIG/config.json or ~/.docker/config.json), or set username and password_env in [registries.\"{registry}\"] of the configuration"
    )
}

pub(crate) fn credentials(options: &Options, registry: &str) -> Result<Credentials, RegistryError> {
    let bad = |why: String| RegistryError::Credentials {
        registry: registry.to_owned(),
        why,
    };
    if let Some(settings) = options.registries.get(registry)
        && let Some(user) = &settings.username
    {
        let (password, source) = match (&settings.password, &settings.password_env) {
            (Some(p), _) => (p.clone(), format!("[registries.\"{registry}\"] password")),
            (None, Some(var)) => (
                std::env::var(var).map_err(|_| {
                    bad(format!(
                        "password_env names {var}, which is not set (or not UTF-8)"
                    ))
                })?,
                format!("[registries.\"{registry}\"] password_env = {var}"),
            ),
            (None, None) => return Err(bad("username without password_env".to_owned())),
        };
        return Ok(Credentials {
            auth: RegistryAuth::Basic(user.clone(), password),
            source: Some(source),
        });
    }
    let path = options.docker_config.clone().or_else(docker_config_path);
    if let Some(path) = path
        && let Some((user, password)) = from_docker_config(&path, registry).map_err(bad)?
    {
        return Ok(Credentials {
            auth: RegistryAuth::Basic(user, password),
            source: Some(path.display().to_string()),
        });
    }
    Ok(Credentials {
        auth: RegistryAuth::Anonymous,
        source: None,
    })
}

/// The `auths` entry of `registry` in a Docker credentials file, if the
/// file exists and has one. Keys may carry a scheme and a path
/// (`https://HOST/v1/`); credential helpers are not consulted.
fn from_docker_config(
    path: &std::path::Path,
    registry: &str,
) -> Result<Option<(String, String)>, String> {
    let text = match std::fs::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    if text.len() > 1024 * 1024 {
        return Err(format!("{} is over 1 MiB", path.display()));
    }
    let json: serde_json::Value = serde_json::from_slice(&text)
        .map_err(|e| format!("{} is not valid JSON: {e}", path.display()))?;
    let Some(auths) = json.get("auths").and_then(|a| a.as_object()) else {
        return Ok(None);
    };
    let host_of = |key: &str| {
        let key = key
            .strip_prefix("https://")
            .or_else(|| key.strip_prefix("http://"))
            .unwrap_or(key);
        key.split('/').next().unwrap_or(key).to_owned()
    };
    let Some(entry) = auths
        .iter()
        .find(|(key, _)| host_of(key) == registry)
        .map(|(_, v)| v)
    else {
        return Ok(None);
    };
    if let Some(auth) = entry.get("auth").and_then(|a| a.as_str()) {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(auth.trim())
            .map_err(|_| {
                format!(
                    "{}: auths.\"{registry}\".auth is not base64",
                    path.display()
                )
            })?;
        let text = String::from_utf8(decoded)
            .map_err(|_| format!("{}: auths.\"{registry}\".auth is not UTF-8", path.display()))?;
        let Some((user, password)) = text.split_once(':') else {
            return Err(format!(
                "{}: auths.\"{registry}\".auth is not base64 of user:password",
                path.display()
            ));
        };
        return Ok(Some((user.to_owned(), password.to_owned())));
    }
    let field = |k: &str| entry.get(k).and_then(|v| v.as_str()).map(str::to_owned);
    Ok(field("username").zip(field("password")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn docker_config_auths_are_found_by_host_with_or_without_scheme() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        // base64("alice:s3cr:et")
        std::fs::write(
            &path,
            r#"{"auths":{"https://reg.example:5000/v1/":{"auth":"YWxpY2U6czNjcjpldA=="},"other":{"username":"u","password":"p"}}}"#,
        )
        .unwrap();
        assert_eq!(
            from_docker_config(&path, "reg.example:5000").unwrap(),
            Some(("alice".into(), "s3cr:et".into()))
        );
        assert_eq!(
            from_docker_config(&path, "other").unwrap(),
            Some(("u".into(), "p".into()))
        );
        assert_eq!(from_docker_config(&path, "nope").unwrap(), None);
        assert_eq!(
            from_docker_config(&dir.path().join("absent"), "x").unwrap(),
            None
        );
        std::fs::write(&path, r#"{"auths":{"h":{"auth":"!!"}}}"#).unwrap();
        assert!(
            from_docker_config(&path, "h")
                .unwrap_err()
                .contains("not base64")
        );
    }
}
