//! `verdict serve` driven over real HTTP on 127.0.0.1: the routes and their
//! errors, tenants kept apart, abuse (slow headers, huge bodies, hostile
//! uploads), the lifecycle (drain, reload) and the remote checker.

mod abuse;
mod api;
mod client;
mod drain;
mod integrity;
mod lifecycle;
mod oci;
mod prometheus;
mod records;
mod remote;
mod server;
mod threads;
