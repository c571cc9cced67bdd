//! Hostile guest: `check` reads a file with `std::fs`, so the component
//! imports `wasi:filesystem`, which the host must refuse at load.

use verdict_guest::{Artifacts, Packet, Verdict, Verifier};

/// The file it tries to read.
pub const PATH: &str = "/etc/passwd";

/// The checker that wants a filesystem.
#[derive(Debug, Default)]
pub struct ForbiddenImport;

impl Verifier for ForbiddenImport {
    fn check(&self, _packet: &Packet, _artifacts: &dyn Artifacts) -> Verdict {
        match std::fs::read(PATH) {
            Ok(bytes) => Verdict::complete().with_reason(format!("read {} bytes", bytes.len())),
            Err(error) => {
                Verdict::incomplete("no filesystem").with_reason(error.kind().to_string())
            }
        }
    }
}

verdict_guest::export!(completion: ForbiddenImport);
