//! Bearer tokens: their stored hash and who a presented token is.
//!
//! A token is stored as the lowercase hex SHA-256 of its bytes. That is
//! enough for high-entropy tokens (at least 128 random bits, as `verdict
//! serve hash-token` asks for): nobody can search such a space, and unlike a
//! password KDF it costs no time per request. Hashes are compared in
//! constant time.

use crate::catalog::Catalog;
use axum::http::{HeaderMap, header};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Who made a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The admin token.
    Admin,
    /// A tenant's token.
    Tenant(String),
}

/// The SHA-256 of the bearer token in `headers`, if there is one.
pub fn presented(headers: &HeaderMap) -> Option<[u8; 32]> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return None;
    }
    Some(Sha256::digest(token.trim().as_bytes()).into())
}

/// Whether `hash` (presented) equals `stored` (hex), in constant time.
pub fn matches(hash: &[u8; 32], stored: Option<&[u8; 32]>) -> bool {
    stored.is_some_and(|s| bool::from(hash.ct_eq(s)))
}

/// The caller a token hash belongs to, if any: the admin, else the one
/// tenant whose hash it is. Every tenant's hash is compared.
pub fn identify(catalog: &Catalog, hash: &[u8; 32]) -> Option<Caller> {
    if matches(hash, catalog.admin_hash.as_ref()) {
        return Some(Caller::Admin);
    }
    let mut found = None;
    for tenant in catalog.tenants.values() {
        if matches(hash, tenant.token_hash.as_ref()) && found.is_none() {
            found = Some(Caller::Tenant(tenant.name.clone()));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token::{hash_token, parse_hash};
    use axum::http::HeaderValue;

    #[test]
    fn a_hash_round_trips_and_only_its_token_matches() {
        let stored = parse_hash(&hash_token("s3cret-token"));
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer s3cret-token"),
        );
        let given = presented(&headers);
        assert!(given.is_some_and(|g| matches(&g, stored.as_ref())));
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer other"),
        );
        let other = presented(&headers);
        assert!(other.is_some_and(|g| !matches(&g, stored.as_ref())));
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Basic s3cret-token"),
        );
        assert!(presented(&headers).is_none());
        assert!(parse_hash("zz").is_none());
    }
}
