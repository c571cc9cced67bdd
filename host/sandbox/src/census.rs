//! The load-time census: one parse of a component's bytes, before any
//! compiling, that refuses what is over the host's [`LoadLimits`].
//!
//! Compiling is the expensive part of loading (a component of 100,000 tiny
//! functions took 28 s and 632 MiB), and wasmtime gives no way to bound it
//! once started; counting is a linear scan of section headers.

use crate::error::LoadError;
use crate::limits::LoadLimits;
use wasmparser::{Encoding, Parser, Payload};

fn over(limit: &'static str, found: u64, max: u64) -> Result<(), LoadError> {
    if found > max {
        return Err(LoadError::OverLimit { limit, found, max });
    }
    Ok(())
}

/// Refuses `bytes` when they are over a limit in `limits`. Malformed bytes
/// are left to the compiler (which reports them as corrupt) unless the
/// damage stops the count itself.
pub(crate) fn check(bytes: &[u8], limits: &LoadLimits) -> Result<(), LoadError> {
    over(
        "max_component_bytes",
        bytes.len() as u64,
        limits.max_component_bytes,
    )?;
    let mut functions = 0u64;
    // Memories and tables defined by each core module being read (a stack:
    // modules nest inside components).
    let mut modules: Vec<(u64, u64)> = Vec::new();
    for payload in Parser::new(0).parse_all(bytes) {
        let payload = payload.map_err(|e| LoadError::Corrupt(e.message().to_owned()))?;
        match payload {
            Payload::Version {
                encoding: Encoding::Module,
                ..
            } => modules.push((0, 0)),
            Payload::End(_) => {
                modules.pop();
            }
            Payload::CodeSectionStart { count, .. } => {
                functions += u64::from(count);
                over("max_functions", functions, u64::from(limits.max_functions))?;
            }
            Payload::CodeSectionEntry(body) => over(
                "max_function_bytes",
                body.range().len() as u64,
                u64::from(limits.max_function_bytes),
            )?,
            Payload::MemorySection(reader) => {
                if let Some((memories, _)) = modules.last_mut() {
                    *memories += u64::from(reader.count());
                    over("max_memories", *memories, u64::from(limits.max_memories))?;
                }
            }
            Payload::TableSection(reader) => {
                let count = u64::from(reader.count());
                if let Some((_, tables)) = modules.last_mut() {
                    *tables += count;
                    over("max_tables", *tables, u64::from(limits.max_tables))?;
                }
                for table in reader {
                    let table = table.map_err(|e| LoadError::Corrupt(e.message().to_owned()))?;
                    over(
                        "max_table_elements",
                        table.ty.initial,
                        u64::from(limits.max_table_elements),
                    )?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}
