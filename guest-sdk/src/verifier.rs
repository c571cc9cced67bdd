//! The traits a verifier author implements.

use crate::artifacts::Artifacts;
use crate::packet::Packet;
use crate::verdict::Verdict;

/// A completion checker: decides whether the execution is really complete.
///
/// Exported with `verdict_guest::export!(completion: MyType)`; the type must
/// implement `Default` (a fresh value is made for every call).
pub trait Verifier {
    /// Decides from the packet and the tenant's artifacts.
    fn check(&self, packet: &Packet<'_>, artifacts: &dyn Artifacts) -> Verdict;
}

/// A progress checker: samples a host state/version string after tool batches.
///
/// Exported with `verdict_guest::export!(progress: MyType)`; the type must
/// implement `Default`. The key must be at most
/// [`crate::MAX_PROGRESS_KEY_CHARS`] characters; an unchanged key across
/// batches suggests no progress.
pub trait ProgressKey {
    /// Returns the current progress key.
    fn progress_key(&self, packet: &Packet<'_>, artifacts: &dyn Artifacts) -> String;
}
