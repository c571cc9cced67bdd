//! revision-progress
