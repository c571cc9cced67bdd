//! Admitting and compiling a component: the checks before any compiling
//! (kind, size, census), compiling in process or in a compile child, and the
//! compile cache in front of both.

use crate::error::LoadError;
use crate::limits::LoadLimits;
use crate::load::census::{self, Footprint};
use crate::load::compile_child::{self, CompileIn};
use crate::load::component::{self, WasmKind};
use crate::load::shared::Shared;
use std::path::Path;
use std::time::Instant;
use wasmtime::component::Component;

/// How a [`VerifierHost::load_bytes`](crate::VerifierHost::load_bytes) call
/// got its compiled code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadSource {
    /// Compiled now.
    Compiled,
    /// Deserialized from the compile cache.
    Cache,
    /// Shared with a verifier of the same component that this host loaded
    /// before and that is still live (a clone of it is held somewhere):
    /// nothing was compiled, deserialized or prepared.
    Live,
}

/// The component for `bytes` in `shared`'s engine: from its compile cache,
/// or compiled now (after the compile-cost census) and cached.
pub(crate) fn compile(
    shared: &Shared,
    bytes: &[u8],
    digest: &str,
) -> Result<(Component, LoadSource), LoadError> {
    compile_within(shared, bytes, digest, &shared.load, &shared.compile_in)
}

/// [`compile`] under other bounds: the compile-cost census of `limits`,
/// in `compile_in` (a background compile's own).
pub(crate) fn compile_within(
    shared: &Shared,
    bytes: &[u8],
    digest: &str,
    limits: &LoadLimits,
    compile_in: &CompileIn,
) -> Result<(Component, LoadSource), LoadError> {
    {
        let engine = &shared.engine;
        if let Some(cache) = &shared.cache
            && let Some(component) = cache.load(engine, digest)
        {
            return Ok((component, LoadSource::Cache));
        }
        census::check(bytes, limits, census::Scope::CompileCost(shared.tier))?;
        let started = Instant::now();
        let component = match compile_in {
            CompileIn::Process => {
                Component::new(engine, bytes).map_err(|e| LoadError::Corrupt(e.to_string()))?
            }
            CompileIn::Child(child) => {
                let component = compile_in_child(shared, child, bytes, digest)?;
                tracing::debug!(%digest, elapsed = ?started.elapsed(), "compiled verifier in a child");
                return Ok((component, LoadSource::Compiled));
            }
        };
        tracing::debug!(%digest, elapsed = ?started.elapsed(), "compiled verifier");
        if let Some(cache) = &shared.cache
            && let Err(err) = cache.store(digest, &component)
        {
            tracing::warn!(%digest, error = %err.kind(), "cannot write the compile cache");
        }
        Ok((component, LoadSource::Compiled))
    }
}

/// Compiles `bytes` in a compile child: with a compile cache, into a new
/// file of the cache's private directory that becomes the entry once
/// wasmtime loaded it (the host never holds the artifact in memory); else
/// through memory.
fn compile_in_child(
    shared: &Shared,
    child: &compile_child::ChildCompiler,
    bytes: &[u8],
    digest: &str,
) -> Result<Component, LoadError> {
    use compile_child::{Artifact, Sink};
    let refused = |e: wasmtime::Error| {
        LoadError::Link(format!("the compile child's output does not load: {e}"))
    };
    let engine = &shared.engine;
    let temp = shared.cache.as_ref().and_then(|cache| {
        cache
            .create_temp(digest)
            .inspect_err(|err| {
                tracing::warn!(%digest, error = %err.kind(), "cannot write the compile cache");
            })
            .ok()
            .map(|(path, file)| (cache, path, file))
    });
    let Some((cache, path, file)) = temp else {
        let Artifact::Memory(artifact) =
            compile_child::compile(child, shared.tier, bytes, Sink::Memory)?
        else {
            return Err(LoadError::Io("the compile child's output was lost".into()));
        };
        // SAFETY: `artifact` is what the compile child this call started
        // (and waited for) wrote on its own pipe for these very bytes:
        // wasmtime's serialization of a component it compiled, held in
        // memory since. wasmtime checks its header (version, engine
        // settings) and refuses one compiled with other settings.
        #[allow(unsafe_code)]
        let loaded = unsafe { Component::deserialize(engine, &artifact) };
        return loaded.map_err(refused);
    };
    let outcome =
        compile_child::compile(child, shared.tier, bytes, Sink::File(file)).and_then(|artifact| {
            let Artifact::File { sum } = artifact else {
                return Err(LoadError::Io("the compile child's output was lost".into()));
            };
            // SAFETY: the file at `path` was created new (never there
            // before) in the compile cache's private (0700) directory by
            // this call, and holds only what the compile child this call
            // started (and waited for) wrote on its own pipe for these very
            // bytes; nothing writes it after (it is renamed, never changed
            // in place). wasmtime checks its header (version, engine
            // settings) and refuses one compiled with other settings.
            #[allow(unsafe_code)]
            let loaded = unsafe { Component::deserialize_file(engine, &path) };
            Ok((loaded.map_err(refused)?, sum))
        });
    match outcome {
        Ok((component, sum)) => {
            if let Err(err) = cache.adopt(digest, &path, sum) {
                tracing::warn!(%digest, error = %err.kind(), "cannot write the compile cache");
                let _ = std::fs::remove_file(&path);
            }
            Ok(component)
        }
        Err(err) => {
            let _ = std::fs::remove_file(&path);
            Err(err)
        }
    }
}

/// Refuses bytes that are not a component, or are over a load limit; else
/// what instantiating them creates.
pub(crate) fn admit(bytes: &[u8], limits: &LoadLimits) -> Result<Footprint, LoadError> {
    precheck(bytes, limits)?;
    census::check(bytes, limits, census::Scope::Structure)
}

/// What is refused without reading the bytes through: not a component, or
/// more bytes than [`LoadLimits::max_component_bytes`].
pub(crate) fn precheck(bytes: &[u8], limits: &LoadLimits) -> Result<(), LoadError> {
    match component::kind(bytes) {
        WasmKind::Component => census::over(
            "max_component_bytes",
            bytes.len() as u64,
            limits.max_component_bytes,
        ),
        WasmKind::CoreModule => Err(LoadError::CoreModule),
        WasmKind::NotWasm => Err(LoadError::Corrupt(
            "missing the WebAssembly magic header".into(),
        )),
    }
}

/// Reads a component file: regular files only, opened without blocking,
/// at most `max_bytes`.
pub fn read_component(path: &Path, max_bytes: u64) -> Result<Vec<u8>, LoadError> {
    let io = |e: std::io::Error| LoadError::Io(format!("cannot read the file: {}", e.kind()));
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(crate::fsutil::nonblocking_flag());
    }
    let file = options.open(path).map_err(io)?;
    crate::fsutil::read_regular(file, max_bytes).map_err(|e| match e {
        crate::fsutil::ReadError::NotRegular => LoadError::Io("not a regular file".to_owned()),
        crate::fsutil::ReadError::TooLarge(found) => LoadError::OverLimit {
            limit: "max_component_bytes",
            found,
            max: max_bytes,
        },
        crate::fsutil::ReadError::Io(e) => io(e),
    })
}
