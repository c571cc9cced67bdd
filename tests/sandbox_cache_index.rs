//! Loads through the compile cache's digest index: an unchanged file loads
//! again as the same verifier; a changed file (new contents, however
//! quickly rewritten) is read, hashed and admitted again; bytes loaded
//! before are found by their BLAKE3 hash (and, in the host that loaded
//! them, by comparison), under the limits they were admitted with; a damaged or missing index or cache entry costs a
//! recompile, never a wrong verifier.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use sha2::{Digest, Sha256};
use verdict_policy::CheckContext;
use verdict_sandbox::{HostConfig, VerifierHost};
use verdict_test_support::{guests, read_packet, ready_tenant};

fn host(cache: &std::path::Path) -> VerifierHost {
    VerifierHost::new(HostConfig {
        cache_dir: Some(cache.to_owned()),
        ..HostConfig::default()
    })
    .unwrap()
}

fn sha256(path: &str) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).unwrap()))
}

#[test]
fn a_rewritten_file_is_loaded_as_its_new_contents() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("verifier.wasm");
    std::fs::copy(guests::ARTIFACT_READY, &path).unwrap();
    let host = host(cache.path());
    let first = host.load_file(&path).unwrap();
    assert_eq!(first.digest(), sha256(guests::ARTIFACT_READY));
    // Unchanged: the same verifier again (from the index and the cache).
    assert_eq!(host.load_file(&path).unwrap().digest(), first.digest());
    assert_eq!(
        self::host(cache.path()).load_file(&path).unwrap().digest(),
        first.digest()
    );
    // Rewritten in place at once with other contents: the new verifier.
    std::fs::write(&path, std::fs::read(guests::RECEIPT_REQUIRED).unwrap()).unwrap();
    let second = host.load_file(&path).unwrap();
    assert_eq!(second.digest(), sha256(guests::RECEIPT_REQUIRED));
    // Replaced by another file (a new inode): the new verifier.
    let other = dir.path().join("other.wasm");
    std::fs::copy(guests::ARTIFACT_READY, &other).unwrap();
    std::fs::rename(&other, &path).unwrap();
    assert_eq!(host.load_file(&path).unwrap().digest(), first.digest());
}

#[test]
fn damaged_index_and_cache_entries_cost_a_recompile_only() {
    let cache = tempfile::tempdir().unwrap();
    let host = host(cache.path());
    let digest = host
        .load_file(guests::ARTIFACT_READY)
        .unwrap()
        .digest()
        .to_owned();
    let mut damaged = 0;
    for entry in walk(cache.path()) {
        let mut bytes = std::fs::read(&entry).unwrap();
        let at = bytes.len() / 2;
        bytes[at] ^= 0x55;
        replace(&entry, &bytes);
        damaged += 1;
    }
    assert!(damaged >= 2, "an index entry and a cache entry");
    // A new host (a new process, say) reads the damaged files: the host
    // that wrote them remembers what they said and does not read them again.
    let host = self::host(cache.path());
    let verifier = host.load_file(guests::ARTIFACT_READY).unwrap();
    assert_eq!(verifier.digest(), digest);
    let (tenant, _) = ready_tenant("cache-index");
    let verdict = verifier
        .check(&tenant, &read_packet(), &CheckContext::new())
        .result
        .unwrap();
    assert!(verdict.complete, "{verdict:?}");
    // Removed entries: the same.
    for entry in walk(cache.path()) {
        std::fs::remove_file(entry).unwrap();
    }
    assert_eq!(
        self::host(cache.path())
            .load_file(guests::ARTIFACT_READY)
            .unwrap()
            .digest(),
        digest
    );
}

