//! What a byte string and a component's exports say: the WebAssembly kind
//! by its header, and the verifier roles by the interfaces exported.

use serde::Serialize;

/// What a byte string is, by its 8-byte header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WasmKind {
    /// A component (layer 1).
    Component,
    /// A core module (version 1).
    CoreModule,
    /// Not WebAssembly.
    NotWasm,
}

/// A verifier role, from the interfaces a component exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Exports `verdict:verifier/completion`.
    Completion,
    /// Exports `verdict:verifier/progress`.
    Progress,
}

/// The interface names that give each role (package version 0.1.x).
const ROLE_EXPORTS: &[(&str, Role)] = &[
    ("verdict:verifier/completion@0.1.", Role::Completion),
    ("verdict:verifier/progress@0.1.", Role::Progress),
];

/// Classifies bytes by the WebAssembly header: magic `\0asm`, then version
/// `01 00 00 00` for core modules or `0d 00 01 00` for components.
pub fn kind(bytes: &[u8]) -> WasmKind {
    match bytes.get(..8) {
        Some([0, b'a', b's', b'm', 1, 0, 0, 0]) => WasmKind::CoreModule,
        Some([0, b'a', b's', b'm', _, _, 1, 0]) => WasmKind::Component,
        _ => WasmKind::NotWasm,
    }
}

/// The roles implied by a component's export names.
pub(crate) fn roles<'a>(exports: impl IntoIterator<Item = &'a str>) -> Vec<Role> {
    let mut roles = Vec::new();
    for name in exports {
        for (prefix, role) in ROLE_EXPORTS {
            if name.starts_with(prefix) && !roles.contains(role) {
                roles.push(*role);
            }
        }
    }
    roles
}

/// The export name that gives `role`, if any.
pub(crate) fn role_export<'a>(
    exports: impl IntoIterator<Item = &'a str>,
    role: Role,
) -> Option<&'a str> {
    exports.into_iter().find(|name| {
        ROLE_EXPORTS
            .iter()
            .any(|(prefix, r)| *r == role && name.starts_with(prefix))
    })
}
