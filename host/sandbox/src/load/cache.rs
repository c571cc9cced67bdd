//! On-disk cache of compiled components, keyed by the SHA-256 of the `.wasm`
//! bytes, in a directory per engine configuration (so per compiler tier).
//! Each entry is the serialized component (`<digest>.cwasm`) and beside it
//! its XXH3-128 checksum with the file identity it was checked for
//! (`<digest>.sum`). An entry is first read back from disk and checked
//! before wasmtime sees it; with [`HostConfig::map_cache_entries`] (the
//! default) that check then records the identity of the file it read (same
//! device, inode, size and times), and while the file is still that one it
//! is mapped by wasmtime without being read (`Component::deserialize_file`):
//! a 64 MB entry loads in about 1–2 ms instead of tens. A process that has
//! it mapped dies of `SIGBUS` if anyone truncates or rewrites the file in
//! place (this host never does: it writes by rename), and damage that
//! bypasses the file system (so leaves the times alone) after the check
//! goes unnoticed.
//!
//! [`HostConfig::map_cache_entries`]: crate::HostConfig::map_cache_entries
//!
//! Only bytes this host compiled and wrote itself are ever deserialized. A
//! cached artifact that wasmtime refuses (another wasmtime version, other
//! engine settings, a damaged file) is treated as a miss: it is removed and
//! the component is compiled again.
//!
//! # Integrity
//!
//! The checksum catches damage (a torn or truncated write, a flipped bit, a
//! file changed after it was written) before wasmtime sees the bytes;
//! XXH3-128 misses a random corruption with probability 2⁻¹²⁸. It is
//! checked at every load that reads the entry (every load, unless entries
//! are mapped). It is not, and the SHA-256 it replaces was
//! not, a defence against someone writing the cache: whoever can write an
//! entry can write its checksum too, and a key stored beside the entries
//! would be just as writable. That is what the directory's permissions are
//! for: it is created private (0700) and only this host writes into it, by
//! write-then-rename.
//!
//! A `.sum` file is read once per process: what it says is keyed by the
//! entry file's identity, so it stays true while that identity holds, and a
//! load repeating it only checks the identity. (What a cached load needs
//! before it gets here, the component's digest, comes from the digest
//! index: see `index.rs`.)
//!
//! # What a cached load costs
//!
//! Profiled (`perf`, DWARF call graphs, 4,000 `load_file` calls of the
//! 116 KB Rust sample, an unchanged file, mapped entry; p50 about 225 µs on
//! the 2-core VM): wasmtime's `Component::deserialize_file` is 83% of it,
//! i.e. decoding the component's type and module tables (postcard, about
//! 40%, mostly allocation), checking the engine settings recorded in the
//! entry (13%), registering the types with the engine (10%) and making the
//! code executable (10%). This module's own work (two `stat`s, the index and
//! `.sum` memos) is under 6%, and preparing the loaded component (import
//! check, `instantiate_pre`, export type checks) about 11%. Timed by stage
//! (126 KB sample, 1,000 loads, means): the index lookup 2–3 µs, this
//! module 146–164 µs (`deserialize_file` alone ~150), preparing 21–23 µs
//! (`instantiate_pre` 16.5). Engine settings that shrink the entry
//! (`generate_address_map(false)`, `native_unwind_info(false)`: 437 →
//! 380 KB) did not move a mapped load (only a read one, −7%), so they stay
//! at wasmtime's defaults. Going much lower takes not loading at all: a host
//! shares a component it still has a live verifier of (`LoadSource::Live`,
//! about 2 µs by path).

