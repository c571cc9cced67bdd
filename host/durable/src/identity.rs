//! Who may invoke a worker: Restate's request identity.
//!
//! Whoever can speak the service protocol to a worker's port can hand it
//! a "journal" of their choosing (model responses included) and make it
//! run real tools with arguments of their choosing. A Restate server
//! configured with a request-identity private key
//! (`[worker.invoker] request-identity-private-key-pem-file`) signs every
//! request it sends to a deployment (a short-lived Ed25519 JWT whose
//! audience is the request's path); a worker given the matching public
//! key (`publickeyv1_…`, as `restate-server` prints it at start) refuses
//! every request that is not signed by it, before anything runs.
//!
//! A worker with no key refuses to serve unless it is told to accept
//! unsigned requests, and it accepts that only on a loopback address: on
//! any other address the whole network could drive its tools.

use std::net::SocketAddr;

use crate::error::DurableError;

/// The prefix of a request-identity public key.
pub const KEY_PREFIX: &str = "publickeyv1_";

/// Which requests a worker serves: those signed by one of its keys, or,
/// on loopback only and when asked for, unsigned ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestIdentity {
    keys: Vec<String>,
    allow_unsigned: bool,
}

impl RequestIdentity {
    /// Nothing accepted yet: a worker with this identity refuses to serve
    /// until a key is added or unsigned requests are allowed.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts requests signed by the private key of `key`
    /// (`publickeyv1_` and the base58 Ed25519 public key, as
    /// `restate-server` logs it). Several keys may be added (a key
    /// rotation, several Restate clusters).
    pub fn key(mut self, key: &str) -> Result<Self, DurableError> {
        let key = key.trim();
        restate_sdk::prelude::Endpoint::builder()
            .identity_key(key)
            .map_err(|e| DurableError::IdentityKey {
                key: key.to_owned(),
                detail: e.to_string(),
            })?;
        self.keys.push(key.to_owned());
        Ok(self)
    }

    /// Accepts unsigned requests: for a development worker on a loopback
    /// address only (serving refuses any other address), and never with
    /// keys (a key means unsigned requests are refused).
    pub fn allow_unsigned(mut self) -> Self {
        self.allow_unsigned = true;
        self
    }

    /// The keys accepted.
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// Whether unsigned requests are accepted.
    pub fn allows_unsigned(&self) -> bool {
        self.allow_unsigned
    }

    /// Whether a worker listening on `addr` may serve with this identity:
    /// keys (and not unsigned as well), or unsigned on loopback.
    pub fn check(&self, addr: SocketAddr) -> Result<(), DurableError> {
        match (self.keys.is_empty(), self.allow_unsigned) {
            (false, false) => Ok(()),
            (false, true) => Err(DurableError::Identity(
                "both request identity keys and unsigned requests are allowed: a worker with \
                 keys refuses unsigned requests, so drop `allow_unsigned`"
                    .to_owned(),
            )),
            (true, false) => Err(DurableError::Identity(format!(
                "the worker on {addr} has no request identity key, so anyone who can reach it \
                 could run its tools: set `identity_keys = [\"publickeyv1_…\"]` in [restate] \
                 (the key restate-server prints when it starts with \
                 `request-identity-private-key-pem-file`; `scripts/restate-dev.sh keygen FILE` \
                 makes a pair), or `allow_unsigned = true` for a development worker on a \
                 loopback address"
            ))),
            (true, true) if addr.ip().is_loopback() => Ok(()),
            (true, true) => Err(DurableError::Identity(format!(
                "`allow_unsigned = true` is refused on {addr}, which is not a loopback \
                 address: every host that reaches it could run the worker's tools; set \
                 `identity_keys` instead"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A well-formed key (32 bytes in base58).
    const KEY: &str = "publickeyv1_9s84Pbuco9C1Pxdn7HdHMZyVMyW8WqZDRTVWnNwJH363";

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[test]
    fn a_worker_serves_with_a_key_anywhere_and_unsigned_only_on_loopback() {
        let keyed = RequestIdentity::new().key(KEY).unwrap();
        assert!(keyed.check(addr("0.0.0.0:9080")).is_ok());
        assert!(keyed.check(addr("127.0.0.1:9080")).is_ok());

        let none = RequestIdentity::new().check(addr("127.0.0.1:9080"));
        let message = none.unwrap_err().to_string();
        assert!(message.contains("identity_keys"), "{message}");
        assert!(message.contains("allow_unsigned"), "{message}");

        let unsigned = RequestIdentity::new().allow_unsigned();
        assert!(unsigned.check(addr("127.0.0.1:9080")).is_ok());
        assert!(unsigned.check(addr("[::1]:9080")).is_ok());
        let open = unsigned
            .check(addr("0.0.0.0:9080"))
            .unwrap_err()
            .to_string();
        assert!(open.contains("not a loopback address"), "{open}");
        assert!(unsigned.check(addr("10.0.0.5:9080")).is_err());

        let both = keyed.allow_unsigned().check(addr("127.0.0.1:9080"));
        assert!(both.is_err());
    }

    #[test]
    fn malformed_keys_are_refused_with_the_key_named() {
        for bad in [
            "9s84Pbuco9C1Pxdn7HdHMZyVMyW8WqZDRTVWnNwJH363",
            "publickeyv1_0OIl",
            "publickeyv1_abc",
        ] {
            let error = RequestIdentity::new().key(bad).unwrap_err().to_string();
            assert!(error.contains(bad), "{error}");
        }
    }
}
