//! Verifier sandbox.
