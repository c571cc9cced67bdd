//! API keys, wrapped so they never reach Debug output, logs or errors.

use secrecy::{ExposeSecret, SecretString};

/// An API key. `Debug` prints `ApiKey(<redacted>)`; the value is only read
/// when a request header is built.
#[derive(Clone)]
pub struct ApiKey(SecretString);

impl ApiKey {
    /// Wrap a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(SecretString::from(key.into()))
    }

    /// The raw key, for building an auth header only.
    pub(crate) fn expose(&self) -> &str {
        self.0.expose_secret()
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Where a connector gets its key.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Credential {
    /// Read this environment variable when the connector is built.
    Env(String),
    /// Use this key.
    Key(ApiKey),
    /// Send no credential (local OpenAI-compatible servers).
    None,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_hides_the_key() {
        let key = ApiKey::new("sk-very-secret-value");
        let printed = format!("{key:?} {:?}", Credential::Key(key.clone()));
        assert!(!printed.contains("sk-very-secret-value"), "{printed}");
        assert_eq!(key.expose(), "sk-very-secret-value");
    }
}
