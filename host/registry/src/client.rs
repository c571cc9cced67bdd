//! [`Registry`]: push and fetch components, through the local cache.

use crate::artifact::{self, ComponentInfo};
use crate::auth::{self, Credentials};
use crate::cache::{Cache, sha256};
use crate::error::RegistryError;
use crate::reference::OciRef;
use crate::settings::{MAX_MANIFEST_BYTES, Options};
use futures::StreamExt;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use std::collections::BTreeMap;
use std::time::Duration;

/// Where fetched bytes came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Pulled from the registry now (and cached, with a cache).
    Registry,
    /// Read from the local cache: nothing was pulled.
    Cache,
}

/// A fetched component.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The reference, pinned to the manifest digest it resolved to.
    pub reference: OciRef,
    /// The manifest digest (`sha256:…`): what a pin names.
    pub digest: String,
    /// The layer digest: `sha256:` and the SHA-256 of [`Fetched::bytes`],
    /// the component's identity as a checker.
    pub layer_digest: String,
    /// The component.
    pub bytes: Vec<u8>,
    /// The manifest's annotations.
    pub annotations: BTreeMap<String, String>,
    /// Pulled now or read from the cache.
    pub origin: Origin,
}

/// What a push stored.
#[derive(Debug, Clone)]
pub struct Pushed {
    /// The reference pushed to, pinned to the manifest digest.
    pub reference: OciRef,
    /// The manifest digest (`sha256:…`).
    pub digest: String,
    /// The layer digest (`sha256:…` of the component bytes).
    pub layer_digest: String,
}

/// Pushes and fetches components (see the crate documentation).
#[derive(Debug, Clone)]
pub struct Registry {
    options: Options,
    cache: Option<Cache>,
}

/// The layer read so far when a blob stream failed.
struct Partial {
    received: Vec<u8>,
    error: RegistryError,
}

impl Registry {
    /// A registry client with `options` (no connection is made yet).
    pub fn new(options: Options) -> Self {
        let cache = options.cache_dir.as_deref().map(Cache::new);
        Self { options, cache }
    }

    /// The local cache, if any.
    pub fn cache(&self) -> Option<&Cache> {
        self.cache.as_ref()
    }

    /// Fetches the component `reference` names: from the cache when its
    /// digest is pinned (or, offline, when its tag was resolved before)
    /// and cached, else from the registry, verified against every digest
    /// and cached. A non-empty `allowed` lists the only manifest digests
    /// accepted.
    pub async fn fetch(
        &self,
        reference: &OciRef,
        allowed: &[String],
    ) -> Result<Fetched, RegistryError> {
        if self.options.offline && self.cache.is_none() {
            return Err(RegistryError::OfflineWithoutCache);
        }
        let known = match (&reference.digest, &reference.tag, &self.cache) {
            (Some(d), _, _) => Some(d.clone()),
            (None, Some(tag), Some(cache)) if self.options.offline => {
                cache.tag(&reference.registry, &reference.repository, tag)?
            }
            _ => None,
        };
        if let Some(digest) = &known {
            check_allowed(reference, digest, allowed)?;
            if let Some(fetched) = self.cached(reference, digest)? {
                return Ok(fetched);
            }
        }
        if self.options.offline {
            return Err(RegistryError::NotCached {
                reference: reference.to_string(),
                cache: self
                    .cache
                    .as_ref()
                    .map(|c| c.root().to_owned())
                    .unwrap_or_default(),
            });
        }
        let bound = self.options.timeout_for(&reference.registry);
        tokio::time::timeout(bound, self.pull(reference, allowed))
            .await
            .map_err(|_| timeout("pull", reference, bound))?
    }

    /// [`Registry::fetch`] from synchronous code (in or out of an async
    /// runtime): runs it on a thread of its own.
    pub fn fetch_blocking(
        &self,
        reference: &OciRef,
        allowed: &[String],
    ) -> Result<Fetched, RegistryError> {
        block_on(|| self.fetch(reference, allowed))
    }

    /// Pushes `bytes` to `reference` (a tag) as a wasm OCI artifact
    /// described by `info`; returns the manifest digest.
    pub async fn push(
        &self,
        reference: &OciRef,
        bytes: &[u8],
        info: &ComponentInfo,
    ) -> Result<Pushed, RegistryError> {
        if reference.digest.is_some() || reference.tag.is_none() {
            return Err(RegistryError::PushNeedsTag(reference.to_string()));
        }
        if bytes.len() as u64 > self.options.max_blob_bytes {
            return Err(RegistryError::TooLarge {
                what: "layer",
                reference: reference.to_string(),
                size: bytes.len() as u64,
                max: self.options.max_blob_bytes,
            });
        }
        let bound = self.options.timeout_for(&reference.registry);
        tokio::time::timeout(bound, self.push_now(reference, bytes, info))
            .await
            .map_err(|_| timeout("push", reference, bound))?
    }

