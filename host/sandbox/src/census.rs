//! The load-time census: one parse of a component's bytes, before any
//! compiling, that refuses what is over the host's [`LoadLimits`].
//!
//! Compiling is the expensive part of loading (a component of 100,000 tiny
//! functions took 28 s and 632 MiB), and wasmtime gives no way to bound it
//! once started; counting is one linear scan of the bytes. Sizes and counts
//! are checked at every load; the compile cost, which needs every
//! instruction read, only before compiling (a component from the compile
//! cache is not compiled again).

use crate::error::LoadError;
use crate::limits::LoadLimits;
use wasmparser::{Encoding, FunctionBody, Operator, Parser, Payload};

fn over(limit: &'static str, found: u64, max: u64) -> Result<(), LoadError> {
    if found > max {
        return Err(LoadError::OverLimit { limit, found, max });
    }
    Ok(())
}

/// What a census checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Sizes and counts, from section headers: every load.
    Structure,
    /// Also the compile cost, from every instruction: before compiling.
    CompileCost,
}

/// Refuses `bytes` when they are over a limit in `limits` (the compile
/// cost only with [`Scope::CompileCost`]). Malformed bytes are left to the
/// compiler (which reports them as corrupt) unless the damage stops the
/// count itself.
pub(crate) fn check(bytes: &[u8], limits: &LoadLimits, scope: Scope) -> Result<(), LoadError> {
    over(
        "max_component_bytes",
        bytes.len() as u64,
        limits.max_component_bytes,
    )?;
    let mut functions = 0u64;
    let mut cost = 0u64;
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
            Payload::CodeSectionEntry(body) => {
                let size = body.range().len() as u64;
                over(
                    "max_function_bytes",
                    size,
                    u64::from(limits.max_function_bytes),
                )?;
                if scope == Scope::CompileCost {
                    cost = cost.saturating_add(compile_cost(&body)?);
                    over("max_compile_cost", cost, limits.max_compile_cost)?;
                }
            }
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

/// A function's estimated compile cost (see [`LoadLimits`]): about a
/// microsecond of compiling per unit. Loops, calls and branches dominate
/// because each carries fuel (and, for loops, epoch) bookkeeping, and the
/// branches of one function cost superlinearly in their number.
fn compile_cost(body: &FunctionBody<'_>) -> Result<u64, LoadError> {
    let corrupt = |e: wasmparser::BinaryReaderError| LoadError::Corrupt(e.message().to_owned());
    let mut reader = body.get_operators_reader().map_err(corrupt)?;
    let (mut loops, mut others, mut calls) = (0u64, 0u64, 0u64);
    while !reader.eof() {
        match reader.read().map_err(corrupt)? {
            Operator::Loop { .. } => loops += 1,
            Operator::Block { .. }
            | Operator::If { .. }
            | Operator::Else
            | Operator::Br { .. }
            | Operator::BrIf { .. }
            | Operator::BrTable { .. } => others += 1,
            // Calls, and instructions compiled as calls into the runtime.
            Operator::Call { .. }
            | Operator::CallIndirect { .. }
            | Operator::CallRef { .. }
            | Operator::ReturnCall { .. }
            | Operator::ReturnCallIndirect { .. }
            | Operator::ReturnCallRef { .. }
            | Operator::MemoryGrow { .. }
            | Operator::MemoryFill { .. }
            | Operator::MemoryCopy { .. }
            | Operator::MemoryInit { .. }
            | Operator::DataDrop { .. }
            | Operator::TableGrow { .. }
            | Operator::TableFill { .. }
            | Operator::TableCopy { .. }
            | Operator::TableInit { .. }
            | Operator::ElemDrop { .. } => calls += 1,
            _ => {}
        }
    }
    let branches = loops + others;
    Ok(200
        + body.range().len() as u64
        + 100 * loops
        + 25 * calls
        + 10 * others
        + branches * branches / 50)
}
