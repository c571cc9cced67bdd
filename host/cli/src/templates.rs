//! The verifier project templates of `verdict new-verifier`, embedded in
//! the binary (`guest-sdk/templates/`, see its README): an installed
//! `verdict` scaffolds without the source tree.

/// A template language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// A Rust crate on `verdict-guest` (`cargo build --target wasm32-wasip2`).
    Rust,
    /// A Python app for componentize-py 0.25.1.
    Python,
    /// A JavaScript module for componentize-js 0.23.0.
    Js,
}

/// The WIT Python and JavaScript projects build against (the newest frozen
/// version), written as `wit/verifier.wit`.
const WIT: &str = include_str!("../../../wit/verdict-verifier@0.1.1/verifier.wit");

macro_rules! files {
    ($lang:literal: $($path:literal),* $(,)?) => {
        &[$(($path, include_str!(concat!("../../../guest-sdk/templates/", $lang, "/", $path)))),*]
    };
}

const RUST: &[(&str, &str)] = files!("rust":
    "Cargo.toml.tmpl", "src/lib.rs", "tests/examples.rs", "README.md", ".gitignore",
    "examples/complete.json", "examples/not-complete.json", "examples/artifacts/status.json",
);
const PYTHON: &[(&str, &str)] = files!("python":
    "app.py", "verifier.py", "test_verifier.py", "test_app.py", "conftest.py", "requirements.txt",
    "README.md", ".gitignore",
    "examples/complete.json", "examples/not-complete.json", "examples/artifacts/status.json",
);
const JS: &[(&str, &str)] = files!("js":
    "package.json", "src/component.js", "src/checked.js", "src/verifier.js",
    "test/verifier.test.js", "test/checked.test.js", "test/examples.test.js", "README.md",
    ".gitignore",
    "examples/complete.json", "examples/not-complete.json", "examples/artifacts/status.json",
);

/// The files of `lang`'s project named `name` (a valid crate name, see [`valid_name`]), as
/// (relative path, contents): placeholders replaced, `.tmpl` stripped, the
/// WIT added for Python and JavaScript. `verdict_guest` is the TOML value
/// of the Rust project's `verdict-guest` dependency.
pub fn render(lang: Lang, name: &str, verdict_guest: &str) -> Vec<(String, String)> {
    let crate_name = name.replace('-', "_");
    let files = match lang {
        Lang::Rust => RUST,
        Lang::Python => PYTHON,
        Lang::Js => JS,
    };
    let mut out: Vec<(String, String)> = files
        .iter()
        .map(|(path, text)| {
            let path = path.strip_suffix(".tmpl").unwrap_or(path).to_owned();
            let text = text
                .replace("{{name}}", name)
                .replace("{{crate_name}}", &crate_name)
                .replace("{{verdict_guest}}", verdict_guest);
            (path, text)
        })
        .collect();
    if lang != Lang::Rust {
        out.push(("wit/verifier.wit".to_owned(), WIT.to_owned()));
    }
    out
}

/// True for a project name the templates accept: a valid crate name
/// ([`crate::crate_name::RULE`]).
pub fn valid_name(name: &str) -> bool {
    crate::crate_name::valid(name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Every file of every template folder is embedded (a file added to a
    /// template must be added here too).
    #[test]
    fn every_template_file_is_embedded() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../guest-sdk/templates");
        for (lang, files) in [("rust", RUST), ("python", PYTHON), ("js", JS)] {
            let mut on_disk = Vec::new();
            let mut stack = vec![root.join(lang)];
            while let Some(dir) = stack.pop() {
                for entry in std::fs::read_dir(dir).unwrap().flatten() {
                    if entry.path().is_dir() {
                        stack.push(entry.path());
                    } else {
                        let rel = entry
                            .path()
                            .strip_prefix(root.join(lang))
                            .unwrap()
                            .to_owned();
                        on_disk.push(rel.to_string_lossy().replace('\\', "/"));
                    }
                }
            }
            on_disk.sort();
            let mut embedded: Vec<String> = files.iter().map(|(p, _)| (*p).to_owned()).collect();
            embedded.sort();
            assert_eq!(on_disk, embedded, "{lang}");
        }
    }

    #[test]
    fn placeholders_are_all_replaced() {
        for lang in [Lang::Rust, Lang::Python, Lang::Js] {
            for (path, text) in render(lang, "my-check", "{ path = \"/x\" }") {
                assert!(!text.contains("{{"), "{lang:?} {path}");
                assert!(!path.ends_with(".tmpl"), "{path}");
            }
        }
        assert!(valid_name("my-check2"));
        for bad in ["", "My", "1a", "a_b", "a.b", "a/b", "é"] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
