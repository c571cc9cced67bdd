//! What an MCP tool's annotations make of it: its effect under the loop
//! policy, and whether a durable execution may run it again after a crash.
//!
//! | annotations                                   | effect  | reruns after a crash          |
//! |-----------------------------------------------|---------|-------------------------------|
//! | `readOnlyHint: true`                          | read    | yes (a read)                  |
//! | `idempotentHint: true`, not read-only         | write   | yes, with the same idempotency key in `_meta` |
//! | any other annotations                         | write   | never (`uncertain_effect`)    |
//! | no annotations at all                         | unknown | never (`uncertain_effect`)    |
//!
//! Annotations are hints from a server that may be untrusted: a server can
//! call a destructive tool read-only. A configuration that does not trust
//! them ([`crate::ServerConfig::trust_annotations`] `= false`) treats every
//! tool as unknown unless an override names its effect.

use serde::{Deserialize, Serialize};
use verdict_policy::Effect;

/// The annotation hints of one tool, as the server declared them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hints {
    /// `readOnlyHint`.
    pub read_only: Option<bool>,
    /// `destructiveHint`.
    pub destructive: Option<bool>,
    /// `idempotentHint`.
    pub idempotent: Option<bool>,
}

/// An effect a configuration names for a tool, overriding its annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EffectOverride {
    /// An actual read.
    Read,
    /// A write that running twice with the same key has the effect of once.
    IdempotentWrite,
    /// A write: never run twice.
    Write,
    /// Unknown: treated like a write.
    Unknown,
}

/// Where a tool's effect came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EffectSource {
    /// The server's annotations.
    Annotation,
    /// The configuration's per-tool override.
    Override,
    /// No annotations, or annotations not trusted: the safe default.
    Default,
}

/// A tool's effect and rerun rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolEffect {
    /// The effect the policy sees.
    pub effect: Effect,
    /// Whether a durable execution may run it again with the same key.
    pub idempotent: bool,
    /// Where this came from.
    pub source: EffectSource,
}

impl ToolEffect {
    /// The effect of a tool with these annotations (`None`: the server gave
    /// none), an override from the configuration, and whether the
    /// configuration trusts the server's hints.
    pub fn decide(hints: Option<Hints>, over: Option<EffectOverride>, trust: bool) -> Self {
        if let Some(over) = over {
            let (effect, idempotent) = match over {
                EffectOverride::Read => (Effect::Read, false),
                EffectOverride::IdempotentWrite => (Effect::Write, true),
                EffectOverride::Write => (Effect::Write, false),
                EffectOverride::Unknown => (Effect::Unknown, false),
            };
            return Self {
                effect,
                idempotent,
                source: EffectSource::Override,
            };
        }
        let unknown = Self {
            effect: Effect::Unknown,
            idempotent: false,
            source: EffectSource::Default,
        };
        let Some(hints) = hints.filter(|_| trust) else {
            return unknown;
        };
        if hints == Hints::default() {
            return unknown;
        }
        let (effect, idempotent) = if hints.read_only == Some(true) {
            (Effect::Read, false)
        } else {
            (Effect::Write, hints.idempotent == Some(true))
        };
        Self {
            effect,
            idempotent,
            source: EffectSource::Annotation,
        }
    }

    /// A short name of the effect: `read`, `idempotent_write`, `write`, `unknown`.
    pub fn label(&self) -> &'static str {
        match (self.effect, self.idempotent) {
            (Effect::Read, _) => "read",
            (Effect::Write, true) => "idempotent_write",
            (Effect::Write, false) => "write",
            (Effect::Unknown, _) => "unknown",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints(
        read_only: Option<bool>,
        destructive: Option<bool>,
        idempotent: Option<bool>,
    ) -> Hints {
        Hints {
            read_only,
            destructive,
            idempotent,
        }
    }

    #[test]
    fn the_table_row_by_row() {
        let cases = [
            (Some(hints(Some(true), None, None)), "read"),
            (Some(hints(Some(true), Some(true), Some(false))), "read"),
            (
                Some(hints(Some(false), Some(true), Some(true))),
                "idempotent_write",
            ),
            (Some(hints(None, None, Some(true))), "idempotent_write"),
            (Some(hints(Some(false), Some(true), Some(false))), "write"),
            (Some(hints(Some(false), Some(false), None)), "write"),
            (Some(hints(None, None, None)), "unknown"),
            (None, "unknown"),
        ];
        for (h, want) in cases {
            let got = ToolEffect::decide(h, None, true);
            assert_eq!(got.label(), want, "{h:?}");
            let source = if want == "unknown" {
                EffectSource::Default
            } else {
                EffectSource::Annotation
            };
            assert_eq!(got.source, source, "{h:?}");
        }
    }

    #[test]
    fn untrusted_hints_are_unknown_and_an_override_wins() {
        let read_only = Some(hints(Some(true), None, None));
        let untrusted = ToolEffect::decide(read_only, None, false);
        assert_eq!(
            (untrusted.label(), untrusted.source),
            ("unknown", EffectSource::Default)
        );
        let over = ToolEffect::decide(read_only, Some(EffectOverride::Write), true);
        assert_eq!(
            (over.label(), over.source),
            ("write", EffectSource::Override)
        );
        let over = ToolEffect::decide(None, Some(EffectOverride::IdempotentWrite), false);
        assert_eq!(
            (over.label(), over.source),
            ("idempotent_write", EffectSource::Override)
        );
    }
}
