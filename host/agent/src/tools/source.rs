//! `ToolSource`: tools whose list may change during a run (an MCP server
//! that announces a new list), refreshed by the loop between turns.

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::tool::Tool;

/// A changing set of tools. The loop calls [`ToolSource::refresh`] before
/// each model call of a managed execution (never while a batch runs) and
/// then offers [`ToolSource::tools`] with the next request; a batch keeps
/// the tools its calls were prepared with. A name also registered as a
/// fixed tool, or offered by an earlier source, is shadowed.
pub trait ToolSource: Send + Sync + fmt::Debug {
    /// The tools offered now.
    fn tools(&self) -> Vec<Arc<Tool>>;

    /// Brings [`ToolSource::tools`] up to date when it knows the list
    /// changed; `true` when it did change. A failed refresh keeps the
    /// tools it had (the source logs why).
    fn refresh(&self) -> BoxFuture<'_, bool>;

    /// Why `name` is not offered when the source once offered it (the
    /// failure of a later call to it), `None` when it never did.
    fn withdrawn(&self, name: &str) -> Option<String> {
        let _ = name;
        None
    }
}