    /// [`Registry::push`] from synchronous code.
    pub fn push_blocking(
        &self,
        reference: &OciRef,
        bytes: &[u8],
        info: &ComponentInfo,
    ) -> Result<Pushed, RegistryError> {
        block_on(|| self.push(reference, bytes, info))
    }

    fn cached(&self, reference: &OciRef, digest: &str) -> Result<Option<Fetched>, RegistryError> {
        let Some(cache) = &self.cache else {
            return Ok(None);
        };
        let Some(manifest) = cache.manifest(digest)? else {
            return Ok(None);
        };
        let (layer, annotations) = artifact::wasm_layer(
            &reference.to_string(),
            &manifest,
            self.options.max_blob_bytes,
        )?;
        let Some(bytes) = cache.blob(&layer.digest, self.options.max_blob_bytes)? else {
            return Ok(None);
        };
        Ok(Some(Fetched {
            reference: reference.pinned(digest),
            digest: digest.to_owned(),
            layer_digest: layer.digest,
            bytes,
            annotations,
            origin: Origin::Cache,
        }))
    }

    fn client(
        &self,
        reference: &OciRef,
    ) -> Result<(oci_client::Client, Credentials), RegistryError> {
        let settings = self.options.registries.get(&reference.registry);
        let plain = settings
            .and_then(|s| s.insecure)
            .unwrap_or_else(|| reference.is_loopback());
        let mut roots = Vec::new();
        if let Some(path) = settings.and_then(|s| s.ca_file.as_ref()) {
            roots.push(ca_file(&reference.registry, path)?);
        }
        let bound = self.options.timeout_for(&reference.registry);
        let mut config = ClientConfig {
            protocol: if plain {
                ClientProtocol::Http
            } else {
                ClientProtocol::Https
            },
            connect_timeout: Some(self.options.connect_timeout.min(bound)),
            read_timeout: Some(bound),
            // A wasm artifact is one manifest, never an index.
            platform_resolver: None,
            max_concurrent_upload: 1,
            max_concurrent_download: 1,
            extra_root_certificates: roots,
            ..ClientConfig::default()
        };
        if reference.is_loopback() {
            bypass_proxies(&mut config, reference.host());
        }
        let client = oci_client::Client::try_from(config).map_err(|e| RegistryError::Registry {
            registry: reference.registry.clone(),
            message: format!("cannot build the HTTP client: {e}"),
        })?;
        Ok((
            client,
            auth::credentials(&self.options, &reference.registry)?,
        ))
    }

    async fn pull(&self, reference: &OciRef, allowed: &[String]) -> Result<Fetched, RegistryError> {
        let (client, credentials) = self.client(reference)?;
        let cref = reference.client_ref();
        let fail = |e| {
            classify(
                e,
                reference,
                &credentials,
                "pull",
                self.options.timeout_for(&reference.registry),
            )
        };
        let (manifest, _) = client
            .pull_manifest_raw(&cref, &credentials.auth, &[artifact::MANIFEST])
            .await
            .map_err(fail)?;
        if manifest.len() as u64 > MAX_MANIFEST_BYTES {
            return Err(RegistryError::TooLarge {
                what: "manifest",
                reference: reference.to_string(),
                size: manifest.len() as u64,
                max: MAX_MANIFEST_BYTES,
            });
        }
        let digest = sha256(&manifest);
        if let Some(pinned) = &reference.digest
            && *pinned != digest
        {
            return Err(mismatch("manifest", reference, pinned, &digest));
        }
        check_allowed(reference, &digest, allowed)?;
        let name = reference.to_string();
        let (layer, annotations) =
            artifact::wasm_layer(&name, &manifest, self.options.max_blob_bytes)?;
        let cached = match &self.cache {
            Some(cache) => cache.blob(&layer.digest, self.options.max_blob_bytes)?,
            None => None,
        };
        let bytes = match cached {
            Some(bytes) => bytes,
            None => {
                let declared = u64::try_from(layer.size).unwrap_or(u64::MAX);
                match self
                    .pull_layer(&client, &cref, &layer, declared, reference, &credentials)
                    .await
                {
                    Ok(bytes) => bytes,
                    // A stream the client cut at the end over a digest it
                    // disliked: say which digests.
                    Err(partial) if partial.received.len() as u64 == declared => {
                        let actual = sha256(&partial.received);
                        if actual != layer.digest {
                            return Err(mismatch("layer", reference, &layer.digest, &actual));
                        }
                        return Err(partial.error);
                    }
                    Err(partial) => return Err(partial.error),
                }
            }
        };
        let actual = sha256(&bytes);
        if actual != layer.digest {
            return Err(mismatch("layer", reference, &layer.digest, &actual));
        }
        if let Some(cache) = &self.cache {
            // The blob before the manifest naming it, the tag last.
            cache.put_blob(&layer.digest, &bytes)?;
            cache.put_manifest(&digest, &manifest)?;
            if let (Some(tag), None) = (&reference.tag, &reference.digest) {
                cache.put_tag(&reference.registry, &reference.repository, tag, &digest)?;
            }
        }
        Ok(Fetched {
            reference: reference.pinned(&digest),
            digest,
            layer_digest: layer.digest,
            bytes,
            annotations,
            origin: Origin::Registry,
        })
    }

