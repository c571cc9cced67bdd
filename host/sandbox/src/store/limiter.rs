//! A `ResourceLimiter` that caps memory and tables and records refusals.
//!
//! A guest over its memory cap does not raise a `Trap` of its own (its
//! `memory.grow` just fails and the guest usually aborts), so the refusal is
//! recorded here and the call is classified as out-of-memory from this record.

use wasmtime::ResourceLimiter;

/// Caps for one store, and what happened against them.
#[derive(Debug)]
pub(crate) struct CallLimiter {
    memory_cap: usize,
    table_cap: usize,
    instance_cap: usize,
    memories: usize,
    /// Largest linear memory size seen, in bytes.
    pub(crate) peak_memory: usize,
    /// Set when a memory growth was refused for exceeding the cap.
    pub(crate) memory_refused: bool,
}

impl CallLimiter {
    /// Caps per memory (bytes), per table (elements), instances per store,
    /// and memories per store.
    pub(crate) fn new(memory_cap: u64, table_cap: u32, instance_cap: u32, memories: u32) -> Self {
        Self {
            memory_cap: usize::try_from(memory_cap).unwrap_or(usize::MAX),
            table_cap: table_cap as usize,
            instance_cap: instance_cap as usize,
            memories: memories as usize,
            peak_memory: 0,
            memory_refused: false,
        }
    }
}

impl ResourceLimiter for CallLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_cap {
            self.memory_refused = true;
            return Ok(false);
        }
        self.peak_memory = self.peak_memory.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= self.table_cap)
    }

    fn instances(&self) -> usize {
        self.instance_cap
    }

    fn tables(&self) -> usize {
        self.instance_cap.saturating_mul(4)
    }

    fn memories(&self) -> usize {
        // Rust components use one memory; a few more leave room without
        // letting a guest multiply its memory cap.
        self.memories
    }
}
