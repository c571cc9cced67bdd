//! The wasm OCI artifact layout (CNCF TAG Runtime's, as `wkg oci push`
//! writes it): one `application/wasm` layer and a config of media type
//! `application/vnd.wasm.config.v0+json`. Kubewarden's earlier
//! `application/vnd.wasm.content.layer.v1+wasm` layer and `…config.v1+json`
//! config are read too.

use crate::error::RegistryError;
use oci_client::manifest::{OciDescriptor, OciImageManifest};
use std::collections::BTreeMap;

/// The layer media type written.
pub const WASM_LAYER: &str = "application/wasm";
/// The config media type written.
pub const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";
/// The layer media type of Kubewarden's (older) layout, read too.
pub const WASM_LAYER_V1: &str = oci_client::manifest::WASM_LAYER_MEDIA_TYPE;
/// The config media type of Kubewarden's (older) layout, read too.
pub const WASM_CONFIG_V1: &str = oci_client::manifest::WASM_CONFIG_MEDIA_TYPE;
/// The manifest media type written.
pub const MANIFEST: &str = oci_client::manifest::OCI_IMAGE_MEDIA_TYPE;

/// Annotation: the WIT package the component exports (`verdict:verifier`).
pub const ANNOTATION_WIT_PACKAGE: &str = "dev.verdict.wit.package";
/// Annotation: that package's version (`0.1.0`).
pub const ANNOTATION_WIT_VERSION: &str = "dev.verdict.wit.version";
/// Annotation: the verifier roles it exports (`completion,progress`).
pub const ANNOTATION_ROLES: &str = "dev.verdict.roles";
/// Annotation: the version of verdict that pushed it.
pub const ANNOTATION_VERDICT_VERSION: &str = "dev.verdict.version";
/// Annotation: the file name pushed (the OCI standard key).
pub const ANNOTATION_TITLE: &str = "org.opencontainers.image.title";

/// What a push describes besides the bytes.
#[derive(Debug, Clone, Default)]
pub struct ComponentInfo {
    /// Manifest annotations (see the `ANNOTATION_*` keys).
    pub annotations: BTreeMap<String, String>,
    /// The component's export names (the config's `component.exports`).
    pub exports: Vec<String>,
    /// Its import names (the config's `component.imports`).
    pub imports: Vec<String>,
}

/// The config blob and the manifest of a component, as pushed. Both are
/// deterministic: the same bytes and info give the same manifest digest.
pub(crate) fn build(
    layer: &[u8],
    info: &ComponentInfo,
) -> Result<(Vec<u8>, Vec<u8>), serde_json::Error> {
    let layer_digest = crate::cache::sha256(layer);
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [layer_digest],
        "component": { "exports": info.exports, "imports": info.imports },
    }))?;
    let manifest = OciImageManifest {
        schema_version: 2,
        media_type: Some(MANIFEST.to_owned()),
        config: OciDescriptor {
            media_type: WASM_CONFIG.to_owned(),
            digest: crate::cache::sha256(&config),
            size: config.len() as i64,
            urls: None,
            annotations: None,
        },
        layers: vec![OciDescriptor {
            media_type: WASM_LAYER.to_owned(),
            digest: layer_digest,
            size: layer.len() as i64,
            urls: None,
            annotations: None,
        }],
        subject: None,
        artifact_type: None,
        annotations: (!info.annotations.is_empty()).then(|| info.annotations.clone()),
    };
    Ok((config, serde_json::to_vec(&manifest)?))
}

/// The one wasm layer of a manifest, and its annotations.
pub(crate) fn wasm_layer(
    reference: &str,
    manifest: &[u8],
    max_blob: u64,
) -> Result<(OciDescriptor, BTreeMap<String, String>), RegistryError> {
    let not_wasm = |why: String| RegistryError::NotWasm {
        reference: reference.to_owned(),
        why,
    };
    let parsed: OciImageManifest = serde_json::from_slice(manifest)
        .map_err(|e| not_wasm(format!("not an OCI image manifest ({e})")))?;
    if parsed.schema_version != 2 {
        return Err(not_wasm(format!("schemaVersion {}", parsed.schema_version)));
    }
    if ![WASM_CONFIG, WASM_CONFIG_V1].contains(&parsed.config.media_type.as_str()) {
        return Err(not_wasm(format!(
            "config media type {} (expected {WASM_CONFIG})",
            parsed.config.media_type
        )));
    }
    let [layer] = parsed.layers.as_slice() else {
        return Err(not_wasm(format!(
            "{} layers (expected one)",
            parsed.layers.len()
        )));
    };
    if ![WASM_LAYER, WASM_LAYER_V1].contains(&layer.media_type.as_str()) {
        return Err(not_wasm(format!(
            "layer media type {} (expected {WASM_LAYER})",
            layer.media_type
        )));
    }
    if !crate::reference::check_digest(&layer.digest) {
        return Err(not_wasm(format!(
            "layer digest {} is not sha256",
            layer.digest
        )));
    }
    let size =
        u64::try_from(layer.size).map_err(|_| not_wasm(format!("layer size {}", layer.size)))?;
    if size > max_blob {
        return Err(RegistryError::TooLarge {
            what: "layer",
            reference: reference.to_owned(),
            size,
            max: max_blob,
        });
    }
    Ok((layer.clone(), parsed.annotations.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_built_manifest_reads_back_and_is_deterministic() {
        let info = ComponentInfo {
            annotations: BTreeMap::from([(ANNOTATION_ROLES.into(), "completion".into())]),
            ..ComponentInfo::default()
        };
        let (config, manifest) = build(b"\0asm", &info).unwrap();
        assert_eq!(
            build(b"\0asm", &info).unwrap(),
            (config.clone(), manifest.clone())
        );
        let (layer, annotations) = wasm_layer("r", &manifest, 100).unwrap();
        assert_eq!(layer.digest, crate::cache::sha256(b"\0asm"));
        assert_eq!(layer.media_type, WASM_LAYER);
        assert_eq!(annotations[ANNOTATION_ROLES], "completion");
        let config: serde_json::Value = serde_json::from_slice(&config).unwrap();
        assert_eq!(config["architecture"], "wasm");
        assert!(matches!(
            wasm_layer("r", &manifest, 3),
            Err(RegistryError::TooLarge { .. })
        ));
        let image = manifest
            .iter()
            .map(|&b| b as char)
            .collect::<String>()
            .replace(WASM_LAYER, "application/vnd.oci.image.layer.v1.tar");
        let err = wasm_layer("r", image.as_bytes(), 100)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("layer media type application/vnd.oci.image.layer.v1.tar"),
            "{err}"
        );
    }
}
