//! Host bindings generated from `wit/verifier.wit`.

wasmtime::component::bindgen!({
    path: "../../wit",
    world: "checker",
    imports: { default: trappable },
});

pub(crate) use exports::verdict::verifier::completion::GuestIndices as CompletionIndices;
pub(crate) use exports::verdict::verifier::progress::GuestIndices as ProgressIndices;
pub(crate) use verdict::verifier::artifacts;
pub(crate) use verdict::verifier::types as wit;
