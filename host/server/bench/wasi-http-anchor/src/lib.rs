//! A `wasi:http/incoming-handler` that drains the request body and answers
//! 200 with a fixed small JSON body: the least a WebAssembly HTTP handler
//! does, for `wasmtime serve` to be measured beside `verdict serve`.

use wasip2::http::types::{
    Fields, IncomingBody, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam,
};

wasip2::http::proxy::export!(Anchor);

/// The answer, the size of verdict's small answer's gist.
const BODY: &[u8] = br#"{"complete":true}"#;

/// The exported handler.
struct Anchor;

impl wasip2::exports::http::incoming_handler::Guest for Anchor {
    fn handle(request: IncomingRequest, response_out: ResponseOutparam) {
        drain(&request);
        let headers = match Fields::from_list(&[
            ("content-type".to_string(), b"application/json".to_vec()),
            (
                "content-length".to_string(),
                BODY.len().to_string().into_bytes(),
            ),
        ]) {
            Ok(headers) => headers,
            Err(_) => return,
        };
        let response = OutgoingResponse::new(headers);
        let Ok(body) = response.body() else { return };
        ResponseOutparam::set(response_out, Ok(response));
        let Ok(out) = body.write() else { return };
        // One write: the body is far under the 4096 bytes it may carry.
        if out.blocking_write_and_flush(BODY).is_err() {
            return;
        }
        drop(out);
        let _ = OutgoingBody::finish(body, None);
    }
}

/// Reads the request body to its end (as a real handler would), discarding it.
fn drain(request: &IncomingRequest) {
    let Ok(body) = request.consume() else { return };
    if let Ok(stream) = body.stream() {
        // Ends at the body's end (closed) or on a failed read.
        while stream.blocking_read(64 * 1024).is_ok() {}
    }
    let _ = IncomingBody::finish(body);
}
