//! HTTPS: a rustls acceptor from a PEM certificate chain and key.

use crate::error::ServeError;
use crate::settings::TlsFiles;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::sync::Arc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;

/// The acceptor for `files`.
pub fn acceptor(files: &TlsFiles) -> Result<TlsAcceptor, ServeError> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&files.cert)
        .and_then(|it| it.collect::<Result<_, _>>())
        .map_err(|e| ServeError::Tls(format!("{}: {e}", files.cert.display())))?;
    if certs.is_empty() {
        return Err(ServeError::Tls(format!(
            "{}: no certificate",
            files.cert.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| ServeError::Tls(format!("{}: {e}", files.key.display())))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ServeError::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| ServeError::Tls(e.to_string()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