    /// Streams a layer into memory, refusing more than it declares (and
    /// than the bound).
    async fn pull_layer(
        &self,
        client: &oci_client::Client,
        cref: &oci_client::Reference,
        layer: &oci_client::manifest::OciDescriptor,
        declared: u64,
        reference: &OciRef,
        credentials: &Credentials,
    ) -> Result<Vec<u8>, Partial> {
        let mut stream = client
            .pull_blob_stream(cref, layer)
            .await
            .map_err(|e| Partial {
                received: Vec::new(),
                error: classify(
                    e,
                    reference,
                    credentials,
                    "pull",
                    self.options.timeout_for(&reference.registry),
                ),
            })?;
        let too_large = |size: u64| RegistryError::TooLarge {
            what: "layer",
            reference: reference.to_string(),
            size,
            max: declared,
        };
        if let Some(length) = stream.content_length
            && length > declared
        {
            return Err(Partial {
                received: Vec::new(),
                error: too_large(length),
            });
        }
        let mut received = Vec::with_capacity(usize::try_from(declared.min(1 << 20)).unwrap_or(0));
        while let Some(chunk) = stream.stream.next().await {
            match chunk {
                Ok(chunk) => {
                    received.extend_from_slice(&chunk);
                    if received.len() as u64 > declared {
                        let size = received.len() as u64;
                        return Err(Partial {
                            received,
                            error: too_large(size),
                        });
                    }
                }
                Err(e) => {
                    let error = RegistryError::Registry {
                        registry: reference.registry.clone(),
                        message: format!("the layer download failed: {e}"),
                    };
                    return Err(Partial { received, error });
                }
            }
        }
        Ok(received)
    }

    async fn push_now(
        &self,
        reference: &OciRef,
        bytes: &[u8],
        info: &ComponentInfo,
    ) -> Result<Pushed, RegistryError> {
        let (client, credentials) = self.client(reference)?;
        let cref = reference.client_ref();
        let fail = |e| {
            classify(
                e,
                reference,
                &credentials,
                "push",
                self.options.timeout_for(&reference.registry),
            )
        };
        let (config, manifest) =
            artifact::build(bytes, info).map_err(|e| RegistryError::Registry {
                registry: reference.registry.clone(),
                message: format!("cannot write the manifest: {e}"),
            })?;
        // Authenticates for push (a token registry hands out a push token).
        client
            .auth(
                &cref,
                &credentials.auth,
                oci_client::RegistryOperation::Push,
            )
            .await
            .map_err(fail)?;
        let layer_digest = sha256(bytes);
        client
            .push_blob(&cref, bytes, &layer_digest)
            .await
            .map_err(fail)?;
        client
            .push_blob(&cref, &config, &sha256(&config))
            .await
            .map_err(fail)?;
        let digest = sha256(&manifest);
        client
            .push_manifest_raw(
                &cref,
                manifest,
                reqwest::header::HeaderValue::from_static(artifact::MANIFEST),
            )
            .await
            .map_err(fail)?;
        Ok(Pushed {
            reference: reference.pinned(&digest),
            digest,
            layer_digest,
        })
    }
}

/// A loopback registry is never reached through a proxy of the
/// environment: the environment's proxies are set explicitly (which turns
/// off reqwest's own reading of them) with `host` added to `NO_PROXY`.
fn bypass_proxies(config: &mut ClientConfig, host: &str) {
    let var = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| std::env::var(n).ok().filter(|v| !v.trim().is_empty()))
    };
    let all = var(&["ALL_PROXY", "all_proxy"]);
    config.http_proxy = var(&["HTTP_PROXY", "http_proxy"]).or_else(|| all.clone());
    config.https_proxy = var(&["HTTPS_PROXY", "https_proxy"]).or(all);
    let mut no_proxy = var(&["NO_PROXY", "no_proxy"]).unwrap_or_default();
    if !no_proxy.is_empty() {
        no_proxy.push(',');
    }
    no_proxy.push_str(host);
    config.no_proxy = Some(no_proxy);
}

