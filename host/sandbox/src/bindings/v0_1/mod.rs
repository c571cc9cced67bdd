//! Everything the host knows of `verdict:verifier@0.1.x`: the bindings
//! generated from the frozen `wit/verdict-verifier@0.1.1/` (a superset of
//! `0.1.0`: its optional `warm-up` export), the host side of
//! its imports (here), the conversions from the policy's types to its
//! records ([`convert`]), lowering the packet ([`lower`]) and lifting the
//! answers ([`lift`]).

pub(crate) mod convert;
mod lift;
mod lower;

pub(crate) use lift::{KeyAnswer, VerdictAnswer};
pub(crate) use lower::PacketArg;

use crate::abi::GuestText;
use crate::bindings::Version;
use crate::bindings::packed_v0_1::PackedArg;
use crate::error::CheckError;
use verdict_policy::{CheckPacket, Verdict};

/// `verdict:verifier@0.1.x` (with `verdict:packed@0.1.x`) as the sandbox
/// calls it.
pub(crate) struct Api;

impl Version for Api {
    type Packet<'a> = PacketArg<'a>;
    type Packed<'a> = PackedArg<'a>;
    type Verdict = VerdictAnswer;
    type Key = KeyAnswer;

    const PACKED_SERIES: &'static str = crate::bindings::packed_v0_1::MAJOR_MINOR;

    fn packet(packet: &CheckPacket) -> PacketArg<'_> {
        PacketArg(packet)
    }

    fn packed(packet: &CheckPacket) -> PackedArg<'_> {
        PackedArg(packet)
    }

    fn verdict(VerdictAnswer(verdict, _): VerdictAnswer) -> Result<Verdict, CheckError> {
        lift::verdict(verdict)
    }

    fn key(KeyAnswer(key, _): KeyAnswer) -> Result<String, CheckError> {
        match key {
            GuestText::Text(key) => Ok(key),
            GuestText::TooLong { chars } => Err(CheckError::InvalidProgressKey { chars }),
        }
    }
}

use crate::artifacts::{ArtifactData, ArtifactError};
use crate::store::state::StoreState;
use wasmtime::component::{HasSelf, Linker};

wasmtime::component::bindgen!({
    path: "../../wit/verdict-verifier@0.1.1",
    world: "checker",
    imports: { default: trappable },
});

pub(crate) use verdict::verifier::artifacts;
pub(crate) use verdict::verifier::types as wit;

/// Adds the 0.1 imports (`types`, `artifacts`) to `linker`.
pub(crate) fn add_to_linker(linker: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    Checker::add_to_linker::<StoreState, HasSelf<StoreState>>(linker, |state| state)
}

fn to_wit(err: ArtifactError) -> artifacts::ArtifactError {
    match err {
        ArtifactError::NotFound => artifacts::ArtifactError::NotFound,
        ArtifactError::Denied => artifacts::ArtifactError::Denied,
        ArtifactError::TooLarge(size) => artifacts::ArtifactError::TooLarge(size),
        ArtifactError::LimitReached => artifacts::ArtifactError::LimitReached,
    }
}

impl artifacts::Host for StoreState {
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

impl wit::Host for StoreState {}
