//! `oci://HOST[:PORT]/REPO[:TAG|@sha256:DIGEST]`: what a verifier spec,
//! `verdict push` and `verdict pull` name.

use crate::error::RegistryError;
use std::fmt;
use std::net::IpAddr;

/// The scheme of a reference.
pub const SCHEME: &str = "oci://";

/// A parsed `oci://` reference.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OciRef {
    /// `HOST[:PORT]` as written (the key of `[registries."HOST"]`).
    pub registry: String,
    /// The repository path (`team/verifier`).
    pub repository: String,
    /// The tag, if one is named (`latest` when neither a tag nor a digest is).
    pub tag: Option<String>,
    /// The pinned manifest digest (`sha256:` and 64 lowercase hex digits).
    pub digest: Option<String>,
}

/// True when `spec` is an `oci://` reference (parse it with [`OciRef::parse`]).
pub fn is_oci(spec: &str) -> bool {
    spec.starts_with(SCHEME)
}

fn invalid(spec: &str, why: impl Into<String>) -> RegistryError {
    RegistryError::InvalidReference {
        reference: spec.to_owned(),
        why: why.into(),
    }
}

/// Checks a `sha256:` digest: the algorithm and 64 lowercase hex digits.
pub fn check_digest(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

fn check_repository(repo: &str) -> bool {
    // The distribution spec's path components: lowercase alphanumerics
    // separated by `.`, `_`, `__` or runs of `-`.
    !repo.is_empty()
        && repo.len() <= 255
        && repo.split('/').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'-'))
                && part
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphanumeric())
                && part
                    .bytes()
                    .last()
                    .is_some_and(|b| b.is_ascii_alphanumeric())
        })
}

fn check_tag(tag: &str) -> bool {
    (1..=128).contains(&tag.len())
        && tag
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        && tag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

fn check_registry(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 255
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
}

impl OciRef {
    /// Parses `oci://HOST[:PORT]/REPO[:TAG][@sha256:DIGEST]`.
    pub fn parse(spec: &str) -> Result<Self, RegistryError> {
        let rest = spec
            .strip_prefix(SCHEME)
            .ok_or_else(|| invalid(spec, "must start with oci://"))?;
        let (registry, path) = rest.split_once('/').ok_or_else(|| {
            invalid(
                spec,
                "expected oci://HOST[:PORT]/REPOSITORY[:TAG|@sha256:DIGEST]",
            )
        })?;
        if !check_registry(registry) {
            return Err(invalid(
                spec,
                format!("`{registry}` is not a registry host[:port]"),
            ));
        }
        let (path, digest) = match path.split_once('@') {
            Some((path, digest)) => {
                if !check_digest(digest) {
                    return Err(invalid(
                        spec,
                        format!("`{digest}` is not a digest (sha256: and 64 lowercase hex digits)"),
                    ));
                }
                (path, Some(digest.to_owned()))
            }
            None => (path, None),
        };
        // A `:` after the last `/` starts the tag.
        let last = path.rfind('/').map_or(0, |i| i + 1);
        let (repository, tag) = match path[last..].find(':') {
            Some(i) => (&path[..last + i], Some(path[last + i + 1..].to_owned())),
            None => (path, None),
        };
        if !check_repository(repository) {
            return Err(invalid(
                spec,
                format!(
                    "`{repository}` is not a repository (lowercase letters, digits, `.`, `_`, `-`, `/`)"
                ),
            ));
        }
        if let Some(tag) = &tag
            && !check_tag(tag)
        {
            return Err(invalid(spec, format!("`{tag}` is not a tag")));
        }
        let tag = match (&tag, &digest) {
            (None, None) => Some("latest".to_owned()),
            _ => tag,
        };
        Ok(Self {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            tag,
            digest,
        })
    }

    /// The host without its port (`[::1]` keeps its brackets off).
    pub fn host(&self) -> &str {
        let r = self.registry.as_str();
        if let Some(inner) = r.strip_prefix('[') {
            return inner.split(']').next().unwrap_or(inner);
        }
        r.rsplit_once(':').map_or(r, |(host, _)| host)
    }

    /// True for `localhost`, 127.0.0.0/8 and `::1`: reached over plain HTTP
    /// without configuration, as Docker does.
    pub fn is_loopback(&self) -> bool {
        let host = self.host();
        host.eq_ignore_ascii_case("localhost")
            || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }

    /// The same repository pinned to `digest` (the tag kept for display).
    pub fn pinned(&self, digest: &str) -> Self {
        Self {
            digest: Some(digest.to_owned()),
            ..self.clone()
        }
    }

    /// `oci://HOST/REPO@sha256:…` (the tag dropped), or the reference as
    /// written when nothing is pinned.
    pub fn canonical(&self) -> String {
        match &self.digest {
            Some(d) => format!("{SCHEME}{}/{}@{d}", self.registry, self.repository),
            None => self.to_string(),
        }
    }

    /// The oci-client reference: by digest when pinned, else by tag.
    pub(crate) fn client_ref(&self) -> oci_client::Reference {
        match (&self.digest, &self.tag) {
            (Some(d), _) => oci_client::Reference::with_digest(
                self.registry.clone(),
                self.repository.clone(),
                d.clone(),
            ),
            (None, tag) => oci_client::Reference::with_tag(
                self.registry.clone(),
                self.repository.clone(),
                tag.clone().unwrap_or_else(|| "latest".to_owned()),
            ),
        }
    }
}

impl fmt::Display for OciRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(d) = &self.digest {
            write!(f, "@{d}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const D: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn tags_digests_and_ports_parse() {
        let r = OciRef::parse("oci://127.0.0.1:5000/team/check:v1").unwrap();
        assert_eq!(r.registry, "127.0.0.1:5000");
        assert_eq!(r.repository, "team/check");
        assert_eq!(r.tag.as_deref(), Some("v1"));
        assert!(r.is_loopback());
        let r = OciRef::parse(&format!("oci://ghcr.io/a/b@{D}")).unwrap();
        assert_eq!((r.tag, r.digest.as_deref()), (None, Some(D)));
        assert!(!OciRef::parse("oci://ghcr.io/a").unwrap().is_loopback());
        assert_eq!(
            OciRef::parse("oci://localhost/a").unwrap().tag.as_deref(),
            Some("latest")
        );
        assert!(OciRef::parse("oci://[::1]:5000/a").unwrap().is_loopback());
        let both = OciRef::parse(&format!("oci://h:1/a:t@{D}")).unwrap();
        assert_eq!(both.to_string(), format!("oci://h:1/a:t@{D}"));
        assert_eq!(both.canonical(), format!("oci://h:1/a@{D}"));
    }

    #[test]
    fn malformed_references_say_why() {
        for bad in [
            "ghcr.io/a",
            "oci://ghcr.io",
            "oci://ghcr.io/A",
            "oci://ghcr.io/a@sha256:12",
            "oci://ghcr.io/a:bad tag",
            "oci:///a",
            "oci://h/a//b",
        ] {
            let err = OciRef::parse(bad).unwrap_err().to_string();
            assert!(err.contains(bad), "{err}");
        }
    }
}
