//! Everything the host knows of `verdict:packed@0.1.x`: the bindings
//! generated from the frozen `wit/verdict-packed@0.1.0/` (the packed entry
//! points a verifier may export beside `verdict:verifier@0.1`'s, whose types
//! and conversions it shares), and lowering the packed packet ([`lower`]).
//! They import nothing, so only their types are used (to lower the packed
//! packet and typecheck the exports).

mod lower;

pub(crate) use lower::PackedArg;

wasmtime::component::bindgen!({
    path: "../../wit/verdict-packed@0.1.0",
    world: "packed-checker",
});

/// The packed completion interface's types (the progress interface repeats
/// them, field for field).
pub(crate) use exports::verdict::packed::completion as types;

/// The `major.minor` of the packed package this host calls.
pub(crate) const MAJOR_MINOR: &str = "0.1";
