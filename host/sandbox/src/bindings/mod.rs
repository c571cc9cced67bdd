//! Everything that knows a WIT version's types: one folder per released
//! version of a package, generated from its frozen folder under `wit/`
//! (`v0_1/` for `verdict:verifier@0.1.x`, `packed_v0_1/` for
//! `verdict:packed@0.1.x`), each holding the bindings, the host side of its
//! imports, the conversions from the policy's types, lowering the packet and
//! lifting the answers; and [`ApiVersion`]: the version a component was
//! built against, which the sandbox matches on when it links and prepares a
//! component. A new version is a new folder and a variant here; the old
//! ones stay, so old components keep loading (`wit/README.md` walks
//! through it). Nothing outside this folder names a version's module: the
//! sandbox reaches a component's version through [`ApiVersion::with`] and
//! the [`Version`] each folder implements, so a component is always
//! prepared and called with its own version's types (an alias to the newest
//! would bind old components to new types).

pub(crate) mod packed_v0_1;
pub(crate) mod v0_1;

use crate::abi::GuestAnswer;
use crate::error::CheckError;
use crate::store::state::StoreState;
use verdict_policy::{CheckPacket, Verdict};
use wasmtime::component::{ComponentNamedList, ComponentType, Lift, Linker, Lower};

/// What the sandbox prepares and calls a component of one version with:
/// its packet arguments and its answers. Each version folder implements it
/// on its `Api`, and [`ApiVersion`] picks the implementation for a
/// component.
pub(crate) trait Version: 'static {
    /// The standard exports' packet argument.
    type Packet<'a>: ComponentType + Lower + Send + Sync;
    /// The packed exports' packet argument.
    type Packed<'a>: ComponentType + Lower + Send + Sync;
    /// `check`'s answer, as read from guest memory.
    type Verdict: GuestAnswer + ComponentNamedList + Lift + Send + Sync + 'static;
    /// `progress-key`'s answer, as read from guest memory.
    type Key: GuestAnswer + ComponentNamedList + Lift + Send + Sync + 'static;

    /// `packet` as the standard argument.
    fn packet(packet: &CheckPacket) -> Self::Packet<'_>;
    /// `packet` as the packed argument.
    fn packed(packet: &CheckPacket) -> Self::Packed<'_>;
    /// The `major.minor` of the `verdict:packed` series that goes with this
    /// version.
    const PACKED_SERIES: &'static str;

    /// The verdict an answer carries, validated.
    fn verdict(answer: Self::Verdict) -> Result<Verdict, CheckError>;
    /// The progress key an answer carries, validated.
    fn key(answer: Self::Key) -> Result<String, CheckError>;
}

/// The package every version's interfaces belong to.
pub(crate) const PACKAGE: &str = "verdict:verifier";

/// The package of the packed entry points a verifier may export beside its
/// `verdict:verifier` ones (each version names its series:
/// [`Version::PACKED_SERIES`]).
pub(crate) const PACKED_PACKAGE: &str = "verdict:packed";

/// A released version of the `verdict:verifier` package this host serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ApiVersion {
    /// `verdict:verifier@0.1.x` ([`v0_1`]).
    V0_1,
}

impl ApiVersion {
    /// Every version this host links, oldest first.
    pub(crate) const ALL: [ApiVersion; 1] = [ApiVersion::V0_1];

    /// The `major.minor` its interface names carry; patch versions float
    /// (`verdict:verifier/completion@0.1.3` is 0.1).
    pub(crate) const fn major_minor(self) -> &'static str {
        match self {
            ApiVersion::V0_1 => "0.1",
        }
    }

    /// Runs `op` with this version's [`Version`] implementation: the one
    /// place that maps a component's version to the types it is prepared and
    /// called with.
    pub(crate) fn with<Op: WithVersion>(self, op: Op) -> Op::Output {
        match self {
            ApiVersion::V0_1 => op.run::<v0_1::Api>(),
        }
    }

    /// Adds this version's host imports (`types`, `artifacts`) to `linker`.
    pub(crate) fn add_to_linker(self, linker: &mut Linker<StoreState>) -> wasmtime::Result<()> {
        match self {
            ApiVersion::V0_1 => v0_1::add_to_linker(linker),
        }
    }

    /// Splits a `verdict:verifier` interface name such as
    /// `verdict:verifier/completion@0.1.0` into the version and the
    /// interface (`completion`); `None` for other packages and for versions
    /// this host does not serve.
    pub(crate) fn of_interface(name: &str) -> Option<(ApiVersion, &str)> {
        let (path, version) = name.split_once('@')?;
        let interface = path.strip_prefix(PACKAGE)?.strip_prefix('/')?;
        let api = Self::ALL
            .into_iter()
            .find(|api| in_series(version, api.major_minor()))?;
        Some((api, interface))
    }
}

/// Something done with a component's [`Version`], whichever it is (see
/// [`ApiVersion::with`]).
pub(crate) trait WithVersion {
    /// What it gives.
    type Output;
    /// Does it with version `V`.
    fn run<V: Version>(self) -> Self::Output;
}

/// True when semver `version` is `major_minor` or one of its patches
/// (`0.2`, `0.2.6`, `0.2.6-rc1` are in 0.2; `0.20.0` is not).
pub(crate) fn in_series(version: &str, major_minor: &str) -> bool {
    version == major_minor
        || version
            .strip_prefix(major_minor)
            .is_some_and(|rest| rest.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interface_names_give_the_version_and_the_interface() {
        assert_eq!(
            ApiVersion::of_interface("verdict:verifier/completion@0.1.0"),
            Some((ApiVersion::V0_1, "completion"))
        );
        assert_eq!(
            ApiVersion::of_interface("verdict:verifier/progress@0.1.7"),
            Some((ApiVersion::V0_1, "progress"))
        );
        for other in [
            "verdict:verifier/completion@0.2.0",
            "verdict:verifier/completion@0.10.0",
            "verdict:verifier/completion",
            "verdict:verifierx/completion@0.1.0",
            "evil:verifier/completion@0.1.0",
            "wasi:io/streams@0.2.6",
        ] {
            assert_eq!(ApiVersion::of_interface(other), None, "{other}");
        }
    }

    #[test]
    fn a_series_holds_its_patches_only() {
        assert!(in_series("0.2", "0.2"));
        assert!(in_series("0.2.6", "0.2"));
        assert!(!in_series("0.20.0", "0.2"));
        assert!(!in_series("0.3.0", "0.2"));
        assert!(!in_series("", "0.2"));
    }
}
