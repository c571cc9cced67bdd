//! What a byte string and a component's exports say: the WebAssembly kind
//! by its header, and the verifier roles by the interfaces exported.

use serde::Serialize;

use crate::bindings::{ApiVersion, PACKAGE, PACKED_PACKAGE, in_series};
use crate::error::LoadError;

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

impl WasmKind {
    /// What `bytes` are, by their 8-byte header (nothing else is read).
    pub fn of(bytes: &[u8]) -> Self {
        kind(bytes)
    }
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

/// Classifies bytes by the WebAssembly header: magic `\0asm`, then version
/// `01 00 00 00` for core modules or `0d 00 01 00` for components.
pub fn kind(bytes: &[u8]) -> WasmKind {
    match bytes.get(..8) {
        Some([0, b'a', b's', b'm', 1, 0, 0, 0]) => WasmKind::CoreModule,
        Some([0, b'a', b's', b'm', _, _, 1, 0]) => WasmKind::Component,
        _ => WasmKind::NotWasm,
    }
}

/// The `verdict:verifier` interfaces that give each role (in every version).
const ROLE_EXPORTS: &[(&str, Role)] = &[
    ("completion", Role::Completion),
    ("progress", Role::Progress),
];

/// The role and WIT version an export name gives, if any.
fn role_of(name: &str) -> Option<(Role, ApiVersion)> {
    let (api, interface) = ApiVersion::of_interface(name)?;
    ROLE_EXPORTS
        .iter()
        .find(|(exported, _)| *exported == interface)
        .map(|(_, role)| (*role, api))
}

/// The roles implied by a component's export names.
pub(crate) fn roles<'a>(exports: impl IntoIterator<Item = &'a str>) -> Vec<Role> {
    let mut roles = Vec::new();
    for (role, _) in exports.into_iter().filter_map(role_of) {
        if !roles.contains(&role) {
            roles.push(role);
        }
    }
    roles
}

/// The export name that gives `role`, if any.
pub(crate) fn role_export<'a>(
    exports: impl IntoIterator<Item = &'a str>,
    role: Role,
) -> Option<&'a str> {
    exports
        .into_iter()
        .find(|name| role_of(name).is_some_and(|(r, _)| r == role))
}

/// The packed entry point (`verdict:packed/<role>@<series>.x`) exported
/// for `role`, if any.
pub(crate) fn packed_export<'a>(
    exports: impl IntoIterator<Item = &'a str>,
    role: Role,
    series: &str,
) -> Option<&'a str> {
    let interface = ROLE_EXPORTS
        .iter()
        .find(|(_, r)| *r == role)
        .map(|(name, _)| *name)?;
    exports.into_iter().find(|name| {
        name.split_once('@').is_some_and(|(path, version)| {
            path.strip_prefix(PACKED_PACKAGE)
                .and_then(|rest| rest.strip_prefix('/'))
                == Some(interface)
                && in_series(version, series)
        })
    })
}

/// The interface a verifier may export for its start-up work (since
/// `0.1.1`): `warm`, called once on each fresh instance before its check.
const WARM_EXPORT: &str = "warm-up";

/// The `warm-up` export of version `api` (any of its patches), if any.
pub(crate) fn warm_export<'a>(
    exports: impl IntoIterator<Item = &'a str>,
    api: ApiVersion,
) -> Option<&'a str> {
    exports
        .into_iter()
        .find(|name| ApiVersion::of_interface(name) == Some((api, WARM_EXPORT)))
}

