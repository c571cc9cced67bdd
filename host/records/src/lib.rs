//! Check records: every verdict reproducible and auditable.
//!
//! A **check record** is one JSON file (`<id>.json`, format
//! [`RECORD_FORMAT`]) holding exactly what a verifier saw and answered:
//!
//! - the tenant, the export called (`completion` or `progress`), the
//!   component's digest and WIT version, and the tenant's limits;
//! - the packet, as JSON, and its SHA-256;
//! - the call's wall clock (fixed per call), its monotonic clock readings
//!   (runs of equal readings, at most 100,000 runs), and the seed of its
//!   `wasi:random` streams, drawn from the OS for that call;
//! - every artifact operation in order: id (or list prefix), outcome,
//!   revision, byte length and SHA-256 of the bytes returned (the bytes go
//!   to `cas/`, the content-addressed store beside the records);
//! - the answer (a verdict, a key, or an error class and message) and the
//!   call's metrics;
//! - `complete` (false when the call was stopped at its deadline before the
//!   guest was) and `integrity`, the SHA-256 of the record itself.
//!
//! No API key, header, model prompt or tool output other than what the
//! packet carries is in a record: a verifier sees nothing else. Its size is
//! bounded by the packet (1 MiB), the artifact operations of one call
//! (`artifact_reads_per_call`, each at most `list_max_entries` ids for a
//! list), the monotonic runs, and the answer's bounds; artifact bytes are
//! stored once per content in `cas/`, not in the record.
//!
//! [`Recorder`] writes records (and appends them to the hash-chained
//! [`audit`] log) on a thread of its own; [`replay()`] runs a record again
//! in a fresh sandbox with the same seed, clocks and artifact answers and
//! compares the answers field by field. [`RecordingChecker`] records every
//! check of the agent loop and lists the ids in its diagnostics.

mod anchor;
pub mod audit;
mod bundle;
mod cas;
mod dir;
mod error;
mod format;
mod recording;
mod replay;
mod writer;

pub use anchor::{Anchor, Chain, DirAudit, verify_dir};
pub use bundle::{BUNDLE_FORMAT, BUNDLE_MEDIA_TYPE, CheckBundle};
pub use cas::{Cas, sha256_hex};
pub use dir::{RecordDir, is_check_id};
pub use error::RecordError;
pub use format::{
    CheckRecord, RECORD_FORMAT, RecordInput, RecordRole, RecordedAnswer, RecordedArtifactOp,
    RecordedClock, RecordedMetrics, RecordedTimerOp, RecordedVerifier,
};
pub use recording::{Recorded, RecordingChecker, check_id, check_recorded, progress_key_recorded};
pub use replay::{
    Difference, MAX_REPLAY_FUEL, ReplayOutcome, default_replay_caps, differences,
    recorded_component, replay, replay_limits, replay_within,
};
pub use writer::{DEFAULT_QUEUE_BYTES, Recorder, RecorderOptions, WhenFull};
