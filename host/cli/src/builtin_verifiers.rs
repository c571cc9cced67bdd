//! Sample verifiers embedded in the binary, addressable as `builtin:NAME`.

/// (name, component bytes) of every embedded verifier.
const BUILTINS: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/builtins.rs"));

/// The embedded verifier called `name`.
pub fn get(name: &str) -> Option<&'static [u8]> {
    BUILTINS.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

/// Names of the embedded verifiers.
pub fn names() -> Vec<&'static str> {
    BUILTINS.iter().map(|(n, _)| *n).collect()
}
