//! The client's trait: what the connector needs from a protocol (its
//! endpoint, request encoding, response and stream decoding). Each protocol
//! folder implements it in its `client.rs`; the connector reaches it through
//! [`Protocol::client`](crate::Protocol).

use serde_json::Value;

use crate::errors::ProviderError;
use crate::model::{ModelRequest, ModelResponse};
use crate::sse::StreamDecoder;

/// How a request carries the API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyHeader {
    /// `authorization: Bearer <key>`.
    Bearer,
    /// The key alone as the value of this header.
    Plain(&'static str),
}

/// Where a protocol's requests go by default and the headers they carry
/// besides the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Endpoint {
    /// The vendor's public API base URL.
    pub base_url: &'static str,
    /// The environment variable holding the vendor's key by default.
    pub env_var: &'static str,
    /// The header carrying the key.
    pub key_header: KeyHeader,
    /// Headers every request of this protocol carries.
    pub fixed_headers: &'static [(&'static str, &'static str)],
}

impl Endpoint {
    /// An endpoint with no fixed headers.
    pub(crate) const fn new(
        base_url: &'static str,
        env_var: &'static str,
        key_header: KeyHeader,
    ) -> Self {
        Self {
            base_url,
            env_var,
            key_header,
            fixed_headers: &[],
        }
    }
}

/// The connector's side of one provider wire protocol.
pub(crate) trait ClientProtocol: Sync {
    /// The default base URL, key variable and headers.
    fn endpoint(&self) -> Endpoint;

    /// The endpoint URL for `model` under `base` (no trailing slash).
    fn url(&self, base: &str, model: &str, stream: bool) -> String;

    /// The JSON body for `request`.
    fn encode_request(&self, request: &ModelRequest, stream: bool) -> Value;

    /// Decode a non-streaming success body.
    fn decode_response(&self, body: &[u8]) -> Result<ModelResponse, ProviderError>;

    /// A fresh decoder for a streamed body.
    fn stream_decoder(&self) -> Box<dyn StreamDecoder>;
}
