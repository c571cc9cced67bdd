//! The served tenants: tokens, sandbox tenants, concurrency permits and
//! their verifiers, each in a slot swapped atomically.

use crate::error::ServeError;
use crate::metrics::{Metrics, RoleLabels};
use crate::settings::{Settings, TenantSettings, VerifierSpec};
use crate::token::parse_hash;
use arc_swap::ArcSwapOption;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use verdict_records::Recorder;
use verdict_sandbox::{DirStore, LoadError, LoadedVerifier, Role, Tenant, VerifierHost};

/// A loaded verifier and where it came from.
#[derive(Debug)]
pub struct Slot {
    /// The verifier.
    pub verifier: LoadedVerifier,
    /// The configured spec, or `upload` for one put through the API.
    pub origin: String,
    /// How long it took to load.
    pub load_time: Duration,
    /// The SHA-256 (hex) of the configured spec's bytes this slot stands
    /// for (an upload keeps the one of the slot it replaced): a reload
    /// keeps the slot only while the spec still has these bytes.
    pub source: Option<String>,
}

/// One tenant as served.
#[derive(Debug)]
pub struct TenantState {
    /// Its name.
    pub name: String,
    /// Its token's hash.
    pub token_hash: Option<[u8; 32]>,
    /// The sandbox tenant (limits, artifact store).
    pub tenant: Tenant,
    /// Its checks running at once.
    pub permits: Arc<Semaphore>,
    /// Its permit count.
    pub max_concurrent: usize,
    /// The completion verifier.
    pub completion: ArcSwapOption<Slot>,
    /// The progress verifier.
    pub progress: ArcSwapOption<Slot>,
    /// Where its checks are recorded, when they are.
    pub recorder: Option<Arc<Recorder>>,
    /// The settings it was built from (for reloads).
    pub settings: TenantSettings,
}

impl TenantState {
    /// The slot of `role`.
    pub fn slot(&self, role: Role) -> &ArcSwapOption<Slot> {
        match role {
            Role::Completion => &self.completion,
            Role::Progress => &self.progress,
        }
    }
}

/// Every served tenant, and the admin's token hash.
#[derive(Debug, Default)]
pub struct Catalog {
    /// Tenants by name.
    pub tenants: BTreeMap<String, Arc<TenantState>>,
    /// The admin token's hash.
    pub admin_hash: Option<[u8; 32]>,
}

/// The name of a role in routes and metrics.
pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::Completion => "completion",
        Role::Progress => "progress",
    }
}

/// Parses a role path segment.
pub fn parse_role(text: &str) -> Option<Role> {
    match text {
        "completion" => Some(Role::Completion),
        "progress" => Some(Role::Progress),
        _ => None,
    }
}

/// The longest tenant name.
pub const MAX_TENANT_NAME: usize = 64;

