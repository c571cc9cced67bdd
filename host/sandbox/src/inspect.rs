//! Describing a `.wasm` file: kind, digest, imports, exports, roles, and
//! whether this host accepts it ([`VerifierHost::inspect`]).

use crate::component::{Role, WasmKind, kind, roles};
use crate::error::LoadError;
use crate::host::{VerifierHost, admit};
use crate::verifier::LoadedVerifier;
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
    /// `None` when this host accepts it, else why not.
    pub rejected: Option<String>,
}

impl VerifierHost {
    /// Describes a `.wasm` file's contents and whether this host accepts it,
    /// without keeping it loaded.
    pub fn inspect(&self, bytes: &[u8]) -> Inspection {
        inspect(self, bytes)
    }
}

fn inspect(host: &VerifierHost, bytes: &[u8]) -> Inspection {
    let digest = hex::encode(Sha256::digest(bytes));
    let mut out = Inspection {
        digest: digest.clone(),
        size: bytes.len(),
        kind: kind(bytes),
        imports: Vec::new(),
        exports: Vec::new(),
        roles: Vec::new(),
        rejected: None,
    };
    let rejected = match out.kind {
        WasmKind::CoreModule => Some(LoadError::CoreModule),
        WasmKind::NotWasm => Some(LoadError::Corrupt(
            "missing the WebAssembly magic header".into(),
        )),
        WasmKind::Component => {
            match admit(bytes, host.load_limits()).and_then(|()| host.compile(bytes, &digest)) {
                Err(err) => Some(err),
                Ok((component, _)) => {
                    let engine = &host.shared().engine;
                    let ty = component.component_type();
                    out.imports = ty.imports(engine).map(|(n, _)| n.to_owned()).collect();
                    out.exports = ty.exports(engine).map(|(n, _)| n.to_owned()).collect();
                    out.roles = roles(out.exports.iter().map(String::as_str));
                    LoadedVerifier::prepare(Arc::clone(host.shared()), component, digest).err()
                }
            }
        }
    };
    out.rejected = rejected.map(|e| e.to_string());
    out
}
