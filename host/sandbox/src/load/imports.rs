//! Deny by default: the imports a verifier component may have.
//!
//! A verifier gets our read-only `artifacts` interface and a deny-all WASI
//! subset: no environment or arguments; stdin closed; stdout discarded;
//! stderr into a bounded tail buffer; `wasi:filesystem` without a single
//! preopened directory; `wasi:sockets` refusing every socket, address and
//! name lookup; `wasi:http` refusing every outgoing request (see
//! [`crate::store::deny`]). Anything else is refused at load, naming every such
//! import, before the component is ever instantiated.

use crate::bindings::in_series;
use crate::error::LoadError;

/// The imports a verifier may have, as (`namespace:package/interface`,
/// accepted `major.minor`); everything else is refused at load. Patch
/// versions float: a guest built against `wasi:io/streams@0.2.9` links
/// against the host's 0.2.x implementation. The `verdict:verifier` entries
/// are one pair per WIT version the host serves. Every entry is linked
/// (`tests/contract.rs` instantiates a component importing each).
pub const ALLOWED_IMPORTS: &[(&str, &str)] = &[
    ("verdict:verifier/types", "0.1"),
    ("verdict:verifier/artifacts", "0.1"),
    ("wasi:io/error", "0.2"),
    ("wasi:io/poll", "0.2"),
    ("wasi:io/streams", "0.2"),
    ("wasi:clocks/monotonic-clock", "0.2"),
    ("wasi:clocks/wall-clock", "0.2"),
    ("wasi:random/random", "0.2"),
    ("wasi:random/insecure", "0.2"),
    ("wasi:random/insecure-seed", "0.2"),
    ("wasi:cli/environment", "0.2"),
    ("wasi:cli/exit", "0.2"),
    ("wasi:cli/stdin", "0.2"),
    ("wasi:cli/stdout", "0.2"),
    ("wasi:cli/stderr", "0.2"),
    ("wasi:cli/terminal-input", "0.2"),
    ("wasi:cli/terminal-output", "0.2"),
    ("wasi:cli/terminal-stdin", "0.2"),
    ("wasi:cli/terminal-stdout", "0.2"),
    ("wasi:cli/terminal-stderr", "0.2"),
    // Linked deny-all: they grant nothing (crate::store::deny). The Python and
    // JavaScript toolchains import them in every default build.
    ("wasi:filesystem/types", "0.2"),
    ("wasi:filesystem/preopens", "0.2"),
    ("wasi:sockets/network", "0.2"),
    ("wasi:sockets/instance-network", "0.2"),
    ("wasi:sockets/tcp", "0.2"),
    ("wasi:sockets/tcp-create-socket", "0.2"),
    ("wasi:sockets/udp", "0.2"),
    ("wasi:sockets/udp-create-socket", "0.2"),
    ("wasi:sockets/ip-name-lookup", "0.2"),
    ("wasi:http/types", "0.2"),
    ("wasi:http/outgoing-handler", "0.2"),
];

/// True when `name` (e.g. `wasi:io/streams@0.2.6`) is on the allowlist.
pub(crate) fn is_allowed(name: &str) -> bool {
    let Some((interface, version)) = name.split_once('@') else {
        return false;
    };
    ALLOWED_IMPORTS
        .iter()
        .any(|(allowed, major_minor)| *allowed == interface && in_series(version, major_minor))
}

/// Refuses a component with imports not on the allowlist, naming all of them.
pub(crate) fn check_imports<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<(), LoadError> {
    let imports: Vec<String> = names
        .into_iter()
        .filter(|name| !is_allowed(name))
        .map(str::to_owned)
        .collect();
    if imports.is_empty() {
        return Ok(());
    }
    Err(LoadError::ForbiddenImport { imports })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::ApiVersion;

    #[test]
    fn every_served_wit_version_has_its_imports_allowed() {
        for api in ApiVersion::ALL {
            for interface in ["types", "artifacts"] {
                let name = format!("verdict:verifier/{interface}@{}.0", api.major_minor());
                assert!(is_allowed(&name), "{name}");
            }
        }
    }

    #[test]
    fn allows_our_interfaces_and_the_wasi_subset() {
        for name in [
            "verdict:verifier/artifacts@0.1.0",
            "verdict:verifier/types@0.1.3",
            "wasi:io/streams@0.2.6",
            "wasi:cli/stderr@0.2.0",
            "wasi:random/insecure-seed@0.2",
            "wasi:filesystem/types@0.2.9",
            "wasi:filesystem/preopens@0.2.12",
            "wasi:sockets/tcp@0.2.9",
            "wasi:http/outgoing-handler@0.2.10",
        ] {
            assert!(is_allowed(name), "{name}");
        }
    }

    #[test]
    fn refuses_everything_else() {
        for name in [
            "wasi:filesystem/types@0.3.0",
            "wasi:http/incoming-handler@0.2.6",
            "wasi:keyvalue/store@0.2.0",
            "wasi:io/streams@0.3.0",
            "wasi:io/streams@0.20.0",
            "wasi:io/streams",
            "verdict:verifier/artifacts@0.2.0",
            "evil:io/streams@0.2.0",
            "env",
        ] {
            assert!(!is_allowed(name), "{name}");
        }
        let refused = check_imports([
            "wasi:io/poll@0.2.1",
            "wasi:keyvalue/store@0.2.0",
            "wasi:sockets/udp@0.2.1",
            "wasi:http/incoming-handler@0.2.1",
        ]);
        assert_eq!(
            refused,
            Err(LoadError::ForbiddenImport {
                imports: vec![
                    "wasi:keyvalue/store@0.2.0".into(),
                    "wasi:http/incoming-handler@0.2.1".into()
                ]
            })
        );
        assert_eq!(
            refused.unwrap_err().to_string(),
            "imports `wasi:keyvalue/store@0.2.0`, `wasi:http/incoming-handler@0.2.1`, \
             which verifiers may not use"
        );
        assert_eq!(check_imports(["wasi:io/poll@0.2.1"]), Ok(()));
    }
}