/// A tenant name as a crate name: ASCII letters, digits, `-` and `_`,
/// starting with a letter; nothing a path or a metrics label must escape.
pub fn valid_tenant_name(name: &str) -> bool {
    name.len() <= MAX_TENANT_NAME
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn hash_of(tenant: &str, what: &str, text: Option<&str>) -> Result<Option<[u8; 32]>, ServeError> {
    match text {
        None => Ok(None),
        Some(text) => parse_hash(text)
            .map(Some)
            .ok_or_else(|| ServeError::Tenant {
                tenant: tenant.to_owned(),
                message: format!("{what} must be 64 hex digits (`verdict serve hash-token`)"),
            }),
    }
}

/// Loads `spec` for `role` and checks the component exports it.
pub fn load(
    host: &VerifierHost,
    spec: &VerifierSpec,
    role: Role,
) -> Result<(LoadedVerifier, Duration), String> {
    let started = Instant::now();
    let verifier = match spec {
        VerifierSpec::File(path) => host.load_file(path).map_err(|e| match e {
            LoadError::Io(why) => format!("cannot read {}: {why}", path.display()),
            other => format!("{} is rejected: {other}", path.display()),
        })?,
        VerifierSpec::Bytes { label, bytes } => {
            host.load_bytes(bytes)
                .map_err(|e| format!("{label} is rejected: {e}"))?
                .0
        }
    };
    check_role(&verifier, role)?;
    Ok((verifier, started.elapsed()))
}

/// Refuses a verifier that does not export `role`.
pub fn check_role(verifier: &LoadedVerifier, role: Role) -> Result<(), String> {
    let has = match role {
        Role::Completion => verifier.has_completion(),
        Role::Progress => verifier.has_progress(),
    };
    if has {
        Ok(())
    } else {
        Err(format!(
            "the component does not export `{}`",
            role_name(role)
        ))
    }
}

/// Keeps the component of `spec` in the tenant's record store, so its
/// records replay without the file.
fn keep_component(recorder: &Recorder, spec: &VerifierSpec) -> Result<(), String> {
    let bytes: Arc<[u8]> = match spec {
        VerifierSpec::File(path) => std::fs::read(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?
            .into(),
        VerifierSpec::Bytes { bytes, .. } => Arc::clone(bytes),
    };
    recorder
        .keep_component(bytes)
        .map_err(|e| format!("record_dir: {e}"))
}

/// The SHA-256 (hex) of the bytes `spec` names now (a file rebuilt in
/// place has another).
fn spec_digest(spec: &VerifierSpec) -> Result<String, String> {
    use sha2::Digest;
    let digest = match spec {
        VerifierSpec::File(path) => sha2::Sha256::digest(
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?,
        ),
        VerifierSpec::Bytes { bytes, .. } => sha2::Sha256::digest(bytes),
    };
    Ok(hex::encode(digest))
}

fn origin(spec: &VerifierSpec) -> String {
    match spec {
        VerifierSpec::File(path) => path.display().to_string(),
        VerifierSpec::Bytes { label, .. } => label.clone(),
    }
}

impl Catalog {
    /// Builds the catalog of `settings`, loading every verifier now. A
    /// tenant of `previous` whose settings for a role did not change keeps
    /// its verifier (an upload included); its permits are kept too when
    /// its limit did not change.
    pub fn build(
        host: &VerifierHost,
        settings: &Settings,
        previous: Option<&Catalog>,
        metrics: &Metrics,
    ) -> Result<Self, ServeError> {
        let admin_hash = hash_of(
            "",
            "[server] admin_token_hash",
            settings.server.admin_token_hash.as_deref(),
        )
        .map_err(|_| {
            ServeError::Settings(
                "[server] admin_token_hash must be 64 hex digits (`verdict serve hash-token`)"
                    .into(),
            )
        })?;
        let mut tenants = BTreeMap::new();
        for t in &settings.tenants {
            let old = previous.and_then(|p| p.tenants.get(&t.name));
            let state = build_tenant(host, t, old.map(Arc::as_ref), metrics)?;
            tenants.insert(t.name.clone(), Arc::new(state));
        }
        Ok(Self {
            tenants,
            admin_hash,
        })
    }
}

fn build_tenant(
    host: &VerifierHost,
    t: &TenantSettings,
    old: Option<&TenantState>,
    metrics: &Metrics,
) -> Result<TenantState, ServeError> {
    let fail = |message: String| ServeError::Tenant {
        tenant: t.name.clone(),
        message,
    };
    if !valid_tenant_name(&t.name) {
        return Err(fail(format!(
            "a tenant name is 1 to {MAX_TENANT_NAME} ASCII letters, digits, `-` and `_`, \
             starting with a letter (it is a path segment and a metrics label)"
        )));
    }
    if t.max_concurrent_checks == 0 {
        return Err(fail("max_concurrent_checks must be positive".into()));
    }
    let token_hash = hash_of(&t.name, "token_hash", t.token_hash.as_deref())?;
    let store = DirStore::open(&t.artifact_root)
        .map_err(|e| fail(format!("cannot open {}: {e}", t.artifact_root.display())))?;
    let tenant = Tenant::new(t.name.clone(), t.limits, Arc::new(store))
        .with_ready_instances(t.ready_instances);
    let permits = match old {
        Some(old) if old.max_concurrent == t.max_concurrent_checks => old.permits.clone(),
        _ => Arc::new(Semaphore::new(t.max_concurrent_checks)),
    };
    let state = TenantState {
        name: t.name.clone(),
        token_hash,
        tenant,
        permits,
        max_concurrent: t.max_concurrent_checks,
        completion: ArcSwapOption::empty(),
        progress: ArcSwapOption::empty(),
        recorder: match &t.record_dir {
            Some(dir) => Some(
                crate::recording::recorder_for(dir, t.record_queue_bytes)
                    .map_err(|e| fail(format!("record_dir: {e}")))?,
            ),
            None => None,
        },
        settings: t.clone(),
    };
    for (role, spec) in [
        (Role::Completion, &t.completion),
        (Role::Progress, &t.progress),
    ] {
        let Some(spec) = spec else { continue };
        // Kept when the spec is the same and so are its bytes (a file is
        // compared by content: one rebuilt in place is loaded again).
        let source = spec_digest(spec).map_err(fail)?;
        let kept = old.filter(|o| {
            let before = match role {
                Role::Completion => &o.settings.completion,
                Role::Progress => &o.settings.progress,
            };
            before.as_ref() == Some(spec)
        });
        if let Some(slot) = kept
            .and_then(|o| o.slot(role).load_full())
            .filter(|slot| slot.source.as_deref() == Some(source.as_str()))
        {
            state.slot(role).store(Some(slot));
            continue;
        }
        let (verifier, load_time) = load(host, spec, role).map_err(fail)?;
        if let Some(recorder) = &state.recorder {
            keep_component(recorder, spec).map_err(fail)?;
        }
        metrics
            .load_seconds
            .get_or_create(&RoleLabels {
                tenant: t.name.clone(),
                role: role_name(role).to_owned(),
            })
            .observe(load_time.as_secs_f64());
        state.slot(role).store(Some(Arc::new(Slot {
            verifier,
            origin: origin(spec),
            load_time,
            source: Some(source),
        })));
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::valid_tenant_name;

    #[test]
    fn tenant_names_are_like_crate_names() {
        for ok in ["alpha", "acme-corp", "t_1", "A"] {
            assert!(valid_tenant_name(ok), "{ok}");
        }
        let long = "a".repeat(65);
        for bad in [
            "",
            "a\"b",
            "a\\b",
            "1abc",
            "-a",
            "a b",
            "a.b",
            "a/b",
            "é",
            long.as_str(),
        ] {
            assert!(!valid_tenant_name(bad), "{bad}");
        }
    }
}
