//! The compiler tiers: which `wasmtime::Strategy` an engine uses, and the
//! engine settings compiled code depends on (shared by a host's engines and
//! its compile children, whose output must deserialize in the host).

use wasmtime::{Config, Strategy};

/// A compiler tier: what compiled the code a call ran
/// ([`CallMetrics::tier`](crate::CallMetrics::tier)). The census estimates
/// each one's compile cost apart (they expand different instructions: see
/// [`crate::LoadLimits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Tier {
    /// Cranelift: optimizing.
    Cranelift,
    /// Winch: baseline.
    Winch,
}

impl Tier {
    /// The tier's name (`"cranelift"`, `"winch"`), as a compile child is
    /// told it.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Cranelift => "cranelift",
            Tier::Winch => "winch",
        }
    }

    /// The tier named `name` ([`Tier::name`]).
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        match name {
            "cranelift" => Some(Tier::Cranelift),
            "winch" => Some(Tier::Winch),
            _ => None,
        }
    }

    /// The engine settings of this tier, but for the instance allocator
    /// (which compiled code does not depend on): what a compile child uses
    /// too.
    pub(crate) fn engine_config(self) -> Config {
        let mut cfg = Config::new();
        cfg.wasm_component_model(true)
            .consume_fuel(true)
            .epoch_interruption(true);
        match self {
            Tier::Cranelift => cfg.strategy(Strategy::Cranelift),
            Tier::Winch => cfg.strategy(Strategy::Winch),
        };
        cfg
    }
}
