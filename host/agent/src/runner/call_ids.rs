//! Call ids unique within an execution.
//!
//! Providers pair calls with results by id, but do not all send one: Gemini
//! sends none (its connector numbers calls per response), OpenAI-compatible
//! servers may omit or empty it, and a server may repeat one across
//! responses. The loop gives every call of an execution a unique id before
//! anything else sees the call, and that id is used everywhere after: the
//! conversation sent back (both sides of each call/result pair), events,
//! observations, receipts and async delivery identities.

use std::collections::HashSet;

use verdict_providers::ToolCall;

/// The base of an id made for a call the provider sent without one.
const MADE_ID_BASE: &str = "call";

/// Longest id sent back: OpenAI refuses tool-call ids over 40 characters.
const MAX_ID_LEN: usize = 40;

/// `{base}-{n}`, the base cut (on a character boundary) so the whole id
/// stays within [`MAX_ID_LEN`] bytes. Only `[A-Za-z0-9_-]` is added: Anthropic
/// refuses tool-use ids with other characters.
fn made_id(base: &str, n: u64) -> String {
    let suffix = format!("-{n}");
    let mut end = base.len().min(MAX_ID_LEN.saturating_sub(suffix.len()));
    while !base.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{suffix}", &base[..end])
}

/// The ids given so far in one execution.
#[derive(Debug, Default)]
pub(crate) struct CallIds {
    used: HashSet<String>,
    calls: u64,
}

impl CallIds {
    /// Makes the ids of one response's calls unique within the execution:
    /// a provider id is kept when it is nonempty and new; otherwise the call
    /// gets `{id}-{n}` (or `call-{n}` for a missing id), `n` being its
    /// number in the execution. The original id stays a prefix (cut if it
    /// is long), so an id a connector invented (and never sends back) stays
    /// recognisable.
    pub(crate) fn assign(&mut self, calls: &mut [ToolCall]) {
        for call in calls {
            self.calls += 1;
            if call.id.is_empty() || self.used.contains(&call.id) {
                let base = if call.id.is_empty() {
                    MADE_ID_BASE
                } else {
                    call.id.as_str()
                };
                let mut n = self.calls;
                let mut id = made_id(base, n);
                while self.used.contains(&id) {
                    n += 1;
                    id = made_id(base, n);
                }
                call.id = id;
            }
            self.used.insert(call.id.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.to_owned(),
            name: "t".to_owned(),
            arguments: json!({}),
            signature: None,
        }
    }

    fn ids(calls: &[ToolCall]) -> Vec<&str> {
        calls.iter().map(|c| c.id.as_str()).collect()
    }

    #[test]
    fn new_ids_are_kept_and_missing_or_repeated_ones_are_made_unique() {
        let mut given = CallIds::default();
        let mut first = vec![call("a"), call(""), call("a"), call("gemini_call_0")];
        given.assign(&mut first);
        assert_eq!(ids(&first), ["a", "call-2", "a-3", "gemini_call_0"]);
        let mut second = vec![call("gemini_call_0"), call("a-3"), call("")];
        given.assign(&mut second);
        assert_eq!(ids(&second), ["gemini_call_0-5", "a-3-6", "call-7"]);
        // A provider id that collides with a made one is made unique too.
        let mut third = vec![call("call-8"), call("")];
        given.assign(&mut third);
        assert_eq!(ids(&third), ["call-8", "call-9"]);
    }

    #[test]
    fn made_ids_are_at_most_40_characters_of_a_safe_alphabet() {
        let mut given = CallIds::default();
        let long = "toolu_".to_owned() + &"x".repeat(60);
        let mut calls = vec![
            call(&long),
            call(&long),
            call("é".repeat(30).as_str()),
            call(&"é".repeat(30)),
        ];
        given.assign(&mut calls);
        assert_eq!(calls[0].id, long, "a new provider id is kept as sent");
        for made in [&calls[1].id, &calls[3].id] {
            assert!(made.len() <= 40, "{made}");
        }
        assert!(calls[1].id.starts_with("toolu_x") && calls[1].id.ends_with("-2"));
        assert!(calls[3].id.ends_with("-4"));
    }
}
