//! Streaming parse throughput and per-request overhead (filled in below).

fn main() {}
