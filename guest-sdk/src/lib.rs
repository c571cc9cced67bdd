//! The verdict guest SDK.
