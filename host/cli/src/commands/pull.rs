//! `verdict pull REF [-o FILE]`: a verifier component from an OCI registry.

use super::HostArgs;
use crate::exit::Exit;
use anyhow::Context;
use std::collections::BTreeMap;
use std::path::PathBuf;
use verdict::registry::{OciRef, Origin};

/// Arguments of `verdict pull`.
#[derive(Debug, clap::Args)]
pub struct PullArgs {
    /// What: oci://HOST[:PORT]/REPO[:TAG|@sha256:DIGEST].
    reference: String,
    /// The file to write (default: the repository's last name + .wasm).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    host: HostArgs,
}

/// Runs `verdict pull`: fetches through the local cache (verified against
/// the manifest and layer digests), writes the file, prints the digest.
pub fn run(args: PullArgs) -> anyhow::Result<Exit> {
    let reference = OciRef::parse(&args.reference)?;
    crate::oci::set_defaults(crate::oci::Defaults {
        cache_dir: args.host.cache_dir(),
        offline: args.host.offline,
    });
    let started = std::time::Instant::now();
    let fetched = crate::oci::registry(&BTreeMap::new())
        .fetch_blocking(&reference, &[])
        .with_context(|| format!("cannot pull {reference}"))?;
    let output = args.output.clone().unwrap_or_else(|| {
        let name = reference
            .repository
            .rsplit('/')
            .next()
            .unwrap_or("verifier");
        PathBuf::from(format!("{name}.wasm"))
    });
    crate::files::replace::write_replacing(&output, &fetched.bytes)?;
    crate::stdout::note_line(format_args!(
        "{} {} ({} bytes, component {}) to {} in {} ms",
        match fetched.origin {
            Origin::Registry => "pulled",
            Origin::Cache => "copied from the local cache",
        },
        fetched.reference.canonical(),
        fetched.bytes.len(),
        fetched.layer_digest,
        output.display(),
        started.elapsed().as_millis()
    ));
    crate::outln!("{}", fetched.digest)?;
    Ok(Exit::Complete)
}