/// `load_bytes` records what it established (digest, census) under the
/// bytes' BLAKE3 hash; a later host loading the same bytes takes it from
/// there, and a host with stricter limits admits the bytes again.
#[test]
fn bytes_loaded_before_are_found_by_their_hash_under_the_same_limits() {
    let cache = tempfile::tempdir().unwrap();
    let ours = std::fs::read(guests::ARTIFACT_READY).unwrap();
    let theirs = std::fs::read(guests::RECEIPT_REQUIRED).unwrap();
    host(cache.path()).load_bytes(&ours).unwrap();
    host(cache.path()).load_bytes(&theirs).unwrap();
    let entries = || -> Vec<_> {
        walk(&cache.path().join("index"))
            .into_iter()
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("b3-"))
            })
            .collect()
    };
    assert_eq!(entries().len(), 2, "one entry per component's bytes");
    let (verifier, source) = host(cache.path()).load_bytes(&ours).unwrap();
    assert_eq!(source, verdict_sandbox::LoadSource::Cache);
    assert_eq!(verifier.digest(), sha256(guests::ARTIFACT_READY));
    // What a new host reports comes from the entry (rewritten here to say
    // the other component's digest and census), not from hashing again.
    let text = |bytes: &[u8]| {
        let digest = hex::encode(Sha256::digest(bytes));
        entries()
            .into_iter()
            .map(|p| std::fs::read_to_string(p).unwrap())
            .find(|t| t.starts_with(&digest))
            .unwrap()
    };
    let (our_text, their_text) = (text(&ours), text(&theirs));
    for entry in entries() {
        if std::fs::read_to_string(&entry).unwrap() == our_text {
            replace(&entry, their_text.as_bytes());
        }
    }
    let (verifier, _) = host(cache.path()).load_bytes(&ours).unwrap();
    assert_eq!(verifier.digest(), sha256(guests::RECEIPT_REQUIRED));
    // Stricter limits than those the entry was recorded under: admitted
    // again, and refused.
    let strict = VerifierHost::new(HostConfig {
        cache_dir: Some(cache.path().to_owned()),
        load: verdict_sandbox::LoadLimits {
            max_functions: 10,
            ..verdict_sandbox::LoadLimits::default()
        },
        ..HostConfig::default()
    })
    .unwrap();
    let refused = strict.load_bytes(&ours).err().map(|e| e.to_string());
    assert!(
        refused
            .as_deref()
            .is_some_and(|e| e.contains("max_functions")),
        "{refused:?}"
    );
}

/// The index entry and the `.sum` file are read once per host: a repeated
/// load of an unchanged file checks identities only. What is remembered is
/// keyed by identity, so a replaced file or cache entry is not mistaken for
/// the remembered one.
#[test]
fn a_host_reads_the_small_cache_files_once_and_keys_them_by_identity() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("verifier.wasm");
    std::fs::copy(guests::ARTIFACT_READY, &path).unwrap();
    let host = host(cache.path());
    let digest = host.load_file(&path).unwrap().digest().to_owned();
    // The first cached load checks the entry on disk and records it.
    host.load_file(&path).unwrap();
    let small: Vec<_> = walk(cache.path())
        .into_iter()
        .filter(|p| p.extension().is_none_or(|e| e == "sum"))
        .collect();
    assert_eq!(
        small.len(),
        3,
        "index entries for the file and its bytes, and a .sum: {small:?}"
    );
    for file in &small {
        std::fs::remove_file(file).unwrap();
    }
    // Remembered: loads without them, and writes nothing back.
    assert_eq!(host.load_file(&path).unwrap().digest(), digest);
    assert!(small.iter().all(|f| !f.exists()));
    // A new file at the path: not the remembered one.
    let other = dir.path().join("other.wasm");
    std::fs::copy(guests::RECEIPT_REQUIRED, &other).unwrap();
    std::fs::rename(&other, &path).unwrap();
    assert_eq!(
        host.load_file(&path).unwrap().digest(),
        sha256(guests::RECEIPT_REQUIRED)
    );
    // A cache entry replaced by another valid entry (the other verifier's
    // compiled code): not the remembered one either. Its `.sum` is gone, so
    // it is compiled again; the verdict shows whose code ran.
    let theirs = cache_entry(cache.path(), &sha256(guests::RECEIPT_REQUIRED));
    let ours = cache_entry(cache.path(), &digest);
    replace(&ours, &std::fs::read(theirs).unwrap());
    std::fs::copy(guests::ARTIFACT_READY, &path).unwrap();
    let (tenant, _) = ready_tenant("cache-memo");
    let verdict = host
        .load_file(&path)
        .unwrap()
        .check(&tenant, &read_packet(), &CheckContext::new())
        .result
        .unwrap();
    assert_eq!(verdict.reason.as_deref(), Some("artifact A42 is ready"));
}

/// The compiled entry `<digest>.cwasm` under the cache directory.
fn cache_entry(cache: &std::path::Path, digest: &str) -> std::path::PathBuf {
    walk(cache)
        .into_iter()
        .find(|p| {
            p.file_name()
                .is_some_and(|n| *n == *format!("{digest}.cwasm"))
        })
        .unwrap_or_else(|| panic!("no entry for {digest}"))
}

