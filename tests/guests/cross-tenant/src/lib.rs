//! Hostile guest: tries to read outside its tenant's artifacts.
//!
//! Reads each id in [`ATTEMPTS`] and reports every result in `reason` as
//! `id=result` joined by `;`, where result is `bytes` or the error code
//! (`denied`, `not-found`, ...). In the tests `secret.json` exists only in
//! another tenant's store. Complete (a breach) only if any read returned bytes.

use verdict_guest::{Artifacts, Packet, Verdict, Verifier};

/// The ids it tries, in order.
pub const ATTEMPTS: [&str; 4] = [
    "../other/secret.json",
    "/etc/passwd",
    "other/../../x",
    "secret.json",
];

/// The trespassing checker.
#[derive(Debug, Default)]
pub struct CrossTenant;

impl Verifier for CrossTenant {
    fn check(&self, _packet: &Packet, artifacts: &dyn Artifacts) -> Verdict {
        let mut breached = false;
        let results: Vec<String> = ATTEMPTS
            .iter()
            .map(|id| {
                let result = match artifacts.read(id) {
                    Ok(_) => {
                        breached = true;
                        "bytes"
                    }
                    Err(error) => error.code(),
                };
                format!("{id}={result}")
            })
            .collect();
        Verdict {
            complete: breached,
            reason: Some(results.join(";")),
            feedback: None,
        }
    }
}

verdict_guest::export!(completion: CrossTenant);

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_guest::MemoryArtifacts;

    #[test]
    fn reports_each_attempt_and_stays_incomplete_when_all_refused() {
        let store = MemoryArtifacts::new().with("mine.json", "{}");
        let verdict = CrossTenant.check(&Packet::new("e"), &store);
        assert!(!verdict.complete);
        assert_eq!(
            verdict.reason.as_deref(),
            Some(
                "../other/secret.json=denied;/etc/passwd=denied;other/../../x=denied;secret.json=not-found"
            )
        );
    }

    #[test]
    fn any_bytes_count_as_a_breach() {
        let store = MemoryArtifacts::new().with("secret.json", "leak");
        let verdict = CrossTenant.check(&Packet::new("e"), &store);
        assert!(verdict.complete);
        assert!(
            verdict
                .reason
                .is_some_and(|r| r.ends_with("secret.json=bytes"))
        );
    }
}