/// The PEM certificates of a registry's `ca_file` (at most 1 MiB).
fn ca_file(
    registry: &str,
    path: &std::path::Path,
) -> Result<oci_client::client::Certificate, RegistryError> {
    let bad = |why: String| RegistryError::CaFile {
        registry: registry.to_owned(),
        path: path.to_owned(),
        why,
    };
    let data = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    if data.len() > 1024 * 1024 {
        return Err(bad("over 1 MiB".to_owned()));
    }
    if !data
        .windows(27)
        .any(|w| w == b"-----BEGIN CERTIFICATE-----")
    {
        return Err(bad("no PEM certificate in it".to_owned()));
    }
    Ok(oci_client::client::Certificate {
        encoding: oci_client::client::CertificateEncoding::Pem,
        data,
    })
}

fn check_allowed(
    reference: &OciRef,
    digest: &str,
    allowed: &[String],
) -> Result<(), RegistryError> {
    if allowed.is_empty() || allowed.iter().any(|a| a == digest) {
        return Ok(());
    }
    Err(RegistryError::NotAllowed {
        reference: reference.to_string(),
        digest: digest.to_owned(),
        allowed: allowed.to_vec(),
    })
}

fn mismatch(what: &'static str, reference: &OciRef, expected: &str, actual: &str) -> RegistryError {
    RegistryError::DigestMismatch {
        what,
        reference: reference.to_string(),
        expected: expected.to_owned(),
        actual: actual.to_owned(),
    }
}

fn timeout(operation: &'static str, reference: &OciRef, after: Duration) -> RegistryError {
    RegistryError::Timeout {
        operation,
        reference: reference.to_string(),
        after,
    }
}

/// The client's error as one of ours.
fn classify(
    e: OciDistributionError,
    reference: &OciRef,
    credentials: &Credentials,
    operation: &'static str,
    bound: Duration,
) -> RegistryError {
    let registry = reference.registry.clone();
    let unauthorized = || RegistryError::Unauthorized {
        registry: registry.clone(),
        credentials: credentials.source.clone(),
        hint: auth::login_hint(&registry),
    };
    let denied = || RegistryError::Denied {
        registry: registry.clone(),
        reference: reference.to_string(),
        operation,
    };
    let not_found = |what: String| RegistryError::NotFound {
        registry: registry.clone(),
        reference: reference.to_string(),
        what,
    };
    match e {
        OciDistributionError::UnauthorizedError { .. }
        | OciDistributionError::AuthenticationFailure(_) => unauthorized(),
        OciDistributionError::RegistryError { envelope, .. } => {
            let first = envelope.errors.first();
            match first.map(|e| &e.code) {
                Some(OciErrorCode::Unauthorized) => unauthorized(),
                Some(OciErrorCode::Denied) => denied(),
                Some(
                    OciErrorCode::ManifestUnknown
                    | OciErrorCode::NameUnknown
                    | OciErrorCode::BlobUnknown
                    | OciErrorCode::NotFound,
                ) => not_found(first.map(|e| e.message.clone()).unwrap_or_default()),
                _ => RegistryError::Registry {
                    registry,
                    message: envelope.to_string(),
                },
            }
        }
        OciDistributionError::ServerError { code: 401, .. } => unauthorized(),
        OciDistributionError::ServerError { code: 403, .. } => denied(),
        OciDistributionError::ServerError {
            code: 404, message, ..
        } => not_found(message),
        OciDistributionError::ImageManifestNotFoundError(what) => not_found(what),
        OciDistributionError::DigestError(oci_client::errors::DigestError::VerificationError {
            expected,
            actual,
        }) => mismatch("manifest", reference, &expected, &actual),
        // Before timeouts: a connect that timed out is a connect failure.
        OciDistributionError::RequestError(e) if e.is_connect() => RegistryError::Connect {
            registry,
            why: chain(&e),
        },
        // The client's read timeout, set to the operation's bound.
        OciDistributionError::RequestError(e) if e.is_timeout() => RegistryError::Timeout {
            operation,
            reference: reference.to_string(),
            after: bound,
        },
        OciDistributionError::RequestError(e) => RegistryError::Registry {
            registry,
            message: chain(&e),
        },
        other => RegistryError::Registry {
            registry,
            message: other.to_string(),
        },
    }
}

/// An error and its sources, `: `-separated.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// Runs the future `make` returns on a current-thread runtime of its own
/// thread (callable from inside another runtime).
fn block_on<'a, T, F>(make: impl FnOnce() -> F + Send + 'a) -> Result<T, RegistryError>
where
    T: Send + 'a,
    F: std::future::Future<Output = Result<T, RegistryError>> + 'a,
{
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(RegistryError::Runtime)?;
                runtime.block_on(make())
            })
            .join()
            .unwrap_or_else(|_| {
                Err(RegistryError::Runtime(std::io::Error::other(
                    "the registry client panicked",
                )))
            })
    })
}