/// Replaces the file at `path` with `bytes` the way damage can reach an
/// entry that may be mapped: a new file renamed over it (rewriting a mapped
/// file in place would kill the process with `SIGBUS`; see
/// `HostConfig::map_cache_entries`).
fn replace(path: &std::path::Path, bytes: &[u8]) {
    let replacement = path.with_extension("replacement");
    std::fs::write(&replacement, bytes).unwrap();
    std::fs::rename(&replacement, path).unwrap();
}

/// Every regular file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// With `map_cache_entries`, an entry checked once is mapped on later
/// loads; an entry replaced by other bytes (by rename, as this host writes)
/// is read, refused by its checksum, and recompiled.
#[test]
fn mapped_entries_load_and_a_replaced_entry_is_recompiled() {
    let cache = tempfile::tempdir().unwrap();
    let mapping = || {
        VerifierHost::new(HostConfig {
            cache_dir: Some(cache.path().to_owned()),
            map_cache_entries: true,
            ..HostConfig::default()
        })
        .unwrap()
    };
    let (tenant, _) = ready_tenant("cache-map");
    let first = mapping().load_file(guests::ARTIFACT_READY).unwrap();
    for _ in 0..2 {
        let again = mapping().load_file(guests::ARTIFACT_READY).unwrap();
        assert_eq!(again.digest(), first.digest());
        let verdict = again
            .check(&tenant, &read_packet(), &CheckContext::new())
            .result
            .unwrap();
        assert!(verdict.complete, "{verdict:?}");
    }
    for entry in walk(cache.path()) {
        if entry.extension().is_some_and(|e| e == "cwasm") {
            let replacement = entry.with_extension("new");
            std::fs::write(&replacement, b"not a compiled component").unwrap();
            std::fs::rename(&replacement, &entry).unwrap();
        }
    }
    let verifier = mapping().load_file(guests::ARTIFACT_READY).unwrap();
    assert!(
        verifier
            .check(&tenant, &read_packet(), &CheckContext::new())
            .result
            .unwrap()
            .complete
    );
    // The loaded verifiers from before still run (their mappings stay).
    assert!(
        first
            .check(&tenant, &read_packet(), &CheckContext::new())
            .result
            .unwrap()
            .complete
    );
}

/// An entry is mapped only after it was read back from disk and found
/// intact: the store records the checksum alone, the first cached load the
/// identity of the file it checked.
#[test]
fn an_entry_is_marked_for_mapping_only_once_checked_on_disk() {
    let cache = tempfile::tempdir().unwrap();
    let fields = || {
        let sums: Vec<_> = walk(cache.path())
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "sum"))
            .collect();
        assert_eq!(sums.len(), 1, "{sums:?}");
        std::fs::read_to_string(&sums[0])
            .unwrap()
            .split_ascii_whitespace()
            .count()
    };
    let bytes = std::fs::read(guests::ARTIFACT_READY).unwrap();
    host(cache.path()).load_bytes(&bytes).unwrap();
    assert_eq!(fields(), 1, "just stored: the checksum only");
    host(cache.path()).load_bytes(&bytes).unwrap();
    assert_eq!(
        fields(),
        8,
        "checked on disk: the checksum and the file identity"
    );
}

#[test]
fn bytes_loaded_before_are_known_by_their_contents_not_their_buffer() {
    let cache = tempfile::tempdir().unwrap();
    let host = host(cache.path());
    let mut bytes = std::fs::read(guests::ARTIFACT_READY).unwrap();
    let digest = |b: &[u8]| hex::encode(Sha256::digest(b));
    let original = digest(&bytes);
    let (first, _) = host.load_bytes(&bytes).unwrap();
    assert_eq!(first.digest(), original);
    drop(first);
    // The same buffer rewritten in place, same length: its last byte ends
    // the `producers` section's "wit-component 0.245.1", still a valid
    // component, now another one.
    let last = bytes.len() - 1;
    assert_eq!(bytes[last], b'1');
    bytes[last] = b'2';
    let variant = digest(&bytes);
    let (second, source) = host.load_bytes(&bytes).unwrap();
    assert_eq!(
        (second.digest(), source),
        (variant.as_str(), verdict_sandbox::LoadSource::Compiled)
    );
    drop(second);
    // Each loads again as itself, from the cache.
    for (byte, expected) in [(b'1', &original), (b'2', &variant), (b'1', &original)] {
        bytes[last] = byte;
        let (verifier, source) = host.load_bytes(&bytes).unwrap();
        assert_eq!(
            (verifier.digest(), source),
            (expected.as_str(), verdict_sandbox::LoadSource::Cache)
        );
    }
}
