//! `verdict new-verifier`: scaffold a verifier project from the embedded
//! templates ([`crate::templates`]).

use crate::exit::Exit;
use crate::templates::{self, Lang};
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};

/// Arguments of `verdict new-verifier`.
#[derive(Debug, clap::Args)]
pub struct NewVerifierArgs {
    /// The language of the project.
    #[arg(long, value_enum)]
    lang: Lang,
    /// Rust only: the `verdict-guest` dependency, as a TOML value: a version
    /// string, or an inline table with `path`, `version` or `git` (and at
    /// most one of `branch`, `tag`, `rev`), e.g.
    /// `{ path = "/src/verdict/guest-sdk" }`. Default: a path dependency on
    /// the guest SDK of the source tree this binary was built from, while it
    /// exists.
    #[arg(long, value_name = "TOML")]
    verdict_guest: Option<String>,
    /// The project directory: created, or empty. Its last component (the
    /// directory's own name for `.`) is the project name: a valid crate
    /// name (lowercase words joined by single hyphens, not a keyword).
    dir: PathBuf,
}

/// Runs `verdict new-verifier`.
pub fn run(args: NewVerifierArgs) -> anyhow::Result<Exit> {
    let name = project_name(&args.dir)?;
    let name = name.as_str();
    if !templates::valid_name(name) {
        bail!(
            "{}: the project name `{name}` (the directory's name) is not a valid crate name: {}",
            args.dir.display(),
            crate::crate_name::RULE
        );
    }
    let verdict_guest = match (args.lang, args.verdict_guest) {
        (Lang::Rust, Some(value)) => crate::dependency::parse(&value).map_err(|why| {
            anyhow::anyhow!(
                "--verdict-guest {value:?}: {why}; give {}",
                crate::dependency::FORM
            )
        })?,
        (_, Some(_)) => bail!(
            "--verdict-guest is for --lang rust only (Python and JavaScript projects build \
             against the WIT, not the crate)"
        ),
        (Lang::Rust, None) => built_guest_sdk()?,
        (_, None) => String::new(),
    };
    if args.dir.exists() {
        let mut entries = std::fs::read_dir(&args.dir)
            .with_context(|| format!("{} is not a readable directory", args.dir.display()))?;
        if entries.next().is_some() {
            bail!("{} is not empty", args.dir.display());
        }
    }
    for (path, text) in templates::render(args.lang, name, &verdict_guest) {
        let target = args.dir.join(&path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&target, text)
            .with_context(|| format!("cannot write {}", target.display()))?;
    }
    let next = match args.lang {
        Lang::Rust => "cargo test && cargo build --release --target wasm32-wasip2",
        Lang::Python => {
            "python3 -m venv .venv && . .venv/bin/activate && pip install -r requirements.txt && \
             pytest && componentize-py -d wit -w warm-completion-checker componentize app -o NAME.wasm"
        }
        Lang::Js => "npm install && npm test && npm run build",
    };
    crate::outln!(
        "created {:?} verifier `{name}` in {}\nnext: cd {} && {}",
        args.lang,
        args.dir.display(),
        args.dir.display(),
        next.replace("NAME", name)
    )?;
    Ok(Exit::Complete)
}

/// The project name: `dir`'s last component, or the name of the directory
/// it resolves to when that is `.` or `..`.
fn project_name(dir: &Path) -> anyhow::Result<String> {
    let named = match dir.file_name() {
        Some(name) => Some(name.to_owned()),
        None => dir
            .canonicalize()
            .with_context(|| format!("cannot resolve {}", dir.display()))?
            .file_name()
            .map(ToOwned::to_owned),
    };
    match named.as_ref().and_then(|n| n.to_str()) {
        Some(name) => Ok(name.to_owned()),
        None => bail!(
            "{}: no project name (a directory's name is one): name the directory",
            dir.display()
        ),
    }
}

/// `{ path = "<source tree>/guest-sdk" }` for the tree this binary was
/// built from, if it is still there.
fn built_guest_sdk() -> anyhow::Result<String> {
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../guest-sdk");
    match sdk.join("Cargo.toml").is_file().then(|| sdk.canonicalize()) {
        Some(Ok(path)) => Ok(format!("{{ path = {:?} }}", path.to_string_lossy())),
        _ => bail!(
            "this binary's source tree is gone: give the verdict-guest dependency with \
             --verdict-guest (e.g. '{{ path = \"/src/verdict/guest-sdk\" }}')"
        ),
    }
}
