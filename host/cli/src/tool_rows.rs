//! One line per tool of an agent: its name, effect and where the effect
//! came from (`/tools` in the console, `verdict mcp list`).

use verdict::mcp::{EffectSource, ToolEffect, ToolListing};

/// A tool as the listings show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRow {
    /// The loop's name of the tool.
    pub name: String,
    /// `read`, `idempotent_write`, `write` or `unknown`.
    pub effect: &'static str,
    /// `built-in`, or `mcp SERVER (TOOL): annotation|override|default`.
    pub from: String,
}

/// The rows of `tools`, MCP tools described by their `mcp` listing.
pub fn rows(tools: &[verdict::Tool], mcp: &[ToolListing]) -> Vec<ToolRow> {
    tools
        .iter()
        .map(
            |tool| match mcp.iter().find(|l| l.loop_name == tool.name()) {
                Some(listing) => mcp_row(listing),
                None => ToolRow {
                    name: tool.name().to_owned(),
                    effect: ToolEffect {
                        effect: tool.effect(),
                        idempotent: tool.is_idempotent(),
                        source: EffectSource::Default,
                    }
                    .label(),
                    from: "built-in".into(),
                },
            },
        )
        .collect()
}

/// The row of one MCP tool.
pub fn mcp_row(listing: &ToolListing) -> ToolRow {
    let source = match listing.effect.source {
        EffectSource::Annotation => "annotation",
        EffectSource::Override => "override",
        EffectSource::Default => "default",
    };
    ToolRow {
        name: listing.loop_name.clone(),
        effect: listing.effect.label(),
        from: format!("mcp {} ({}): {source}", listing.server, listing.tool),
    }
}

/// The rows as an aligned table, one tool per line.
pub fn table(rows: &[ToolRow]) -> String {
    if rows.is_empty() {
        return "no tools".into();
    }
    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0);
    rows.iter()
        .map(|r| format!("{:width$}  {:16}  {}", r.name, r.effect, r.from))
        .collect::<Vec<_>>()
        .join("\n")
}
