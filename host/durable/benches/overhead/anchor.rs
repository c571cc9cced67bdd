//! The anchor: a bare restate-sdk virtual object whose one exclusive
//! handler replays a journal shape (state gets, `ctx.run` entries and
//! state writes of given sizes, an output of a given size) and nothing
//! else. Given the shape measured from one verdict execution it costs what
//! the engine charges for that journal; given no entries, what a bare
//! invocation costs.

use std::net::SocketAddr;

use hyper_util::rt::{TokioExecutor, TokioIo};
use restate_sdk::hyper::HyperEndpoint;
use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The Restate service name of the anchor.
pub const SERVICE: &str = "Anchor";

/// One operation of a journal shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// A state get.
    Get { key: String },
    /// A `ctx.run` named `name` whose journaled value (JSON) is `bytes` long.
    Run { name: String, bytes: usize },
    /// A state write of `bytes` bytes.
    Set { key: String, bytes: usize },
}

/// What one invocation does.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Shape {
    pub ops: Vec<Op>,
    /// The output's size (JSON bytes).
    pub output: usize,
}

/// A JSON string value `bytes` long once serialized (at least `""`).
fn filler(bytes: usize) -> Value {
    Value::String("x".repeat(bytes.saturating_sub(2)))
}

pub struct AnchorObject;

#[restate_sdk::object(name = "Anchor")]
impl AnchorObject {
    /// Performs `shape`'s operations in order.
    #[handler]
    async fn turns(
        &self,
        ctx: ObjectContext<'_>,
        shape: Json<Shape>,
    ) -> Result<Json<Value>, HandlerError> {
        let Json(shape) = shape;
        for op in shape.ops {
            match op {
                Op::Get { key } => {
                    let _: Option<String> = ctx.get(&key).await?;
                }
                Op::Run { name, bytes } => {
                    let Json(_value): Json<Value> = ctx
                        .run(move || async move { Ok(Json(filler(bytes))) })
                        .name(name)
                        .await?;
                }
                Op::Set { key, bytes } => ctx.set(&key, Json(filler(bytes))),
            }
        }
        Ok(Json(filler(shape.output)))
    }
}

/// Serves the anchor on `listener` (HTTP/2, `TCP_NODELAY` as verdict's
/// worker does) to requests signed by `key`.
pub async fn serve(listener: tokio::net::TcpListener, key: &str) {
    let endpoint = Endpoint::builder()
        .bind(AnchorObject)
        .identity_key(key)
        .unwrap()
        .build();
    let endpoint = HyperEndpoint::new(endpoint);
    loop {
        let Ok((stream, _remote)): std::io::Result<(_, SocketAddr)> = listener.accept().await
        else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let endpoint = endpoint.clone();
        tokio::spawn(async move {
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            let _ = builder
                .serve_connection(TokioIo::new(stream), endpoint)
                .await;
        });
    }
}
