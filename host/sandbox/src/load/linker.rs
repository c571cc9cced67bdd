//! The linker every verifier is prepared against: the `verdict:verifier`
//! imports of every WIT version the host serves ([`crate::bindings`]) and
//! exactly the WASI subset named in [`crate::load::imports`].

use crate::bindings::ApiVersion;
use crate::store::clock::VirtualClocks;
use crate::store::poll::TapedPoll;
use crate::store::state::StoreState;
use wasmtime::Engine;
use wasmtime::component::Linker;
use wasmtime_wasi::cli::{WasiCli, WasiCliView};
use wasmtime_wasi::filesystem::{WasiFilesystem, WasiFilesystemView};
use wasmtime_wasi::p2::bindings::{cli, clocks, filesystem, random, sockets};
use wasmtime_wasi::random::{WasiRandom, WasiRandomView};
use wasmtime_wasi::sockets::{WasiSockets, WasiSocketsView};
use wasmtime_wasi_io::bindings::wasi::io;

/// Builds the linker. Filesystem, sockets and outgoing HTTP are linked
/// deny-all ([`crate::store::deny`]): no preopened directory, every socket,
/// address and name lookup refused, every request refused.
///
/// `wasi:io` is linked in its async form: a guest waiting in `poll`,
/// `block` or a blocking stream call suspends its call (see
/// [`crate::call::guard`]) instead of blocking the host thread. The clocks are the
/// call's virtual clocks ([`crate::store::clock`]).
pub(crate) fn build(engine: &Engine) -> wasmtime::Result<Linker<StoreState>> {
    let mut l = Linker::<StoreState>::new(engine);
    for api in ApiVersion::ALL {
        api.add_to_linker(&mut l)?;
    }

    io::error::add_to_linker::<StoreState, HasIo>(&mut l, StoreState::io_table)?;
    // Timers of a taped call answer from its tape (crate::store::poll).
    io::poll::add_to_linker::<StoreState, TapedPoll>(&mut l, StoreState::poll_view)?;
    io::streams::add_to_linker::<StoreState, HasIo>(&mut l, StoreState::io_table)?;

    clocks::wall_clock::add_to_linker::<StoreState, VirtualClocks>(
        &mut l,
        StoreState::virtual_clocks,
    )?;
    clocks::monotonic_clock::add_to_linker::<StoreState, VirtualClocks>(
        &mut l,
        StoreState::virtual_clocks,
    )?;
    random::random::add_to_linker::<StoreState, WasiRandom>(&mut l, StoreState::random)?;
    random::insecure::add_to_linker::<StoreState, WasiRandom>(&mut l, StoreState::random)?;
    random::insecure_seed::add_to_linker::<StoreState, WasiRandom>(&mut l, StoreState::random)?;
    cli::exit::add_to_linker::<StoreState, WasiCli>(&mut l, StoreState::cli)?;
    cli::environment::add_to_linker::<StoreState, WasiCli>(&mut l, StoreState::cli)?;
    cli::stdin::add_to_linker::<StoreState, WasiCli>(&mut l, StoreState::cli)?;
    cli::stdout::add_to_linker::<StoreState, WasiCli>(&mut l, StoreState::cli)?;
    cli::stderr::add_to_linker::<StoreState, WasiCli>(&mut l, StoreState::cli)?;
    cli::terminal_input::add_to_linker::<StoreState, WasiCli>(&mut l, StoreState::cli)?;
    cli::terminal_output::add_to_linker::<StoreState, WasiCli>(&mut l, StoreState::cli)?;
    cli::terminal_stdin::add_to_linker::<StoreState, WasiCli>(&mut l, StoreState::cli)?;
    cli::terminal_stdout::add_to_linker::<StoreState, WasiCli>(&mut l, StoreState::cli)?;
    cli::terminal_stderr::add_to_linker::<StoreState, WasiCli>(&mut l, StoreState::cli)?;

    filesystem::types::add_to_linker::<StoreState, WasiFilesystem>(&mut l, StoreState::filesystem)?;
    filesystem::preopens::add_to_linker::<StoreState, WasiFilesystem>(
        &mut l,
        StoreState::filesystem,
    )?;
    sockets::network::add_to_linker::<StoreState, WasiSockets>(
        &mut l,
        &sockets::network::LinkOptions::default(),
        StoreState::sockets,
    )?;
    sockets::instance_network::add_to_linker::<StoreState, WasiSockets>(
        &mut l,
        StoreState::sockets,
    )?;
    sockets::tcp::add_to_linker::<StoreState, WasiSockets>(&mut l, StoreState::sockets)?;
    sockets::tcp_create_socket::add_to_linker::<StoreState, WasiSockets>(
        &mut l,
        StoreState::sockets,
    )?;
    sockets::udp::add_to_linker::<StoreState, WasiSockets>(&mut l, StoreState::sockets)?;
    sockets::udp_create_socket::add_to_linker::<StoreState, WasiSockets>(
        &mut l,
        StoreState::sockets,
    )?;
    sockets::ip_name_lookup::add_to_linker::<StoreState, WasiSockets>(&mut l, StoreState::sockets)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut l)?;
    Ok(l)
}

