//! A worker's TLS: a rustls acceptor from a PEM certificate chain and
//! private key, offering HTTP/2 and HTTP/1.1 by ALPN.

use std::path::Path;
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;

use crate::error::DurableError;

/// The acceptor for the chain in `cert` and the key in `key`.
pub(crate) fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, DurableError> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|it| it.collect::<Result<_, _>>())
        .map_err(|e| DurableError::Tls(format!("{}: {e}", cert.display())))?;
    if certs.is_empty() {
        return Err(DurableError::Tls(format!(
            "{}: no certificate",
            cert.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| DurableError::Tls(format!("{}: {e}", key.display())))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| DurableError::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| DurableError::Tls(e.to_string()))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
