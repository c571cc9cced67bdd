//! Describing a `.wasm` file: kind, digest, imports, exports, roles, what
//! instantiating it creates, and whether this host accepts it
//! ([`VerifierHost::inspect`]).

use crate::error::LoadError;
use crate::host::VerifierHost;
use crate::limits::Limits;
use crate::load::census::Footprint;
use crate::load::compile::{admit, compile};
use crate::load::component::{Role, WasmKind, kind, roles};
use crate::verifier::LoadedVerifier;
use crate::verifier::optimized::TierStatus;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// A description of a `.wasm` file.
#[derive(Debug, Clone, Serialize)]
pub struct Inspection {
    /// Lowercase hex SHA-256 of the bytes.
    pub digest: String,
    /// Size in bytes.
    pub size: usize,
    /// What the bytes are.
    pub kind: WasmKind,
    /// Import names (components only).
    pub imports: Vec<String>,
    /// Export names (components only).
    pub exports: Vec<String>,
    /// Verifier roles found among the exports.
    pub roles: Vec<Role>,
    /// The roles this host calls through their packed entry point
    /// (`verdict:packed`, exported beside the standard interface; see
    /// [`HostConfig::packed_packets`](crate::HostConfig::packed_packets)).
    pub packed: Vec<Role>,
    /// True when it exports `verdict:verifier/warm-up` (since 0.1.1): this
    /// host calls its `warm` on every fresh instance before the instance's
    /// one call.
    pub warm_up: bool,
    /// What instantiating it creates (components within the load limits).
    pub footprint: Option<Footprint>,
    /// `None` when this host accepts it and it can instantiate under the
    /// limits inspected against, else why not (every forbidden import is
    /// named).
    pub rejected: Option<String>,
}

impl VerifierHost {
    /// Describes a `.wasm` file's contents and whether this host accepts it
    /// and can instantiate it under the default [`Limits`], without keeping
    /// it loaded.
    pub fn inspect(&self, bytes: &[u8]) -> Inspection {
        inspect(self, bytes, &Limits::default())
    }

    /// [`VerifierHost::inspect`] under a tenant's `limits`: a component
    /// that needs more instances, memories or tables than they allow is
    /// rejected, since no call could ever instantiate it.
    pub fn inspect_for(&self, bytes: &[u8], limits: &Limits) -> Inspection {
        inspect(self, bytes, limits)
    }
}

fn inspect(host: &VerifierHost, bytes: &[u8], limits: &Limits) -> Inspection {
    let digest = hex::encode(Sha256::digest(bytes));
    let mut out = Inspection {
        digest: digest.clone(),
        size: bytes.len(),
        kind: kind(bytes),
        imports: Vec::new(),
        exports: Vec::new(),
        roles: Vec::new(),
        packed: Vec::new(),
        warm_up: false,
        footprint: None,
        rejected: None,
    };
    let rejected = match out.kind {
        WasmKind::CoreModule => Some(LoadError::CoreModule),
        WasmKind::NotWasm => Some(LoadError::Corrupt(
            "missing the WebAssembly magic header".into(),
        )),
        WasmKind::Component => {
            let admitted = admit(bytes, host.load_limits()).and_then(|footprint| {
                out.footprint = Some(footprint);
                let shared = host.shared_for(&footprint)?;
                compile(&shared, bytes, &digest)
                    .map(|(component, _)| (component, footprint, shared))
            });
            match admitted {
                Err(err) => Some(err),
                Ok((component, footprint, shared)) => {
                    let ty = component.component_type();
                    out.imports = ty
                        .imports(&shared.engine)
                        .map(|(n, _)| n.to_owned())
                        .collect();
                    out.exports = ty
                        .exports(&shared.engine)
                        .map(|(n, _)| n.to_owned())
                        .collect();
                    out.roles = roles(out.exports.iter().map(String::as_str));
                    let status = TierStatus::settled(shared.tier);
                    LoadedVerifier::prepare(
                        Arc::clone(&shared),
                        component,
                        digest,
                        footprint,
                        status,
                    )
                    .and_then(|verifier| {
                        out.packed = [Role::Completion, Role::Progress]
                            .into_iter()
                            .filter(|role| verifier.calls_packed(*role))
                            .collect();
                        out.warm_up = verifier.warms_up();
                        footprint.fits(limits, shared.load.max_memories)
                    })
                    .err()
                }
            }
        }
    };
    out.rejected = rejected.map(|e| e.to_string());
    out
}
