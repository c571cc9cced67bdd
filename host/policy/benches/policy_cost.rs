//! Policy cost per tool call (placeholder).
fn main() {}