/// The WIT version a component's verifier exports were built against:
/// `None` without any; an error when they mix versions, or when they are
/// only of versions this host does not serve (a verifier newer than it).
pub(crate) fn api_version<'a>(
    exports: impl IntoIterator<Item = &'a str>,
) -> Result<Option<ApiVersion>, LoadError> {
    let mut found: Option<(ApiVersion, &str)> = None;
    let mut unserved = None;
    for name in exports {
        let Some((_, api)) = role_of(name) else {
            let ours = name
                .strip_prefix(PACKAGE)
                .is_some_and(|rest| rest.starts_with('/'));
            if ours && ApiVersion::of_interface(name).is_none() && unserved.is_none() {
                unserved = Some(name);
            }
            continue;
        };
        match found {
            Some((first, first_name)) if first != api => {
                return Err(LoadError::Link(format!(
                    "`{first_name}` and `{name}` are from different versions of {PACKAGE}"
                )));
            }
            Some(_) => {}
            None => found = Some((api, name)),
        }
    }
    match (found, unserved) {
        (None, Some(name)) => {
            let served: Vec<&str> = ApiVersion::ALL
                .iter()
                .map(|api| api.major_minor())
                .collect();
            Err(LoadError::Link(format!(
                "`{name}` is of a version of {PACKAGE} this host does not serve (it serves {})",
                served.join(", ")
            )))
        }
        (found, _) => Ok(found.map(|(api, _)| api)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_and_the_version_come_from_the_exports() {
        let exports = [
            "verdict:verifier/progress@0.1.2",
            "wasi:cli/run@0.2.0",
            "verdict:verifier/completion@0.1.0",
        ];
        assert_eq!(roles(exports), [Role::Progress, Role::Completion]);
        assert_eq!(
            role_export(exports, Role::Completion),
            Some("verdict:verifier/completion@0.1.0")
        );
        assert_eq!(api_version(exports), Ok(Some(ApiVersion::V0_1)));
        assert_eq!(api_version(["wasi:cli/run@0.2.0"]), Ok(None));
    }

    #[test]
    fn a_verifier_of_an_unserved_version_is_named() {
        let newer = ["verdict:verifier/completion@0.2.0"];
        assert!(roles(newer).is_empty());
        let Err(LoadError::Link(message)) = api_version(newer) else {
            panic!("refused");
        };
        assert!(
            message.contains("verdict:verifier/completion@0.2.0"),
            "{message}"
        );
        assert!(message.contains("serves 0.1"), "{message}");
        // Beside a served export, a newer one is not a role.
        let both = [
            "verdict:verifier/completion@0.1.0",
            "verdict:verifier/progress@0.2.0",
        ];
        assert_eq!(api_version(both), Ok(Some(ApiVersion::V0_1)));
        // A served version without a role export has none.
        assert_eq!(api_version(["verdict:verifier/types@0.1.0"]), Ok(None));
    }

    #[test]
    fn packed_entry_points_are_found_by_role_and_version() {
        let exports = [
            "verdict:verifier/completion@0.1.0",
            "verdict:packed/completion@0.1.3",
            "verdict:packed/progress@0.2.0",
            "verdict:packedx/progress@0.1.0",
        ];
        assert_eq!(
            packed_export(exports, Role::Completion, "0.1"),
            Some("verdict:packed/completion@0.1.3")
        );
        // Another major.minor, or another package, is not ours to call.
        assert_eq!(packed_export(exports, Role::Progress, "0.1"), None);
        // Packed exports give no role by themselves.
        assert_eq!(roles(exports), [Role::Completion]);
    }

    #[test]
    fn the_warm_up_export_is_found_by_version() {
        let exports = [
            "verdict:verifier/completion@0.1.1",
            "verdict:verifier/warm-up@0.1.1",
        ];
        assert_eq!(
            warm_export(exports, ApiVersion::V0_1),
            Some("verdict:verifier/warm-up@0.1.1")
        );
        // Another package's or an unserved version's is not ours to call,
        // and warming up gives no role.
        let others = [
            "verdict:verifier/completion@0.1.1",
            "verdict:packed/warm-up@0.1.1",
            "verdict:verifier/warm-up@0.2.0",
        ];
        assert_eq!(warm_export(others, ApiVersion::V0_1), None);
        assert_eq!(roles(exports), [Role::Completion]);
        assert_eq!(api_version(exports), Ok(Some(ApiVersion::V0_1)));
    }
}
