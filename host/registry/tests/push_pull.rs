//! Push, pull by tag and by digest, the cache, offline.

use super::support::{DevRegistry, files_under};
use super::{client, component, info};
use verdict_registry::{OciRef, Options, Origin, Registry, RegistryError};

#[test]
fn push_then_pull_by_tag_and_by_digest_then_from_the_cache_with_the_registry_gone() {
    let Some(mut reg) = DevRegistry::start(None) else {
        return;
    };
    let bytes = component(1, 200_000);
    let tag = OciRef::parse(&reg.reference("team/check:v1")).unwrap();
    let started = std::time::Instant::now();
    let pushed = client(None).push_blocking(&tag, &bytes, &info()).unwrap();
    eprintln!("push of {} bytes: {:?}", bytes.len(), started.elapsed());
    assert!(
        verdict_registry::check_digest(&pushed.digest),
        "{}",
        pushed.digest
    );
    assert_eq!(pushed.layer_digest, verdict_registry::sha256(&bytes));

    let cache = tempfile::tempdir().unwrap();
    let registry = client(Some(cache.path()));
    let started = std::time::Instant::now();
    let by_tag = registry.fetch_blocking(&tag, &[]).unwrap();
    eprintln!("pull by tag: {:?}", started.elapsed());
    assert_eq!(by_tag.bytes, bytes);
    assert_eq!(
        by_tag.digest, pushed.digest,
        "the tag resolves to the pushed manifest"
    );
    assert_eq!(by_tag.origin, Origin::Registry);
    assert_eq!(
        by_tag.reference.digest.as_deref(),
        Some(pushed.digest.as_str())
    );

    // By digest, with a fresh cache: pulled and verified.
    let pinned = OciRef::parse(&reg.reference(&format!("team/check@{}", pushed.digest))).unwrap();
    let other = tempfile::tempdir().unwrap();
    let by_digest = client(Some(other.path()))
        .fetch_blocking(&pinned, &[])
        .unwrap();
    assert_eq!(
        (by_digest.bytes, by_digest.origin),
        (bytes.clone(), Origin::Registry)
    );

    // The same digest again, the registry stopped: served by the cache.
    reg.stop();
    let started = std::time::Instant::now();
    let again = registry.fetch_blocking(&pinned, &[]).unwrap();
    eprintln!("fetch from the cache: {:?}", started.elapsed());
    assert_eq!((again.bytes, again.origin), (bytes, Origin::Cache));
    // A tag needs the registry (it is resolved at every load) ...
    assert!(matches!(
        registry.fetch_blocking(&tag, &[]),
        Err(RegistryError::Connect { .. })
    ));
    // ... unless offline, where it is what it last resolved to.
    let offline = Registry::new(Options {
        cache_dir: Some(cache.path().to_owned()),
        offline: true,
        ..Options::default()
    });
    let cached = offline.fetch_blocking(&tag, &[]).unwrap();
    assert_eq!(
        (cached.digest, cached.origin),
        (pushed.digest, Origin::Cache)
    );
    assert!(
        files_under(cache.path()).iter().all(|p| !p
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".partial-")),
        "no temporary file is left in the cache"
    );
}

#[test]
fn offline_with_an_empty_cache_fails_clearly_and_contacts_nothing() {
    let cache = tempfile::tempdir().unwrap();
    let offline = Registry::new(Options {
        cache_dir: Some(cache.path().to_owned()),
        offline: true,
        ..Options::default()
    });
    // Port 9 (discard): nothing is contacted anyway.
    let r = OciRef::parse("oci://127.0.0.1:9/team/check:v1").unwrap();
    let err = offline.fetch_blocking(&r, &[]).unwrap_err();
    assert!(matches!(err, RegistryError::NotCached { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("oci://127.0.0.1:9/team/check:v1") && text.contains("--offline"),
        "{text}"
    );
    let no_cache = Registry::new(Options {
        offline: true,
        ..Options::default()
    });
    assert!(matches!(
        no_cache.fetch_blocking(&r, &[]),
        Err(RegistryError::OfflineWithoutCache)
    ));
}

#[test]
fn an_allowlist_refuses_a_tag_that_moved_to_another_digest() {
    let Some(reg) = DevRegistry::start(None) else {
        return;
    };
    let tag = OciRef::parse(&reg.reference("team/check:stable")).unwrap();
    let first = client(None)
        .push_blocking(&tag, &component(2, 1000), &info())
        .unwrap();
    let allowed = vec![first.digest.clone()];
    assert!(client(None).fetch_blocking(&tag, &allowed).is_ok());
    // The tag is rotated to new bytes the tenant has not allowed.
    let second = client(None)
        .push_blocking(&tag, &component(3, 1000), &info())
        .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let err = client(Some(cache.path()))
        .fetch_blocking(&tag, &allowed)
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, RegistryError::NotAllowed { .. }), "{text}");
    assert!(
        text.contains(&second.digest) && text.contains(&first.digest),
        "{text}"
    );
    assert!(
        super::support::files_under(cache.path()).is_empty(),
        "nothing cached"
    );
}
