//! The streamable HTTP transport of a server: rmcp's client over reqwest
//! 0.13, TLS by rustls with ring and the webpki roots, the message bound
//! applied to every JSON response body and SSE event.

use std::collections::HashMap;
use std::sync::Arc;

use reqwest013::header::{HeaderName, HeaderValue};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig, StreamableHttpError,
};

use crate::config::{HttpEndpoint, ServerConfig};
use crate::error::McpError;

/// The transport type of an HTTP server.
pub(crate) type HttpTransport = StreamableHttpClientTransport<reqwest013::Client>;

/// The transport to `endpoint`, its bearer token read from `token_env` now.
pub(crate) fn transport(
    config: &ServerConfig,
    endpoint: &HttpEndpoint,
) -> Result<HttpTransport, McpError> {
    let error = |detail: String| McpError::Config {
        server: config.name.clone(),
        detail,
    };
    if !(endpoint.url.starts_with("http://") || endpoint.url.starts_with("https://")) {
        return Err(error(format!(
            "url {:?} is not an http:// or https:// URL",
            endpoint.url
        )));
    }
    let mut headers = HashMap::new();
    for (name, value) in &endpoint.headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| error(format!("header {name:?}: {e}")))?;
        let value =
            HeaderValue::from_str(value).map_err(|e| error(format!("header {name}: {e}")))?;
        headers.insert(name, value);
    }
    let mut http = StreamableHttpClientTransportConfig::with_uri(endpoint.url.as_str())
        .custom_headers(headers)
        .max_json_response_size(config.max_message_bytes)
        .max_sse_event_size(config.max_message_bytes);
    if let Some(var) = &endpoint.token_env {
        let token = std::env::var(var).map_err(|_| {
            error(format!(
                "token_env: the environment variable {var} is not set"
            ))
        })?;
        http = http.auth_header(token);
    }
    let tls = tls().map_err(|e| error(format!("TLS: {e}")))?;
    let client = reqwest013::Client::builder()
        .tls_backend_preconfigured(tls)
        .connect_timeout(config.start_timeout)
        .build()
        .map_err(|e| error(format!("cannot build the HTTP client: {e}")))?;
    Ok(StreamableHttpClientTransport::with_client(client, http))
}

/// rustls with ring and the webpki roots.
fn tls() -> Result<rustls::ClientConfig, rustls::Error> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    Ok(rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(roots)
    .with_no_client_auth())
}

/// Whether `error` (a transport error of a call) is an HTTP response over
/// the message bound.
pub(crate) fn too_large(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(error);
    while let Some(current) = source {
        if let Some(StreamableHttpError::<reqwest013::Error>::ResponseBodyTooLarge { .. }) =
            current.downcast_ref::<StreamableHttpError<reqwest013::Error>>()
        {
            return true;
        }
        source = current.source();
    }
    false
}
