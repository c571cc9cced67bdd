//! The remote checker against a served verifier.