use crate::fsutil::FileIdentity;
use crate::load::memo::Remembered;
use std::hash::{Hash, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use twox_hash::XxHash3_128;
use wasmtime::Engine;
use wasmtime::component::Component;

/// Creates `dir` (and its parents) private to the user.
pub(crate) fn create_private(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Writes `parts` to `dir/name` atomically: a unique temporary file, then
/// a rename (readers see the old file or the whole new one).
pub(crate) fn write_atomic(dir: &Path, name: &str, parts: &[&[u8]]) -> io::Result<()> {
    // Unique per process and call, so concurrent stores never share a file.
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}.{seq}.tmp", std::process::id()));
    let write = || {
        use std::io::Write;
        let mut file = std::fs::File::create(&tmp)?;
        for part in parts {
            file.write_all(part)?;
        }
        std::fs::rename(&tmp, dir.join(name))
    };
    write().inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// A compile cache rooted at one directory.
#[derive(Debug)]
pub(crate) struct CompileCache {
    dir: PathBuf,
    /// Map an unchanged, already checked entry instead of reading it.
    map: bool,
    /// Per digest, the identity of the entry file found checked (its
    /// `.sum` file, as last read or written here).
    checked: Remembered<String, FileIdentity>,
}

impl CompileCache {
    /// Uses `base/<engine-hash>/` as the cache directory, creating it;
    /// `map`: see the module docs.
    pub(crate) fn open(base: &Path, engine: &Engine, map: bool) -> io::Result<Self> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let dir = base.join(format!("{:016x}", hasher.finish()));
        create_private(&dir)?;
        Ok(Self {
            dir,
            map,
            checked: Remembered::default(),
        })
    }

    fn path(&self, digest: &str) -> PathBuf {
        self.dir.join(format!("{digest}.cwasm"))
    }

    /// True when an entry for `digest` is present (not checked: a damaged
    /// one is found so only when loaded).
    pub(crate) fn contains(&self, digest: &str) -> bool {
        self.path(digest).is_file()
    }

    /// The cached component for `digest`, if present and valid for `engine`.
    pub(crate) fn load(&self, engine: &Engine, digest: &str) -> Option<Component> {
        let path = self.path(digest);
        let current = if self.map {
            FileIdentity::of(&path)
        } else {
            None
        };
        // Checked before, by this process or (its `.sum` says) another one.
        if current.is_some() && self.checked.get(digest) == current {
            return self.finish(digest, self.deserialize_checked(engine, &path));
        }
        let (sum, checked) = read_sum(&self.dir.join(format!("{digest}.sum")))?;
        if let Some(id) = current
            && checked == current
        {
            self.checked.put(digest.to_owned(), id);
            return self.finish(digest, self.deserialize_checked(engine, &path));
        }
        // Read it and check it first.
        let identity = FileIdentity::of(&path);
        let bytes = std::fs::read(&path).ok()?;
        if XxHash3_128::oneshot(&bytes) != sum {
            tracing::debug!(%digest, "compile cache entry damaged; recompiling");
            self.remove(digest);
            return None;
        }
        // Checked on disk: record which file that was, so later loads may
        // map it (only if it did not change while it was read).
        if self.map
            && let Some(id) = identity
            && FileIdentity::of(&path) == Some(id)
        {
            match self.write_sum(digest, sum, Some(id)) {
                Ok(()) => self.checked.put(digest.to_owned(), id),
                Err(err) => {
                    tracing::debug!(%digest, error = %err.kind(), "cannot record a checked entry");
                }
            }
        }
        // SAFETY: `bytes` were just checked against the checksum `store`
        // recorded when it wrote them: wasmtime's own output for a component
        // this host compiled (see `deserialize_checked`); wasmtime checks
        // the header (version, engine settings).
        #[allow(unsafe_code)]
        let loaded = unsafe { Component::deserialize(engine, &bytes) };
        self.finish(digest, loaded)
    }

    /// Maps the entry file at `path`, already found intact with its current
    /// identity.
    fn deserialize_checked(&self, engine: &Engine, path: &Path) -> wasmtime::Result<Component> {
        // SAFETY: `deserialize_file` maps the file and trusts it to be
        // wasmtime's own compiled output that nobody changes while it is
        // mapped (the host's configuration opted in to that, see the module
        // docs). Entries are written only by `store` below, from
        // `Component::serialize` of a component this host compiled, into a
        // private (0700) directory, by write-then-rename: never changed in
        // place (a removed entry stays mapped intact). The caller found this
        // very file (same device, inode, size, modification and
        // status-change times) recorded as checked against its checksum, and
        // wasmtime checks the header (version, engine settings).
        #[allow(unsafe_code)]
        unsafe {
            Component::deserialize_file(engine, path)
        }
    }

    /// The component, or a miss that removes the entry wasmtime refused.
    fn finish(&self, digest: &str, loaded: wasmtime::Result<Component>) -> Option<Component> {
        match loaded {
            Ok(component) => Some(component),
            Err(err) => {
                tracing::debug!(%digest, error = %err, "compile cache entry refused; recompiling");
                self.remove(digest);
                None
            }
        }
    }

    fn remove(&self, digest: &str) {
        self.checked.forget(digest);
        let _ = std::fs::remove_file(self.path(digest));
        let _ = std::fs::remove_file(self.dir.join(format!("{digest}.sum")));
    }

    /// A new file in the cache directory for `digest`'s entry, to be
    /// written and then [adopted](CompileCache::adopt) (or removed).
    pub(crate) fn create_temp(&self, digest: &str) -> io::Result<(PathBuf, std::fs::File)> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(format!(
            ".{digest}.cwasm.{}.{seq}.child.tmp",
            std::process::id()
        ));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        Ok((path, file))
    }

    /// Makes the file at `temp` (from [`CompileCache::create_temp`], whole
    /// and with the checksum `sum`) `digest`'s entry, by rename.
    pub(crate) fn adopt(&self, digest: &str, temp: &Path, sum: u128) -> io::Result<()> {
        std::fs::rename(temp, self.path(digest))?;
        self.write_sum(digest, sum, None)
    }

    /// Stores `component` for `digest`, atomically (write, then rename),
    /// then its checksum. The entry is not yet marked checked: its first
    /// load reads it back and checks it, so only bytes found intact on disk
    /// are ever mapped.
    pub(crate) fn store(&self, digest: &str, component: &Component) -> io::Result<()> {
        let bytes = component.serialize().map_err(io::Error::other)?;
        self.store_bytes(digest, &bytes)
    }

    /// [`CompileCache::store`] of a component already serialized: a compile
    /// child's output that this host's engine deserialized.
    pub(crate) fn store_bytes(&self, digest: &str, bytes: &[u8]) -> io::Result<()> {
        let sum = XxHash3_128::oneshot(bytes);
        write_atomic(&self.dir, &format!("{digest}.cwasm"), &[bytes])?;
        self.write_sum(digest, sum, None)
    }

    /// Writes `digest`'s checksum file: the checksum and, once the entry
    /// was read back and found intact, the identity of the file checked.
    fn write_sum(&self, digest: &str, sum: u128, id: Option<FileIdentity>) -> io::Result<()> {
        let mut text = format!("{sum:032x}");
        if let Some(id) = id {
            for word in id.0 {
                text.push_str(&format!(" {word}"));
            }
        }
        text.push('\n');
        write_atomic(&self.dir, &format!("{digest}.sum"), &[text.as_bytes()])
    }
}

/// A `.sum` file: the entry's checksum and, if recorded, the identity of
/// the entry file it was computed for.
fn read_sum(path: &Path) -> Option<(u128, Option<FileIdentity>)> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut fields = text.split_ascii_whitespace();
    let sum = u128::from_str_radix(fields.next()?, 16).ok()?;
    let words: Vec<u64> = fields.map_while(|w| w.parse().ok()).collect();
    let id = <[u64; 7]>::try_from(words).ok().map(FileIdentity);
    Some((sum, id))
}
