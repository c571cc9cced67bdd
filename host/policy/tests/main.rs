//! The integration tests, as one test binary (linking one binary per file
//! dominated the build): `cargo test -p verdict-policy --test policy`,
//! one file's tests with `-- FILE::`. Each file is a module; `common/` holds
//! what they share.

mod admission_rules;
mod bounds_rules;
mod canonical_props;
mod character_rules;
mod common;
mod completion_rules;
mod config_rules;
mod delivery_rules;
mod diagnostics_rules;
mod engine_props;
mod packet_rules;
mod progress_rules;
mod recovery_rules;
mod stale_view_rules;
mod verdict_props;
