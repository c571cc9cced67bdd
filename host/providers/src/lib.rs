//! Model provider connectors.
