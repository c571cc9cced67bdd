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
use crate::load::tier::Tier;
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
    /// Also the declared locals and the compile cost for this compiler,
    /// from every instruction: before compiling.
    CompileCost(Tier),
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
    let mut locals = 0u64;
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
                if let Scope::CompileCost(compiler) = scope {
                    let counts = Counts::of(&body)?;
                    over(
                        "max_function_locals",
                        counts.locals,
                        u64::from(limits.max_function_locals),
                    )?;
                    locals = locals.saturating_add(counts.locals);
                    over("max_locals", locals, limits.max_locals)?;
                    over(
                        "max_function_calls",
                        counts.calls,
                        u64::from(limits.max_function_calls),
                    )?;
                    cost = cost.saturating_add(counts.cost(compiler));
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

/// What one function body holds that its compile cost depends on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Body bytes.
    pub(crate) bytes: u64,
    /// Declared locals (each is zeroed at entry: Winch stores every one).
    pub(crate) locals: u64,
    /// `loop`s.
    pub(crate) loops: u64,
    /// Other branches: `block`, `if`, `else`, `br`, `br_if`, `br_table`.
    pub(crate) others: u64,
    /// Calls, and instructions compiled as calls into the runtime.
    pub(crate) calls: u64,
    /// Float-to-integer conversions (each a range check and a trap, or a
    /// saturation, expanded inline).
    pub(crate) conversions: u64,
    /// `br_table` targets (the default included).
    pub(crate) targets: u64,
}

impl Counts {
    /// Reads `body` through.
    pub(crate) fn of(body: &FunctionBody<'_>) -> Result<Self, LoadError> {
        let corrupt = |e: wasmparser::BinaryReaderError| LoadError::Corrupt(e.message().to_owned());
        let mut counts = Counts {
            bytes: body.range().len() as u64,
            ..Counts::default()
        };
        for local in body.get_locals_reader().map_err(corrupt)? {
            let (n, _) = local.map_err(corrupt)?;
            counts.locals = counts.locals.saturating_add(u64::from(n));
        }
        let mut reader = body.get_operators_reader().map_err(corrupt)?;
        while !reader.eof() {
            match reader.read().map_err(corrupt)? {
                Operator::Loop { .. } => counts.loops += 1,
                Operator::BrTable { targets } => {
                    counts.others += 1;
                    counts.targets += u64::from(targets.len()) + 1;
                }
                Operator::Block { .. }
                | Operator::If { .. }
                | Operator::Else
                | Operator::Br { .. }
                | Operator::BrIf { .. } => counts.others += 1,
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
                | Operator::ElemDrop { .. } => counts.calls += 1,
                Operator::I32TruncF32S
                | Operator::I32TruncF32U
                | Operator::I32TruncF64S
                | Operator::I32TruncF64U
                | Operator::I64TruncF32S
                | Operator::I64TruncF32U
                | Operator::I64TruncF64S
                | Operator::I64TruncF64U
                | Operator::I32TruncSatF32S
                | Operator::I32TruncSatF32U
                | Operator::I32TruncSatF64S
                | Operator::I32TruncSatF64U
                | Operator::I64TruncSatF32S
                | Operator::I64TruncSatF32U
                | Operator::I64TruncSatF64S
                | Operator::I64TruncSatF64U => counts.conversions += 1,
                _ => {}
            }
        }
        Ok(counts)
    }

    /// The function's estimated compile cost under `compiler` (see
    /// [`LoadLimits`]): about a microsecond of Cranelift compiling per
    /// unit. Loops, calls and branches dominate because each carries fuel
    /// (and, for loops, epoch) bookkeeping, and the branches of one
    /// function cost superlinearly in their number. Winch, ten times faster
    /// on ordinary code (its limit is ten times higher), is not faster at
    /// what it expands: it zeroes every declared local with a store of its
    /// own and inlines each conversion's checks, so those weigh more.
    pub(crate) fn cost(&self, compiler: Tier) -> u64 {
        let branches = self.loops + self.others;
        let (locals, conversions) = match compiler {
            Tier::Cranelift => (self.locals / 10, 10 * self.conversions),
            Tier::Winch => (2 * self.locals, 40 * self.conversions),
        };
        200u64
            .saturating_add(self.bytes)
            .saturating_add(100 * self.loops)
            .saturating_add(25 * self.calls)
            .saturating_add(10 * self.others)
            .saturating_add(branches.saturating_mul(branches) / 50)
            .saturating_add(locals)
            .saturating_add(conversions)
            .saturating_add(2 * self.targets)
    }
}
