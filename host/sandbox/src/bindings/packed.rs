//! Host bindings for `verdict:packed@0.1.x`, generated from the frozen
//! `wit/verdict-packed@0.1.0/`: the packed entry points a verifier may
//! export beside `verdict:verifier`'s. They import nothing, so only their
//! types are used (to lower the packed packet and typecheck the exports).

wasmtime::component::bindgen!({
    path: "../../wit/verdict-packed@0.1.0",
    world: "packed-checker",
});

/// The packed completion interface's types (the progress interface repeats
/// them, field for field).
pub(crate) use exports::verdict::packed::completion as types;

/// The package the packed interfaces belong to.
pub(crate) const PACKAGE: &str = "verdict:packed";

/// The `major.minor` of the packed package this host calls.
pub(crate) const MAJOR_MINOR: &str = "0.1";
