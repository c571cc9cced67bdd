//! Host bindings generated from `wit/verifier.wit`.

wasmtime::component::bindgen!({
    path: "../../wit",
    world: "checker",
    imports: { default: trappable },
});

pub(crate) use verdict::verifier::artifacts;
pub(crate) use verdict::verifier::types as wit;
