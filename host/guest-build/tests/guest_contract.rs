//! Builds every workspace guest and checks the component contract the host
//! relies on: each is a component, exports exactly the roles its
//! `verdict_guest::export!` names (each standard interface with its packed
//! twin, `verdict:packed`, which imports nothing), and imports only our
//! interfaces plus the deny-all WASI a std guest needs (except
//! `hostile-forbidden-import`).

use std::path::Path;

use verdict_guest_build::{Error, GuestBuilder};
use wasmparser::{Parser, Payload};

const COMPLETION: &str = "verdict:verifier/completion@0.1.0";
const PROGRESS: &str = "verdict:verifier/progress@0.1.0";
const ARTIFACTS: &str = "verdict:verifier/artifacts@0.1.0";

/// The packed twin of a standard role interface.
fn packed_twin(role: &str) -> String {
    role.replace("verdict:verifier/", "verdict:packed/")
}

/// Every guest with the roles it must export and whether it reads artifacts.
const GUESTS: &[(&str, &[&str], bool)] = &[
    ("artifact-ready", &[COMPLETION], true),
    ("receipt-required", &[COMPLETION], true),
    ("revision-progress", &[PROGRESS], true),
    ("good-both", &[COMPLETION, PROGRESS], true),
    ("hostile-spin", &[COMPLETION], false),
    ("hostile-alloc-bomb", &[COMPLETION], false),
    ("hostile-deep-recursion", &[COMPLETION], false),
    ("hostile-panic", &[COMPLETION], false),
    ("hostile-huge-reason", &[COMPLETION], false),
    ("hostile-huge-feedback", &[COMPLETION], false),
    ("hostile-huge-progress-key", &[PROGRESS], false),
    ("hostile-cross-tenant", &[COMPLETION], true),
    ("hostile-forbidden-import", &[COMPLETION], false),
    ("hostile-read-many", &[COMPLETION], true),
];

/// Interfaces a std `wasm32-wasip2` guest may import (package and name,
/// any 0.2.x version), besides our own.
const STD_WASI: &[&str] = &[
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/stderr",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:cli/terminal-stderr",
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
];

struct Interfaces {
    imports: Vec<String>,
    exports: Vec<String>,
}

/// The top-level imports and exports of a component.
fn interfaces(path: &Path) -> Result<Interfaces, Box<dyn std::error::Error>> {
    let bytes = std::fs::read(path)?;
    let mut found = Interfaces {
        imports: Vec::new(),
        exports: Vec::new(),
    };
    let mut depth = 0_usize;
    for payload in Parser::new(0).parse_all(&bytes) {
        match payload? {
            Payload::Version { encoding, .. } => {
                if depth == 0 {
                    assert_eq!(encoding, wasmparser::Encoding::Component, "{path:?}");
                }
                depth += 1;
            }
            Payload::End(_) => depth -= 1,
            Payload::ComponentImportSection(reader) if depth == 1 => {
                for import in reader {
                    found.imports.push(import?.name.0.to_owned());
                }
            }
            Payload::ComponentExportSection(reader) if depth == 1 => {
                for export in reader {
                    found.exports.push(export?.name.0.to_owned());
                }
            }
            _ => {}
        }
    }
    Ok(found)
}

fn unversioned(name: &str) -> &str {
    name.split('@').next().unwrap_or(name)
}

#[test]
fn guests_export_their_roles_and_import_only_what_the_host_allows() {
    let names: Vec<&str> = GUESTS.iter().map(|(name, _, _)| *name).collect();
    let builder = GuestBuilder::for_workspace_of(Path::new(env!("CARGO_MANIFEST_DIR")))
        .unwrap()
        .emit_rerun_if_changed(false);
    let built = builder.build(&names).unwrap();
    assert_eq!(built.len(), GUESTS.len());

    for (guest, (name, roles, reads)) in built.iter().zip(GUESTS) {
        assert_eq!(guest.package, *name);
        let found = interfaces(&guest.path).unwrap();

        let mut exports = found.exports.clone();
        exports.sort();
        let mut expected: Vec<String> = roles
            .iter()
            .flat_map(|r| [r.to_string(), packed_twin(r)])
            .collect();
        expected.sort();
        assert_eq!(exports, expected, "{name} exports");

        assert_eq!(
            found.imports.iter().any(|i| i == ARTIFACTS),
            *reads,
            "{name} artifacts import"
        );
        let foreign: Vec<&String> = found
            .imports
            .iter()
            .filter(|i| !i.starts_with("verdict:verifier/") && !STD_WASI.contains(&unversioned(i)))
            .collect();
        if *name == "hostile-forbidden-import" {
            assert!(
                foreign.iter().any(|i| i.starts_with("wasi:filesystem/")),
                "{name} should import wasi:filesystem, imports {:?}",
                found.imports
            );
        } else {
            assert!(foreign.is_empty(), "{name} imports {foreign:?}");
        }
    }
}

#[test]
fn packages_that_cannot_be_guests_are_named() {
    let builder = GuestBuilder::for_workspace_of(Path::new(env!("CARGO_MANIFEST_DIR")))
        .unwrap()
        .emit_rerun_if_changed(false);
    let root = builder.workspace_root().to_path_buf();
    assert!(root.join("wit").is_dir(), "{root:?}");
    match builder.build(&["verdict-guest"]) {
        Err(Error::NotACdylib(name)) => assert_eq!(name, "verdict-guest"),
        other => panic!("expected NotACdylib, got {other:?}"),
    }
    match builder.build(&["no-such-guest"]) {
        Err(error @ Error::UnknownPackage(_)) => {
            assert!(error.to_string().contains("`no-such-guest`"))
        }
        other => panic!("expected UnknownPackage, got {other:?}"),
    }
}