/// `HasData` projection to the resource table, for `wasi:io`.
struct HasIo;

impl wasmtime::component::HasData for HasIo {
    type Data<'a> = &'a mut wasmtime::component::ResourceTable;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::imports::is_allowed;
    use wasmtime::component::Component;

    const RESOURCE: &str = "(type (sub resource))";

    /// Interfaces wasmtime-wasi implements for WASI 0.2, each with one item
    /// it really exports (a resource or a function of a plain type): an
    /// import of the item links exactly when the linker defines the
    /// interface. (An empty instance import would link either way.)
    const CANDIDATES: &[(&str, &str, &str)] = &[
        ("wasi:io/error@0.2.0", "error", RESOURCE),
        ("wasi:io/poll@0.2.0", "pollable", RESOURCE),
        ("wasi:io/streams@0.2.6", "input-stream", RESOURCE),
        (
            "wasi:clocks/monotonic-clock@0.2.0",
            "now",
            "(func (result u64))",
        ),
        (
            "wasi:random/random@0.2.0",
            "get-random-u64",
            "(func (result u64))",
        ),
        (
            "wasi:random/insecure@0.2.0",
            "get-insecure-random-u64",
            "(func (result u64))",
        ),
        (
            "wasi:cli/environment@0.2.0",
            "get-arguments",
            "(func (result (list string)))",
        ),
        ("wasi:cli/terminal-input@0.2.0", "terminal-input", RESOURCE),
        (
            "wasi:cli/terminal-output@0.2.0",
            "terminal-output",
            RESOURCE,
        ),
        ("wasi:filesystem/types@0.2.0", "descriptor", RESOURCE),
        ("wasi:sockets/network@0.2.0", "network", RESOURCE),
        ("wasi:sockets/tcp@0.2.0", "tcp-socket", RESOURCE),
        ("wasi:sockets/udp@0.2.0", "udp-socket", RESOURCE),
        (
            "wasi:sockets/ip-name-lookup@0.2.0",
            "resolve-address-stream",
            RESOURCE,
        ),
        ("wasi:http/types@0.2.0", "fields", RESOURCE),
        // Not implemented by this host: refused by both gates.
        ("wasi:http/incoming-handler@0.2.0", "handle", "(func)"),
        ("wasi:keyvalue/store@0.2.0", "bucket", RESOURCE),
        ("wasi:filesystem/types@0.3.0", "descriptor", RESOURCE),
    ];

    /// The linker and the import allowlist are two gates that must agree:
    /// what is not allowed is not linked either.
    /// (That every allowed interface links with real functions is shown in
    /// `tests/contract.rs`.)
    #[test]
    fn links_exactly_the_allowlisted_interfaces() {
        let engine = Engine::default();
        let linker = build(&engine).unwrap();
        for (name, item, ty) in CANDIDATES {
            let text =
                format!(r#"(component (import "{name}" (instance (export "{item}" {ty}))))"#);
            let component = Component::new(&engine, wat::parse_str(&text).unwrap()).unwrap();
            let linked = linker.instantiate_pre(&component).is_ok();
            assert_eq!(linked, is_allowed(name), "{name}");
        }
        let refused = CANDIDATES.iter().filter(|(name, ..)| !is_allowed(name));
        assert_eq!(refused.count(), 3);
    }
}
