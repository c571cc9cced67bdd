//! The recorders of the tenants that record their checks: one per record
//! directory in the process, shared by every tenant (and every catalog,
//! across reloads) that names it, so one writer appends to each audit log.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use verdict_records::{RecordDir, RecordError, Recorder, RecorderOptions, WhenFull};

fn recorders() -> &'static Mutex<HashMap<PathBuf, Weak<Recorder>>> {
    static RECORDERS: OnceLock<Mutex<HashMap<PathBuf, Weak<Recorder>>>> = OnceLock::new();
    RECORDERS.get_or_init(Mutex::default)
}

/// The recorder writing into `dir` (created when missing). Its queue
/// holds at most `queue_bytes` (default
/// [`verdict_records::DEFAULT_QUEUE_BYTES`]; tenants sharing a directory
/// share its recorder, sized by the first); a check that finds it full is
/// refused (503 `record_backlog`), never blocked.
pub fn recorder_for(dir: &Path, queue_bytes: Option<usize>) -> Result<Arc<Recorder>, RecordError> {
    std::fs::create_dir_all(dir).map_err(|e| RecordError::Io {
        path: dir.to_owned(),
        source: e,
    })?;
    let key = dir.canonicalize().map_err(|e| RecordError::Io {
        path: dir.to_owned(),
        source: e,
    })?;
    let mut map = recorders().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(recorder) = map.get(&key).and_then(Weak::upgrade) {
        return Ok(recorder);
    }
    let recorder = Arc::new(Recorder::open_with(
        RecordDir::new(&key),
        RecorderOptions {
            when_full: WhenFull::Refuse,
            max_queued_bytes: queue_bytes.unwrap_or(verdict_records::DEFAULT_QUEUE_BYTES),
        },
    )?);
    map.retain(|_, weak| weak.strong_count() > 0);
    map.insert(key, Arc::downgrade(&recorder));
    Ok(recorder)
}
