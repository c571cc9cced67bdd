//! The linker every verifier is prepared against: our `artifacts` interface
//! and exactly the WASI subset named in [`crate::imports`].

use crate::bindings::Checker;
use crate::clock::VirtualClocks;
use crate::state::CallState;
use wasmtime::Engine;
use wasmtime::component::{HasSelf, Linker};
use wasmtime_wasi::cli::{WasiCli, WasiCliView};
use wasmtime_wasi::p2::bindings::{cli, clocks, random};
use wasmtime_wasi::random::{WasiRandom, WasiRandomView};
use wasmtime_wasi_io::bindings::wasi::io;

/// Builds the linker. Filesystem, sockets and HTTP are deliberately absent.
///
/// `wasi:io` is linked in its async form: a guest waiting in `poll`,
/// `block` or a blocking stream call suspends its call (see
/// [`crate::exec`]) instead of blocking the host thread. The clocks are the
/// call's virtual clocks ([`crate::clock`]).
pub(crate) fn build(engine: &Engine) -> wasmtime::Result<Linker<CallState>> {
    let mut l = Linker::<CallState>::new(engine);
    Checker::add_to_linker::<CallState, HasSelf<CallState>>(&mut l, |s| s)?;

    io::error::add_to_linker::<CallState, HasIo>(&mut l, CallState::io_table)?;
    io::poll::add_to_linker::<CallState, HasIo>(&mut l, CallState::io_table)?;
    io::streams::add_to_linker::<CallState, HasIo>(&mut l, CallState::io_table)?;

    clocks::wall_clock::add_to_linker::<CallState, VirtualClocks>(
        &mut l,
        CallState::virtual_clocks,
    )?;
    clocks::monotonic_clock::add_to_linker::<CallState, VirtualClocks>(
        &mut l,
        CallState::virtual_clocks,
    )?;
    random::random::add_to_linker::<CallState, WasiRandom>(&mut l, CallState::random)?;
    random::insecure::add_to_linker::<CallState, WasiRandom>(&mut l, CallState::random)?;
    random::insecure_seed::add_to_linker::<CallState, WasiRandom>(&mut l, CallState::random)?;
    cli::exit::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::environment::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::stdin::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::stdout::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::stderr::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::terminal_input::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::terminal_output::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::terminal_stdin::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::terminal_stdout::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::terminal_stderr::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    Ok(l)
}

/// `HasData` projection to the resource table, for `wasi:io`.
struct HasIo;

impl wasmtime::component::HasData for HasIo {
    type Data<'a> = &'a mut wasmtime::component::ResourceTable;
}
