//! Hostile guest: reads artifact `A42` up to [`ATTEMPTS`] times in one call.
//!
//! Stops at the first error. `reason` is `ok=<n>;stopped=<code>` (or
//! `stopped=none` when every read succeeded); never complete.

use verdict_guest::{Artifacts, Packet, Verdict, Verifier};

/// How many reads it attempts.
pub const ATTEMPTS: u32 = 1_000;
/// The artifact it reads.
pub const ARTIFACT_ID: &str = "A42";

/// The greedy checker.
#[derive(Debug, Default)]
pub struct ReadMany;

impl Verifier for ReadMany {
    fn check(&self, _packet: &Packet, artifacts: &dyn Artifacts) -> Verdict {
        let mut ok = 0_u32;
        let mut stopped = "none";
        for _ in 0..ATTEMPTS {
            match artifacts.read(ARTIFACT_ID) {
                Ok(_) => ok += 1,
                Err(error) => {
                    stopped = error.code();
                    break;
                }
            }
        }
        Verdict::incomplete("read-many never completes")
            .with_reason(format!("ok={ok};stopped={stopped}"))
    }
}

verdict_guest::export!(completion: ReadMany);

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_guest::MemoryArtifacts;

    fn reason(store: &MemoryArtifacts) -> Option<String> {
        ReadMany.check(&Packet::new("e"), store).reason
    }

    #[test]
    fn stops_at_the_read_limit() {
        let store = MemoryArtifacts::new()
            .with(ARTIFACT_ID, "x")
            .with_read_limit(16);
        assert_eq!(
            reason(&store).as_deref(),
            Some("ok=16;stopped=limit-reached")
        );
    }

    #[test]
    fn reads_all_without_a_limit_and_stops_on_other_errors() {
        let store = MemoryArtifacts::new().with(ARTIFACT_ID, "x");
        assert_eq!(reason(&store).as_deref(), Some("ok=1000;stopped=none"));
        assert_eq!(
            reason(&MemoryArtifacts::new()).as_deref(),
            Some("ok=0;stopped=not-found")
        );
    }
}
