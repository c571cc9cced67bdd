//! Stored token hashes: how the configuration writes a token (lowercase
//! hex SHA-256 of its bytes) and reads one back.

use sha2::{Digest, Sha256};

/// The hash of `token` as the configuration stores it (lowercase hex
/// SHA-256).
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Parses a stored hash (64 hex digits).
pub fn parse_hash(text: &str) -> Option<[u8; 32]> {
    let bytes = hex::decode(text.trim()).ok()?;
    bytes.try_into().ok()
}
