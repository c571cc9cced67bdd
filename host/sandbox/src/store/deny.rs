//! The WASI interfaces a verifier may import but that grant nothing:
//! `wasi:filesystem` without a single preopened directory, `wasi:sockets`
//! refusing every address, socket and name lookup, and `wasi:http`'s
//! outgoing handler refusing every request.
//!
//! The official Python and JavaScript toolchains (componentize-py,
//! componentize-js) import these in every default build; linking them
//! deny-all lets those builds load without giving a verifier a way out of
//! its sandbox. Each refusal is a WASI error value the guest sees at run
//! time (`access-denied`, `permanent-resolver-failure`,
//! `HTTP-request-denied`); nothing reaches the host's files or network.

use crate::store::stderr::TailPipe;
use crate::store::tape::{SEED_BYTES, seeded_random};
use std::future::Future;
use wasmtime_wasi::WasiCtx;
use wasmtime_wasi_http::{
    Error as HttpError, RequestOptions, WasiBody, WasiHttpCtx, WasiHttpHooks,
};

/// The call's WASI context: no environment, arguments or preopened
/// directories; stdin closed; stdout discarded; stderr into `stderr`;
/// sockets refused whatever the address; no name lookup. With a `seed`
/// (a recorded or replayed call), `wasi:random` is the streams of that seed
/// (see [`crate::store::tape`]); without, wasmtime's own generators.
pub(crate) fn wasi_ctx(stderr: TailPipe, seed: Option<&[u8; SEED_BYTES]>) -> WasiCtx {
    let mut builder = WasiCtx::builder();
    builder
        .stderr(stderr)
        .socket_addr_check(|_, _| Box::pin(async { false }))
        .allow_ip_name_lookup(false)
        .allow_tcp(false)
        .allow_udp(false);
    if let Some(seed) = seed {
        let (secure, insecure, insecure_seed) = seeded_random(seed);
        builder
            .secure_random(secure)
            .insecure_random(insecure)
            .insecure_random_seed(insecure_seed);
    }
    builder.build()
}

/// The call's `wasi:http` state: a context and hooks that refuse every
/// outgoing request.
pub(crate) struct DenyHttp {
    pub(crate) ctx: WasiHttpCtx,
    pub(crate) hooks: RefuseRequests,
}

impl DenyHttp {
    pub(crate) fn new() -> Self {
        Self {
            ctx: WasiHttpCtx::new(),
            hooks: RefuseRequests,
        }
    }
}

/// `wasi:http` hooks that send nothing: every request the guest hands to
/// `outgoing-handler.handle` resolves to `HTTP-request-denied`. (With the
/// `default-send-request` feature off, no HTTP client is compiled in.)
pub(crate) struct RefuseRequests;

/// What `send_request` hands back (the hook's own signature).
type Sent = Box<
    dyn Future<
            Output = Result<
                (
                    http::Response<WasiBody>,
                    Box<dyn Future<Output = Result<(), HttpError>> + Send>,
                ),
                HttpError,
            >,
        > + Send,
>;

impl WasiHttpHooks for RefuseRequests {
    fn send_request(
        &mut self,
        _request: http::Request<WasiBody>,
        _options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = Result<(), HttpError>> + Send>,
    ) -> Sent {
        Box::new(async { Err(HttpError::HttpRequestDenied) })
    }
}
