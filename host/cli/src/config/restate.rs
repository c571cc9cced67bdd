//! `[restate]`: where the Restate server's ingress and admin APIs are,
//! where `verdict worker` listens and is reached, and which requests it
//! serves (Restate's request identity, TLS). Read by `worker`, `submit`
//! and `status`; other commands ignore it.

use super::locate::Seg;
use super::{ConfigError, ConfigFile};
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use verdict::durable::RequestIdentity;

/// The default ingress (Restate's default port).
pub const DEFAULT_INGRESS: &str = "http://127.0.0.1:8080";
/// The default admin API (Restate's default port).
pub const DEFAULT_ADMIN: &str = "http://127.0.0.1:9070";
/// Where a worker listens by default (the port Restate's docs use).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9080";

/// `[restate]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestateSection {
    /// The ingress base URL (default `http://127.0.0.1:8080`).
    #[serde(default)]
    pub ingress: Option<String>,
    /// The admin API base URL (default `http://127.0.0.1:9070`).
    #[serde(default)]
    pub admin: Option<String>,
    /// Where `verdict worker` listens (default `127.0.0.1:9080`).
    #[serde(default)]
    pub listen: Option<String>,
    /// The URL Restate reaches the worker at (default
    /// `http://LISTEN`, `https://LISTEN` with TLS).
    #[serde(default)]
    pub advertise: Option<String>,
    /// The request-identity public keys (`publickeyv1_…`) whose signed
    /// requests the worker serves.
    #[serde(default)]
    pub identity_keys: Option<Vec<String>>,
    /// Serve unsigned requests (a development worker on loopback only).
    #[serde(default)]
    pub allow_unsigned: Option<bool>,
    /// The worker's TLS certificate chain (PEM; with `tls_key`).
    #[serde(default)]
    pub tls_cert: Option<String>,
    /// The worker's TLS private key (PEM; with `tls_cert`).
    #[serde(default)]
    pub tls_key: Option<String>,
}

/// Only `[restate]`; every other section is someone else's.
#[derive(Debug, Clone, Deserialize)]
struct RestateConfig {
    #[serde(default)]
    restate: RestateSection,
}

/// Where Restate and the worker are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestateSettings {
    /// The ingress base URL.
    pub ingress: String,
    /// The admin API base URL.
    pub admin: String,
    /// Where the worker listens.
    pub listen: SocketAddr,
    /// The URL Restate reaches the worker at (`None`: `http://` or
    /// `https://` and the address the worker is bound to).
    pub advertise: Option<String>,
    /// Which requests the worker serves (checked against the listen
    /// address when the worker starts).
    pub identity: RequestIdentity,
    /// The worker's TLS certificate chain and key, resolved against the
    /// file's directory.
    pub tls: Option<(PathBuf, PathBuf)>,
}

fn key_seg(k: &str) -> Seg {
    Seg::Key(k.to_owned())
}

/// Reads `[restate]` of the file at `path` (`listen` overrides its
/// `listen`).
pub fn load_restate(
    path: &Path,
    listen: Option<SocketAddr>,
) -> Result<RestateSettings, ConfigError> {
    let file: ConfigFile<RestateConfig> = super::parse(path)?;
    let section = &file.config.restate;
    let at = |field: &str| [key_seg("restate"), key_seg(field)];
    let url = |field: &str, value: &Option<String>, default: &str| {
        let value = value.clone().unwrap_or_else(|| default.to_owned());
        if value.starts_with("http://") || value.starts_with("https://") {
            Ok(value)
        } else {
            Err(file.error(&at(field), "must start with http:// or https://"))
        }
    };
    let ingress = url("ingress", &section.ingress, DEFAULT_INGRESS)?;
    let admin = url("admin", &section.admin, DEFAULT_ADMIN)?;
    let listen = match listen {
        Some(addr) => addr,
        None => section
            .listen
            .as_deref()
            .unwrap_or(DEFAULT_LISTEN)
            .parse()
            .map_err(|_| file.error(&at("listen"), "must be an address such as 127.0.0.1:9080"))?,
    };
    let advertise = match &section.advertise {
        Some(_) => Some(url("advertise", &section.advertise, "")?),
        None => None,
    };
    let mut identity = RequestIdentity::new();
    for (i, key) in section.identity_keys.iter().flatten().enumerate() {
        identity = identity.key(key).map_err(|e| {
            file.error(
                &[key_seg("restate"), key_seg("identity_keys"), Seg::Index(i)],
                e.to_string(),
            )
        })?;
    }
    if section.allow_unsigned == Some(true) {
        if !identity.keys().is_empty() {
            return Err(file.error(
                &at("allow_unsigned"),
                "cannot be set with identity_keys: a worker with keys refuses unsigned requests",
            ));
        }
        identity = identity.allow_unsigned();
    }
    let tls = match (&section.tls_cert, &section.tls_key) {
        (Some(cert), Some(key)) => {
            Some((file.resolve(Path::new(cert)), file.resolve(Path::new(key))))
        }
        (None, None) => None,
        (Some(_), None) => return Err(file.error(&at("tls_cert"), "needs tls_key too")),
        (None, Some(_)) => return Err(file.error(&at("tls_key"), "needs tls_cert too")),
    };
    Ok(RestateSettings {
        ingress,
        admin,
        listen,
        advertise,
        identity,
        tls,
    })
}
