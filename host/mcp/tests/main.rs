//! verdict's MCP client against real MCP servers nobody in the project
//! wrote (the reference servers from npm, `mcp-server-time` from PyPI,
//! installed by `scripts/mcp-dev.sh` into `target/mcp-tools`), and against
//! a deliberately faulty server of ours for the faults.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod agent_loop;
mod conformance;
mod everything;
mod faults;
mod http;
mod list_changed;
mod support;
mod time;
