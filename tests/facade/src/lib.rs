//! The READMEs' Rust examples, compiled (and run, unless `no_run`) as this
//! crate's doctests against the `verdict` facade alone:
//! `cargo test -p verdict-facade-tests`. The member crates' READMEs are not
//! doctests of their own crates (their examples name facade paths); the
//! unit tests below check that every example names only the facade (a
//! verifier's, only the guest SDK).
//!
//! Not here: `host/providers/README.md` (its example still names
//! `verdict_providers`, compiled by that crate) and
//! `host/guest-build/README.md` (a build script's lines, compiled by
//! `verdict-guest-build`).

#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub mod repository_readme {}

#[cfg(doctest)]
#[doc = include_str!("../../../host/verdict/README.md")]
pub mod verdict_readme {}

#[cfg(doctest)]
#[doc = include_str!("../../../host/agent/README.md")]
pub mod agent_readme {}

#[cfg(doctest)]
#[doc = include_str!("../../../host/policy/README.md")]
pub mod policy_readme {}

#[cfg(doctest)]
#[doc = include_str!("../../../host/sandbox/README.md")]
pub mod sandbox_readme {}

#[cfg(doctest)]
#[doc = include_str!("../../../guest-sdk/README.md")]
pub mod guest_sdk_readme {}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly by design
mod embedder;

/// The READMEs above, by path.
pub const READMES: &[(&str, &str)] = &[
    ("README.md", include_str!("../../../README.md")),
    (
        "host/verdict/README.md",
        include_str!("../../../host/verdict/README.md"),
    ),
    (
        "host/agent/README.md",
        include_str!("../../../host/agent/README.md"),
    ),
    (
        "host/policy/README.md",
        include_str!("../../../host/policy/README.md"),
    ),
    (
        "host/sandbox/README.md",
        include_str!("../../../host/sandbox/README.md"),
    ),
    (
        "guest-sdk/README.md",
        include_str!("../../../guest-sdk/README.md"),
    ),
];

/// The Rust code blocks of a Markdown text (fences opening with
/// ```` ```rust ````), in order.
pub fn rust_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match &mut current {
            None if line.starts_with("```rust") => current = Some(String::new()),
            None => {}
            Some(_) if line.starts_with("```") => blocks.extend(current.take()),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    blocks
}

/// The member crates an embedder's example must not name: the facade
/// re-exports what they offer.
pub const MEMBER_PATHS: &[&str] = &[
    "verdict_agent",
    "verdict_policy",
    "verdict_providers",
    "verdict_registry",
    "verdict_sandbox",
    "verdict_server",
];

/// What is wrong with `block`'s paths, if anything: a verifier's example
/// (it names `verdict_guest`) names nothing of the host; any other names
/// no member crate.
pub fn path_problem(block: &str) -> Option<String> {
    let named: Vec<&str> = MEMBER_PATHS
        .iter()
        .copied()
        .filter(|member| block.contains(member))
        .collect();
    if !named.is_empty() {
        return Some(format!("names {named:?} instead of `verdict`"));
    }
    if block.contains("verdict_guest") && block.contains("verdict::") {
        return Some("a verifier's example names the host's `verdict`".to_owned());
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly by design
mod tests {
    use super::*;

    #[test]
    fn every_readme_example_names_only_the_facade() {
        for (path, text) in READMES {
            let blocks = rust_blocks(text);
            assert!(!blocks.is_empty(), "{path} has no Rust example");
            for (n, block) in blocks.iter().enumerate() {
                if let Some(problem) = path_problem(block) {
                    panic!("{path}, Rust block {}: {problem}:\n{block}", n + 1);
                }
            }
        }
    }

    /// An embedder building `Limits` gets the range check the CLI uses.
    #[test]
    fn limits_are_range_checked_for_an_embedder() {
        let limits = verdict::Limits::default();
        assert_eq!(limits.validate(), Ok(()));
        let over = verdict::Limits {
            timeout_ms: verdict::Limits::MAX_TIMEOUT_MS + 1,
            ..limits
        };
        let error = over.validate().unwrap_err();
        assert_eq!(
            (error.field, error.value, error.max),
            ("timeout_ms", 60_001, 60_000)
        );
        let zero = verdict::Limits {
            instances: 0,
            ..limits
        };
        assert_eq!(zero.validate().unwrap_err().field, "instances");
    }

    #[test]
    fn the_check_catches_a_member_path() {
        let block = "use verdict_agent::Agent;\nuse verdict::Tool;\n";
        assert_eq!(
            path_problem(block).as_deref(),
            Some("names [\"verdict_agent\"] instead of `verdict`")
        );
        assert_eq!(path_problem("use verdict::{Agent, Tool};\n"), None);
        assert!(path_problem("use verdict_guest::Verifier;\nuse verdict::Agent;\n").is_some());
        assert_eq!(
            rust_blocks("a\n```rust,no_run\nfn f() {}\n```\n```sh\nls\n```\n"),
            vec!["fn f() {}\n".to_owned()]
        );
    }
}
