//! `verdict push FILE REF`: a verifier component to an OCI registry.

use super::HostArgs;
use crate::exit::Exit;
use anyhow::Context;
use std::collections::BTreeMap;
use verdict::registry::{ComponentInfo, OciRef, artifact};

/// Arguments of `verdict push`.
#[derive(Debug, clap::Args)]
pub struct PushArgs {
    /// The component: a .wasm file, or builtin:NAME.
    file: String,
    /// Where to: oci://HOST[:PORT]/REPO:TAG (credentials from `docker login`,
    /// i.e. $DOCKER_CONFIG/config.json or ~/.docker/config.json).
    reference: String,
    #[command(flatten)]
    host: HostArgs,
}

/// `verdict:verifier` and `0.1.0` of an export `verdict:verifier/completion@0.1.0`.
fn wit_package(exports: &[String]) -> Option<(String, String)> {
    exports.iter().find_map(|e| {
        let (package, rest) = e.split_once('/')?;
        let (_, version) = rest.split_once('@')?;
        (package == "verdict:verifier").then(|| (package.to_owned(), version.to_owned()))
    })
}

/// Runs `verdict push`: only a component this host accepts is pushed; the
/// last line printed is the manifest digest.
pub fn run(args: PushArgs) -> anyhow::Result<Exit> {
    let reference = OciRef::parse(&args.reference)?;
    if reference.digest.is_some() {
        // Said before the component is read and inspected.
        return Err(verdict::registry::RegistryError::PushNeedsTag(reference.to_string()).into());
    }
    let bytes = super::read_verifier(&args.file)?;
    let host = args.host.host()?;
    let info = host.inspect(&bytes);
    if let Some(why) = &info.rejected {
        anyhow::bail!("{} is not pushed: this host rejects it ({why})", args.file);
    }
    let mut annotations = BTreeMap::new();
    if let Some((package, version)) = wit_package(&info.exports) {
        annotations.insert(artifact::ANNOTATION_WIT_PACKAGE.to_owned(), package);
        annotations.insert(artifact::ANNOTATION_WIT_VERSION.to_owned(), version);
    }
    let roles: Vec<String> = info
        .roles
        .iter()
        .map(|r| format!("{r:?}").to_lowercase())
        .collect();
    annotations.insert(artifact::ANNOTATION_ROLES.to_owned(), roles.join(","));
    annotations.insert(
        artifact::ANNOTATION_VERDICT_VERSION.to_owned(),
        env!("CARGO_PKG_VERSION").to_owned(),
    );
    let title = args
        .file
        .rsplit('/')
        .next()
        .unwrap_or(&args.file)
        .to_owned();
    annotations.insert(artifact::ANNOTATION_TITLE.to_owned(), title);
    let component = ComponentInfo {
        annotations,
        exports: info.exports.clone(),
        imports: info.imports.clone(),
    };
    let started = std::time::Instant::now();
    let pushed = crate::oci::registry(&BTreeMap::new())
        .push_blocking(&reference, &bytes, &component)
        .with_context(|| format!("cannot push {}", args.file))?;
    crate::stdout::note_line(format_args!(
        "pushed {} ({} bytes, component {}) as {} in {} ms",
        args.file,
        bytes.len(),
        pushed.layer_digest,
        pushed.reference.canonical(),
        started.elapsed().as_millis()
    ));
    crate::outln!("{}", pushed.digest)?;
    Ok(Exit::Complete)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wit_package_comes_from_the_verifier_export() {
        let exports = vec![
            "verdict:packed/completion@0.1.0".to_owned(),
            "verdict:verifier/completion@0.1.0".to_owned(),
        ];
        assert_eq!(
            wit_package(&exports),
            Some(("verdict:verifier".into(), "0.1.0".into()))
        );
        assert_eq!(wit_package(&["wasi:cli/run@0.2.0".to_owned()]), None);
    }
}
