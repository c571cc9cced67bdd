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
use crate::limits::{Limits, LoadLimits};
use serde::Serialize;
use wasmparser::{Encoding, FunctionBody, Instance, Operator, Parser, Payload};

/// What instantiating a component creates, counted from its bytes: core
/// module instantiations, and the linear memories and tables those modules
/// define. Each instantiation written in the component is counted once (a
/// nested component instantiated twice would need more; the store's
/// limiter still enforces the tenant's limits at run time).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Footprint {
    /// Core module instances (what [`Limits::instances`] bounds).
    pub core_instances: u32,
    /// Linear memories defined by the component's core modules.
    pub memories: u32,
    /// Tables defined by the component's core modules.
    pub tables: u32,
    /// Function body bytes over all core modules: what is compiled.
    pub code_bytes: u64,
}

impl Footprint {
    /// Refuses a component that can never instantiate under `limits`:
    /// more core instances than [`Limits::instances`], more memories than
    /// `max_memories` (the host's [`LoadLimits::max_memories`]), or more
    /// tables than the limiter allows (four per instance).
    pub(crate) fn fits(&self, limits: &Limits, max_memories: u32) -> Result<(), LoadError> {
        over(
            "instances",
            u64::from(self.core_instances),
            u64::from(limits.instances),
        )?;
        over(
            "max_memories",
            u64::from(self.memories),
            u64::from(max_memories),
        )?;
        over(
            "tables",
            u64::from(self.tables),
            u64::from(limits.instances).saturating_mul(4),
        )
    }
}

/// `limit` refused when `found` is over `max`.
pub(crate) fn over(limit: &'static str, found: u64, max: u64) -> Result<(), LoadError> {
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
pub(crate) fn check(
    bytes: &[u8],
    limits: &LoadLimits,
    scope: Scope,
) -> Result<Footprint, LoadError> {
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
    let mut footprint = Footprint::default();
    let count = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
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
                footprint.code_bytes = footprint.code_bytes.saturating_add(size);
                over(
                    "max_code_bytes",
                    footprint.code_bytes,
                    limits.max_code_bytes,
                )?;
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
            Payload::InstanceSection(reader) => {
                for instance in reader {
                    let instance =
                        instance.map_err(|e| LoadError::Corrupt(e.message().to_owned()))?;
                    if matches!(instance, Instance::Instantiate { .. }) {
                        footprint.core_instances = footprint.core_instances.saturating_add(1);
                    }
                }
            }
            Payload::MemorySection(reader) => {
                footprint.memories = footprint
                    .memories
                    .saturating_add(count(u64::from(reader.count())));
                if let Some((memories, _)) = modules.last_mut() {
                    *memories += u64::from(reader.count());
                    over("max_memories", *memories, u64::from(limits.max_memories))?;
                }
            }
            Payload::TableSection(reader) => {
                let defined = u64::from(reader.count());
                footprint.tables = footprint.tables.saturating_add(count(defined));
                if let Some((_, tables)) = modules.last_mut() {
                    *tables += defined;
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
    Ok(footprint)
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
