//! Lean guests: a core module built without WASI, made a component.

use std::path::Path;

use crate::Error;

/// Encodes the core module at `module` (its WIT world embedded by
/// `wit-bindgen`) as a component at `component`, written only when its
/// bytes change so that a rebuilt but identical guest keeps its file.
pub(crate) fn componentize(package: &str, module: &Path, component: &Path) -> Result<(), Error> {
    let core = std::fs::read(module).map_err(Error::Io)?;
    let refused = |err| Error::Componentize {
        package: package.to_owned(),
        reason: format!("{err:#}"),
    };
    let bytes = wit_component::ComponentEncoder::default()
        .validate(true)
        .module(&core)
        .map_err(refused)?
        .encode()
        .map_err(refused)?;
    if std::fs::read(component).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    std::fs::write(component, bytes).map_err(Error::Io)
}

#[cfg(test)]
mod tests {
    use super::*;

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
