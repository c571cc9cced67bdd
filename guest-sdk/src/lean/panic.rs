//! Panic messages of a lean build, written to WASI's standard error: the
//! one WASI interface a lean verifier imports (with the two stream types it
//! needs), so the host's diagnostics (`stderr_tail`) say why a verifier
//! trapped, as they do for a `wasm32-wasip2` build.

use std::sync::Once;

/// Bindings for writing to standard error; only what a panic report uses.
#[allow(missing_docs, unsafe_code, clippy::all)]
mod bindings {
    wit_bindgen::generate!({
        inline: r#"
            package verdict:lean-stderr;

            world report {
                import wasi:cli/stderr@0.2.0;
            }

            package wasi:io@0.2.0 {
                interface error {
                    resource error;
                }

                interface streams {
                    use error.{error};

                    variant stream-error {
                        last-operation-failed(error),
                        closed,
                    }

                    resource output-stream {
                        blocking-write-and-flush: func(contents: list<u8>) -> result<_, stream-error>;
                    }
                }
            }

            package wasi:cli@0.2.0 {
                interface stderr {
                    use wasi:io/streams@0.2.0.{output-stream};

                    get-stderr: func() -> output-stream;
                }
            }
        "#,
        world: "report",
        generate_all,
    });
}

/// Installs the panic hook (once per instance): the message, then std's
/// abort (a trap the host reports).
pub(crate) fn report_panics() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| std::panic::set_hook(Box::new(write_panic)));
}

fn write_panic(info: &std::panic::PanicHookInfo<'_>) {
    let message = format!("{info}\n");
    let stderr = bindings::wasi::cli::stderr::get_stderr();
    // Nothing better to do with a failed write: the trap follows either way.
    let _ = stderr.blocking_write_and_flush(message.as_bytes());
}
