//! Lifting `verdict:verifier@0.1.x`'s answers from the guest's return
//! area: `check`'s verdict record and `progress-key`'s string, each read and
//! bounded in guest memory ([`crate::abi`]) before anything is copied.

use super::wit;
use crate::abi::{GuestText, Memory, answer_from_return_area, string_result};
use crate::error::{AbiFault, CheckError};
use std::time::Instant;
use verdict_policy::{
    MAX_FEEDBACK_CHARS, MAX_PROGRESS_KEY_CHARS, MAX_REASON_CHARS, Verdict, VerdictError,
};

/// The verdict as read from guest memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GuestVerdict {
    pub(crate) complete: bool,
    pub(crate) reason: Option<GuestText>,
    pub(crate) feedback: Option<GuestText>,
}

/// `check`'s result, read from the guest's return area, and when reading
/// it began (the guest's code had returned).
pub(crate) struct VerdictAnswer(pub(crate) GuestVerdict, pub(crate) Instant);

/// `progress-key`'s result, read from the guest's return area, and when
/// reading it began.
pub(crate) struct KeyAnswer(pub(crate) GuestText, pub(crate) Instant);

answer_from_return_area!(VerdictAnswer, (wit::Verdict,), decode_verdict);
answer_from_return_area!(KeyAnswer, (String,), decode_key);

/// Size and alignment of the verdict record's return area:
/// `complete` at 0, `reason` at 4, `feedback` at 16 (each `option<string>`
/// a tag byte, then pointer and length).
const VERDICT_AREA: (u64, u32) = (28, 4);
fn decode_verdict(memory: &Memory<'_>, ptr: u32) -> Result<GuestVerdict, AbiFault> {
    let (size, align) = VERDICT_AREA;
    let area = memory.slice(ptr, size, align, "verdict")?;
    Ok(GuestVerdict {
        // The canonical ABI reads any nonzero byte as `true`.
        complete: Memory::u8_at(area, 0) != 0,
        reason: memory.option_text(area, 4, MAX_REASON_CHARS, "verdict.reason")?,
        feedback: memory.option_text(area, 16, MAX_FEEDBACK_CHARS, "verdict.feedback")?,
    })
}

fn decode_key(memory: &Memory<'_>, ptr: u32) -> Result<GuestText, AbiFault> {
    string_result(memory, ptr, MAX_PROGRESS_KEY_CHARS, "progress key")
}

/// Validates a verdict read from guest memory: texts over their bounds
/// were measured there and not copied.
pub(crate) fn verdict(v: GuestVerdict) -> Result<Verdict, CheckError> {
    let reason = match v.reason {
        Some(GuestText::TooLong { chars }) => {
            return Err(VerdictError::ReasonTooLong { chars }.into());
        }
        Some(GuestText::Text(text)) => Some(text),
        None => None,
    };
    let feedback = match v.feedback {
        Some(GuestText::TooLong { chars }) => {
            return Err(VerdictError::FeedbackTooLong { chars }.into());
        }
        Some(GuestText::Text(text)) => Some(text),
        None => None,
    };
    Ok(Verdict::new(v.complete, reason, feedback)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::shim::StringEncoding;
    use crate::error::TrapKind;
    use wasmtime::component::ComponentType;

    fn memory(bytes: &[u8]) -> Memory<'_> {
        Memory {
            bytes,
            encoding: StringEncoding::Utf8,
        }
    }

    #[test]
    fn the_verdict_area_matches_wasmtime() {
        let verdict = <wit::Verdict as ComponentType>::ABI;
        assert_eq!((u64::from(verdict.size32), verdict.align32), VERDICT_AREA);
        // It returns through memory (more than one flat value).
        assert!(<(wit::Verdict,) as ComponentType>::flatten_count() > 1);
    }

    /// Memory with a verdict area at 0 and text at 64.
    fn verdict_memory(complete: u8, tag: u8, ptr: u32, len: u32, text: &[u8]) -> Vec<u8> {
        let mut m = vec![0u8; 256];
        m[0] = complete;
        m[4] = tag;
        m[8..12].copy_from_slice(&ptr.to_le_bytes());
        m[12..16].copy_from_slice(&len.to_le_bytes());
        m[64..64 + text.len()].copy_from_slice(text);
        m
    }

    #[test]
    fn decodes_a_valid_verdict() {
        let m = verdict_memory(1, 1, 64, 2, b"ok");
        let v = decode_verdict(&memory(&m), 0).unwrap();
        assert!(v.complete);
        assert_eq!(v.reason, Some(GuestText::Text("ok".into())));
        assert_eq!(v.feedback, None);
    }

    #[test]
    fn refuses_each_abi_violation_with_its_kind() {
        let cases: [(Vec<u8>, u32, TrapKind); 6] = [
            (
                verdict_memory(1, 1, 64, 0x8000_0000, b""),
                0,
                TrapKind::InvalidPointer {
                    at: "verdict.reason",
                },
            ),
            (
                verdict_memory(1, 1, 0xFFFF_FF00, 0x200, b""),
                0,
                TrapKind::InvalidPointer {
                    at: "verdict.reason",
                },
            ),
            (
                verdict_memory(1, 1, 64, 2, &[0xff, 0xfe]),
                0,
                TrapKind::InvalidEncoding {
                    at: "verdict.reason",
                },
            ),
            (
                verdict_memory(1, 7, 64, 2, b"ok"),
                0,
                TrapKind::InvalidDiscriminant {
                    at: "verdict.reason",
                },
            ),
            (
                verdict_memory(1, 0, 0, 0, b""),
                0xFFFF_FFF0,
                TrapKind::InvalidPointer { at: "verdict" },
            ),
            (
                verdict_memory(1, 0, 0, 0, b""),
                2,
                TrapKind::InvalidPointer { at: "verdict" },
            ),
        ];
        for (m, ptr, kind) in cases {
            assert_eq!(decode_verdict(&memory(&m), ptr), Err(AbiFault::from(kind)));
        }
    }
}
