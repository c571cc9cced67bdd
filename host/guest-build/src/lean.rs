//! Lean guests: a core module built without WASI, made a component.

use std::path::Path;

use crate::Error;

/// Encodes the core module at `module` (its WIT world embedded by
/// `wit-bindgen`) as a component at `component`, written only when its
/// bytes change so that a rebuilt but identical guest keeps its file.
pub(crate) fn componentize(package: &str, module: &Path, component: &Path) -> Result<(), Error> {
    let core = std::fs::read(module).map_err(Error::Io)?;
    let bytes = componentize_module(&core).map_err(|err| Error::Componentize {
        package: package.to_owned(),
        reason: err.to_string(),
    })?;
    if std::fs::read(component).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    std::fs::write(component, bytes).map_err(Error::Io)
}

/// Why a core module could not be made a component: what the component
/// encoder (`wit-component`) said.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct EncodeError(String);

/// Encodes a core module built with `wit-bindgen` (a verifier built lean
/// with the `verdict-guest` SDK: its WIT world is embedded in the module's
/// `component-type` custom sections) as a component, validating both.
/// Any bytes may be given: what is not a valid core module is an error.
pub fn componentize_module(core: &[u8]) -> Result<Vec<u8>, EncodeError> {
    // Validated first: the encoder trusts section sizes (wit-component
    // 0.239 slices past the end of a truncated module, and panics).
    wasmparser::Validator::new()
        .validate_all(core)
        .map_err(|err| EncodeError(format!("not a valid core module: {err}")))?;
    wit_component::ComponentEncoder::default()
        .validate(true)
        .module(core)
        .map_err(failed)?
        .encode()
        .map_err(failed)
}

/// The encoder's error (anyhow's) with its causes (`{:#}`).
fn failed(err: impl std::fmt::Display) -> EncodeError {
    EncodeError(format!("{err:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_truncated_module_is_refused_not_a_panic() {
        // One function type, one function, then a code section that
        // claims 100 bytes where 4 are left: the encoder (wit-component
        // 0.239) slices past the end when it gets this unvalidated, and
        // panics.
        let truncated = b"\0asm\x01\0\0\0\x01\x04\x01\x60\0\0\x03\x02\x01\0\x0a\x64\x01\x02\0\x0b";
        let refused = componentize_module(truncated).unwrap_err();
        assert!(
            refused.to_string().contains("not a valid core module"),
            "{refused}"
        );
    }

    #[test]
    fn bytes_that_are_not_a_module_are_refused_by_name_and_write_nothing() {
        let dir = std::env::temp_dir().join(format!("verdict-lean-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let module = dir.join("not_a_guest.wasm");
        let component = dir.join("not_a_guest.component.wasm");
        std::fs::write(&module, b"not a core module").unwrap();
        let refused = componentize("not-a-guest", &module, &component).unwrap_err();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            matches!(&refused, Error::Componentize { package, .. } if package == "not-a-guest"),
            "{refused}"
        );
        assert!(!component.exists());
    }
}
