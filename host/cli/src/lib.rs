//! verdict library facade.
pub use verdict_policy as policy;
pub use verdict_sandbox as sandbox;
