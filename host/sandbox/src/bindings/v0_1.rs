//! Host bindings for `verdict:verifier@0.1.x`, generated from the frozen
//! `wit/verdict-verifier@0.1.0/`, and the host side of its imports.

use crate::artifacts::{ArtifactData, ArtifactError};
use crate::state::CallState;
use wasmtime::component::{HasSelf, Linker};

wasmtime::component::bindgen!({
    path: "../../wit/verdict-verifier@0.1.0",
    world: "checker",
    imports: { default: trappable },
});

pub(crate) use verdict::verifier::artifacts;
pub(crate) use verdict::verifier::types as wit;

/// Adds the 0.1 imports (`types`, `artifacts`) to `linker`.
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    Checker::add_to_linker::<CallState, HasSelf<CallState>>(linker, |state| state)
}

fn to_wit(err: ArtifactError) -> artifacts::ArtifactError {
    match err {
        ArtifactError::NotFound => artifacts::ArtifactError::NotFound,
        ArtifactError::Denied => artifacts::ArtifactError::Denied,
        ArtifactError::TooLarge(size) => artifacts::ArtifactError::TooLarge(size),
        ArtifactError::LimitReached => artifacts::ArtifactError::LimitReached,
    }
}

impl artifacts::Host for CallState {
    fn read(
        &mut self,
        id: String,
    ) -> wasmtime::Result<Result<artifacts::Artifact, artifacts::ArtifactError>> {
        Ok(self.read_artifact(&id)?.map_err(to_wit).map(
            |ArtifactData {
                 id,
                 revision,
                 size,
                 bytes,
             }| artifacts::Artifact {
                id,
                revision,
                size,
                bytes,
            },
        ))
    }

    fn list(
        &mut self,
        prefix: String,
    ) -> wasmtime::Result<Result<Vec<String>, artifacts::ArtifactError>> {
        Ok(self.list_artifacts(&prefix)?.map_err(to_wit))
    }
}

impl wit::Host for CallState {}
