//! On-disk cache of compiled components, keyed by the SHA-256 of the `.wasm`
//! bytes, in a directory per engine configuration. Each entry is the SHA-256
//! of the serialized component followed by the serialized component.
//!
//! Only bytes this host compiled and wrote itself are ever deserialized. A
//! cached artifact that wasmtime refuses (another wasmtime version, other
//! engine settings, a damaged file) is treated as a miss: it is removed and
//! the component is compiled again.

use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use wasmtime::Engine;
use wasmtime::component::Component;

/// A compile cache rooted at one directory.
#[derive(Debug)]
pub(crate) struct CompileCache {
    dir: PathBuf,
}

impl CompileCache {
    /// Uses `base/<engine-hash>/` as the cache directory, creating it.
    pub(crate) fn open(base: &Path, engine: &Engine) -> io::Result<Self> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let dir = base.join(format!("{:016x}", hasher.finish()));
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        builder.create(&dir)?;
        Ok(Self { dir })
    }

    fn path(&self, digest: &str) -> PathBuf {
        self.dir.join(format!("{digest}.cwasm"))
    }

    /// The cached component for `digest`, if present and valid for `engine`.
    pub(crate) fn load(&self, engine: &Engine, digest: &str) -> Option<Component> {
        let path = self.path(digest);
        // Read into memory rather than mapping the file: a file changed in
        // place while mapped would fault the process.
        let file = std::fs::read(&path).ok()?;
        // Each entry starts with the SHA-256 of the rest, so a damaged file
        // is caught here rather than handed to `deserialize`.
        let Some(bytes) = file
            .split_at_checked(32)
            .filter(|(sum, rest)| Sha256::digest(rest).as_slice() == *sum)
            .map(|(_, rest)| rest)
        else {
            tracing::debug!(%digest, "compile cache entry damaged; recompiling");
            let _ = std::fs::remove_file(&path);
            return None;
        };
        // SAFETY: `deserialize` trusts its input to be wasmtime's own
        // compiled output. Files in this directory are written only by
        // `store` below, from `Component::serialize` of a component this host
        // compiled, under a private (0700) directory; wasmtime additionally
        // checks the header (version, engine settings) and refuses a mismatch.
        #[allow(unsafe_code)]
        let loaded = unsafe { Component::deserialize(engine, bytes) };
        match loaded {
            Ok(component) => Some(component),
            Err(err) => {
                tracing::debug!(%digest, error = %err, "compile cache entry refused; recompiling");
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    }

    /// Stores `component` for `digest`, atomically (write, then rename).
    pub(crate) fn store(&self, digest: &str, component: &Component) -> io::Result<()> {
        let bytes = component.serialize().map_err(io::Error::other)?;
        // Unique per process and call, so concurrent stores never share a file.
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let name = format!(".{digest}.{}.{seq}.tmp", std::process::id());
        let tmp = self.dir.join(name);
        let mut file = Vec::with_capacity(32 + bytes.len());
        file.extend_from_slice(&Sha256::digest(&bytes));
        file.extend_from_slice(&bytes);
        std::fs::write(&tmp, &file)?;
        std::fs::rename(&tmp, self.path(digest)).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}
