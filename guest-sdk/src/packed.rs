//! Unpacking the observations of `verdict:packed@0.1.0`
//! (`wit/verdict-packed@0.1.0/packed.wit`): one string holding every
//! observation's tool name, call id and result fingerprint, in that order,
//! and per observation the byte length of each piece.
//!
//! A host passes its packet this way when the component exports the packed
//! entry points beside the standard ones (the guest SDK always does): the
//! guest then receives a few large allocations instead of one per string,
//! and the observations' strings borrow the one that holds them all.
//! Plain Rust, so it is tested natively; the component glue converts the
//! WIT records into [`PackedEntry`] values and calls [`unpack`].

use crate::packet::{Effect, FailureKind, Observation, Outcome, OutcomeStatus};
use std::borrow::Cow;

/// One packed observation: its strings' lengths in bytes, and the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackedEntry {
    /// Length of the tool name.
    pub tool_name_len: u32,
    /// Length of the call id.
    pub call_id_len: u32,
    /// The tool's declared effect.
    pub effect: Effect,
    /// The outcome, when one was recorded.
    pub outcome: Option<PackedOutcome>,
}

/// A packed outcome: its fingerprint's length in bytes, and the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackedOutcome {
    /// The outcome status.
    pub status: OutcomeStatus,
    /// Why it failed, for a failed call.
    pub failure: Option<FailureKind>,
    /// True when the tool actually ran.
    pub executed: bool,
    /// Length of the result fingerprint, when known.
    pub result_fingerprint_len: Option<u32>,
}

/// The lengths do not describe the text: the host broke the packed format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Malformed {
    /// A piece runs past the end of the text, or does not end on a
    /// character boundary.
    #[error("observation {index}: a {what} of {len} bytes at byte {at} is not a piece of the text")]
    Piece {
        /// The observation's index.
        index: usize,
        /// Which string.
        what: &'static str,
        /// Where it starts.
        at: usize,
        /// Its length.
        len: u32,
    },
    /// Bytes are left after the last observation's pieces.
    #[error("{left} bytes of the packed text belong to no observation")]
    Leftover {
        /// How many.
        left: usize,
    },
}

/// The observations `entries` describe, their strings borrowed from `text`.
pub fn unpack(
    text: &str,
    entries: impl IntoIterator<Item = PackedEntry>,
) -> Result<Vec<Observation<'_>>, Malformed> {
    let entries = entries.into_iter();
    let mut observations = Vec::with_capacity(entries.size_hint().0);
    let mut at = 0usize;
    for (index, entry) in entries.enumerate() {
        let mut piece = |what: &'static str, len: u32| {
            let piece = usize::try_from(len)
                .ok()
                .and_then(|len| Some((len, at.checked_add(len)?)))
                .and_then(|(len, end)| Some((len, text.get(at..end)?)));
            match piece {
                Some((len, piece)) => {
                    at += len;
                    Ok(Cow::Borrowed(piece))
                }
                None => Err(Malformed::Piece {
                    index,
                    what,
                    at,
                    len,
                }),
            }
        };
        let tool_name = piece("tool name", entry.tool_name_len)?;
        let call_id = piece("call id", entry.call_id_len)?;
        let outcome = match entry.outcome {
            None => None,
            Some(o) => Some(Outcome {
                status: o.status,
                failure: o.failure,
                executed: o.executed,
                result_fingerprint: match o.result_fingerprint_len {
                    Some(len) => Some(piece("result fingerprint", len)?),
                    None => None,
                },
            }),
        };
        observations.push(Observation {
            tool_name,
            call_id,
            effect: entry.effect,
            outcome,
        });
    }
    match text.len() - at {
        0 => Ok(observations),
        left => Err(Malformed::Leftover { left }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packs observations the way the host does (the inverse of [`unpack`]).
    fn pack(observations: &[Observation<'_>]) -> (String, Vec<PackedEntry>) {
        let mut text = String::new();
        let len = |s: &str| u32::try_from(s.len()).unwrap_or(u32::MAX);
        let entries = observations
            .iter()
            .map(|obs| {
                text.push_str(&obs.tool_name);
                text.push_str(&obs.call_id);
                let outcome = obs.outcome.as_ref().map(|o| {
                    if let Some(f) = &o.result_fingerprint {
                        text.push_str(f);
                    }
                    PackedOutcome {
                        status: o.status,
                        failure: o.failure,
                        executed: o.executed,
                        result_fingerprint_len: o.result_fingerprint.as_deref().map(len),
                    }
                });
                PackedEntry {
                    tool_name_len: len(&obs.tool_name),
                    call_id_len: len(&obs.call_id),
                    effect: obs.effect,
                    outcome,
                }
            })
            .collect();
        (text, entries)
    }

    fn sample() -> Vec<Observation<'static>> {
        vec![
            Observation::new("read_file", "call-1", Effect::Read)
                .with_outcome(Outcome::succeeded().with_fingerprint("ab12")),
            Observation::new("写", "", Effect::Write),
            Observation::new("", "c😀", Effect::Unknown)
                .with_outcome(Outcome::failed(FailureKind::Timeout)),
        ]
    }

    #[test]
    fn unpacks_what_was_packed() {
        let observations = sample();
        let (text, entries) = pack(&observations);
        assert_eq!(text, "read_filecall-1ab12写c😀");
        let unpacked = unpack(&text, entries);
        assert_eq!(unpacked, Ok(observations));
        // Every string is a piece of the text, not a copy.
        let borrowed = |s: &Cow<'_, str>| matches!(s, Cow::Borrowed(_));
        assert!(unpacked.iter().flatten().all(|o| {
            borrowed(&o.tool_name)
                && borrowed(&o.call_id)
                && o.outcome
                    .as_ref()
                    .and_then(|o| o.result_fingerprint.as_ref())
                    .is_none_or(borrowed)
        }));
        assert_eq!(unpack("", []), Ok(Vec::new()));
    }

    #[test]
    fn refuses_lengths_that_do_not_describe_the_text() {
        let (text, entries) = pack(&sample());
        // The first tool name claims more than the whole text.
        let mut long = entries.clone();
        long[0].tool_name_len = u32::MAX;
        assert!(matches!(
            unpack(&text, long),
            Err(Malformed::Piece {
                index: 0,
                what: "tool name",
                at: 0,
                ..
            })
        ));
        // The second tool name (`写`, 3 bytes) cut inside its character.
        let mut split = entries.clone();
        split[1].tool_name_len = 1;
        assert!(matches!(
            unpack(&text, split),
            Err(Malformed::Piece { index: 1, .. })
        ));
        // One byte of the last call id left over.
        let mut short = entries;
        short[2].call_id_len = 1;
        assert!(unpack(&text, short.clone()).is_err());
        short[2].call_id_len = 0;
        assert_eq!(unpack(&text, short), Err(Malformed::Leftover { left: 5 }));
    }
}
