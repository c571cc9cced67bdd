//! artifact-ready
