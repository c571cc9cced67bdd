//! Hostile guest: `check` panics with [`MESSAGE`]; the panic message goes to
//! stderr and the instance traps.

use verdict_guest::{Artifacts, Packet, Verdict, Verifier};

/// The panic message, distinctive enough to find in captured stderr.
pub const MESSAGE: &str = "hostile verifier panicked on purpose";

/// The panicking checker.
#[derive(Debug, Default)]
pub struct Panic;

impl Verifier for Panic {
    fn check(&self, _packet: &Packet, _artifacts: &dyn Artifacts) -> Verdict {
        panic!("{MESSAGE}");
    }
}

verdict_guest::export!(completion: Panic);

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_guest::MemoryArtifacts;

    #[test]
    #[should_panic(expected = "hostile verifier panicked on purpose")]
    fn check_panics_with_the_message() {
        Panic.check(&Packet::new("e"), &MemoryArtifacts::new());
    }
}
