//! The project name `verdict new-verifier` accepts: a valid crate name in
//! one spelling for every language (the Rust package, the `.wasm` file,
//! the npm package).

/// The rule, as stated when a name breaks it.
pub const RULE: &str = "lowercase letters and digits, words joined by single hyphens \
     ([a-z][a-z0-9]*(-[a-z0-9]+)*), not a Rust keyword or a reserved crate name";

/// Rust keywords (every edition, reserved ones included): a crate cannot be
/// named one (`cargo new fn` refuses too).
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Names cargo reserves (the standard crates, its own directories, names
/// Windows reserves) and the SDK's own.
const RESERVED: &[&str] = &[
    "alloc",
    "core",
    "std",
    "test",
    "proc_macro",
    "deps",
    "examples",
    "build",
    "incremental",
    "con",
    "prn",
    "aux",
    "nul",
    "com1",
    "com2",
    "com3",
    "com4",
    "com5",
    "com6",
    "com7",
    "com8",
    "com9",
    "lpt1",
    "lpt2",
    "lpt3",
    "lpt4",
    "lpt5",
    "lpt6",
    "lpt7",
    "lpt8",
    "lpt9",
    "verdict_guest",
];

/// True when `name` follows [`RULE`].
pub fn valid(name: &str) -> bool {
    let spelled = !name.is_empty()
        && name.split('-').all(|word| {
            !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
        && name.starts_with(|c: char| c.is_ascii_lowercase());
    let ident = name.replace('-', "_");
    spelled && !KEYWORDS.contains(&ident.as_str()) && !RESERVED.contains(&ident.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_names() {
        for good in ["my-check", "a", "check2", "a-1-b", "verdict-check"] {
            assert!(valid(good), "{good}");
        }
        for bad in [
            "",
            "fn",
            "core",
            "test",
            "abc-",
            "-a",
            "a--b",
            "1a",
            "My",
            "a_b",
            "a.b",
            "é",
            "proc-macro",
            "verdict-guest",
            "self",
            "con",
        ] {
            assert!(!valid(bad), "{bad}");
        }
    }
}
