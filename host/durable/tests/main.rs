//! The durable executions against a real Restate server on 127.0.0.1,
//! with worker processes killed (SIGKILL) at chosen points.

mod support;

mod chaos;
mod conversations;
mod crash;
mod identity;
mod mismatch;
mod tls;
