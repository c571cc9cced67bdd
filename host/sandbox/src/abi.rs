//! The canonical ABI at the two ends of a verifier call, checked by the host.
//!
//! wasmtime reports a guest's canonical-ABI violations (a string pointer out
//! of bounds, an invalid option tag, bad UTF-8, an allocator returning a
//! pointer outside memory) as untyped errors, and copies a returned string
//! into the host before any bound can be checked. So both ends of the call
//! are handled here:
//! - the packet is lowered from the host's own types ([`crate::lower`]),
//!   wrapped in [`PacketArg`] (or [`PackedArg`] for the packed entry
//!   points) so the call records when lowering finished: a
//!   failure before that point is the guest allocator's
//!   ([`TrapKind::BadAllocation`]);
//! - the answer (the verdict record, or the progress-key string) is read from
//!   the guest's return area here: every pointer, length, tag and encoding is
//!   validated in guest memory, and a string over its bound is measured there
//!   and never copied. A violation is a typed [`AbiFault`].
//!
//! Both wrappers implement wasmtime's component traits with its lifting and
//! lowering contexts, which wasmtime exports for generated code but outside
//! its semver promise: the workspace pins wasmtime 48.0.x, and the layout
//! assumptions are asserted against wasmtime's own in the tests below.

use crate::bindings::packed::types as packed;
use crate::bindings::v0_1::wit;
use crate::error::{CheckError, TrapKind};
use crate::lower::{PackedView, PacketView};
use crate::state::{CallState, Phase};
use std::any::Any;
use std::mem::MaybeUninit;
use std::time::Instant;
use verdict_policy::{
    CheckPacket, MAX_FEEDBACK_CHARS, MAX_PROGRESS_KEY_CHARS, MAX_REASON_CHARS, Verdict,
    VerdictError,
};
use wasmtime::ValRaw;
use wasmtime::component::__internal::wasmtime_environ::component::StringEncoding;
use wasmtime::component::__internal::{
    CanonicalAbiInfo, InstanceType, InterfaceType, LiftContext, LowerContext,
};
use wasmtime::component::{ComponentNamedList, ComponentType, Lift, Lower};

/// A guest broke the canonical ABI in what it handed to the host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the guest broke the canonical ABI: {kind}")]
pub(crate) struct AbiFault {
    /// What was wrong, and where.
    pub(crate) kind: TrapKind,
}

fn fault(kind: TrapKind) -> AbiFault {
    AbiFault { kind }
}

/// Declares a packet argument: the packet lowered through a view of
/// [`crate::lower`], recording in the call state when lowering finished.
macro_rules! packet_arg {
    ($(#[$doc:meta])* $arg:ident, $view:ident, $wit:ty) => {
        $(#[$doc])*
        pub(crate) struct $arg<'a>(pub(crate) &'a CheckPacket);

        // SAFETY: every item delegates to the WIT record's own (generated)
        // implementation, so the type information and ABI are exactly its.
        #[allow(unsafe_code)]
        unsafe impl ComponentType for $arg<'_> {
            type Lower = <$wit as ComponentType>::Lower;
            const ABI: CanonicalAbiInfo = <$wit as ComponentType>::ABI;

            fn typecheck(ty: &InterfaceType, types: &InstanceType<'_>) -> wasmtime::Result<()> {
                <$wit as ComponentType>::typecheck(ty, types)
            }
        }

        // SAFETY: delegates to the view, which writes the record's layout;
        // marking the phase touches only the host's own store data.
        #[allow(unsafe_code)]
        unsafe impl Lower for $arg<'_> {
            fn linear_lower_to_flat<T>(
                &self,
                cx: &mut LowerContext<'_, T>,
                ty: InterfaceType,
                dst: &mut MaybeUninit<Self::Lower>,
            ) -> wasmtime::Result<()> {
                $view(self.0).linear_lower_to_flat(cx, ty, dst)?;
                lowered(cx);
                Ok(())
            }

            fn linear_lower_to_memory<T>(
                &self,
                cx: &mut LowerContext<'_, T>,
                ty: InterfaceType,
                offset: usize,
            ) -> wasmtime::Result<()> {
                $view(self.0).linear_lower_to_memory(cx, ty, offset)?;
                lowered(cx);
                Ok(())
            }
        }
    };
}

packet_arg!(
    /// The packet argument of the standard exports, lowered as
    /// `verdict:verifier/types.packet` ([`PacketView`]).
    PacketArg,
    PacketView,
    wit::Packet
);

packet_arg!(
    /// The packet argument of the packed exports, lowered as
    /// `verdict:packed`'s packet ([`PackedView`]).
    PackedArg,
    PackedView,
    packed::Packet
);

/// Lowering is done: from here on the guest's own code runs.
fn lowered<T: 'static>(cx: &mut LowerContext<'_, T>) {
    let data: &mut dyn Any = cx.store.data_mut();
    if let Some(state) = data.downcast_mut::<CallState>() {
        state.phase = Phase::Running;
        state.marks.lowered = Some(Instant::now());
    }
}

/// A string answer, copied only when within its bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GuestText {
    /// The text, at most its bound in characters.
    Text(String),
    /// Over the bound: its length in characters, measured in guest memory.
    TooLong {
        /// Characters found.
        chars: usize,
    },
}

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

/// An answer that knows when the host began reading it: the end of the
/// guest's own run, for the call's stage times.
pub(crate) trait Answer {
    /// When lifting the answer began.
    fn lift_started(&self) -> Instant;
}

impl Answer for VerdictAnswer {
    fn lift_started(&self) -> Instant {
        self.1
    }
}

impl Answer for KeyAnswer {
    fn lift_started(&self) -> Instant {
        self.1
    }
}

/// Implements the component traits for an answer read from a return area.
///
/// Both answers flatten to more than one core value, so the canonical ABI
/// returns them through memory: the core function returns a single `i32`,
/// the address of the return area. The answer types declare exactly that
/// core result (one `i32`, [`CanonicalAbiInfo::SCALAR4`]), so wasmtime hands
/// the address to `linear_lift_from_flat` and this module reads the area
/// itself. The interface type is still checked as the real result type.
macro_rules! answer_from_return_area {
    ($answer:ty, $real:ty, $decode:path) => {
        // SAFETY: `Lower` is one `ValRaw`, the core function's single `i32`
        // result (the return-area address), and the ABI says the same; the
        // typecheck is the real result type's.
        #[allow(unsafe_code)]
        unsafe impl ComponentType for $answer {
            type Lower = ValRaw;
            const ABI: CanonicalAbiInfo = CanonicalAbiInfo::SCALAR4;

            fn typecheck(ty: &InterfaceType, types: &InstanceType<'_>) -> wasmtime::Result<()> {
                <$real as ComponentType>::typecheck(ty, types)
            }
        }

        // SAFETY: the typecheck is that of the real results tuple.
        #[allow(unsafe_code)]
        unsafe impl ComponentNamedList for $answer {}

        // SAFETY: reads guest memory only through bounds-checked slices.
        #[allow(unsafe_code)]
        unsafe impl Lift for $answer {
            fn linear_lift_from_flat(
                cx: &mut LiftContext<'_>,
                _ty: InterfaceType,
                src: &ValRaw,
            ) -> wasmtime::Result<Self> {
                let started = Instant::now();
                let memory = Memory::of(cx);
                $decode(&memory, src.get_u32())
                    .map(|answer| Self(answer, started))
                    .map_err(wasmtime::Error::new)
            }

            fn linear_lift_from_memory(
                _cx: &mut LiftContext<'_>,
                _ty: InterfaceType,
                _bytes: &[u8],
            ) -> wasmtime::Result<Self> {
                // An answer is only ever a whole result, never nested.
                Err(wasmtime::Error::new(fault(TrapKind::InvalidPointer {
                    at: "nested answer",
                })))
            }
        }
    };
}

answer_from_return_area!(VerdictAnswer, (wit::Verdict,), decode_verdict);
answer_from_return_area!(KeyAnswer, (String,), decode_key);

/// Guest memory and its string encoding.
struct Memory<'a> {
    bytes: &'a [u8],
    encoding: StringEncoding,
}

impl<'a> Memory<'a> {
    fn of(cx: &LiftContext<'a>) -> Self {
        Self {
            bytes: cx.memory(),
            encoding: cx.options().string_encoding,
        }
    }

    /// `len` bytes at `ptr`, which must be aligned to `align`.
    fn slice(
        &self,
        ptr: u32,
        len: u64,
        align: u32,
        at: &'static str,
    ) -> Result<&'a [u8], AbiFault> {
        let bad = || fault(TrapKind::InvalidPointer { at });
        if !ptr.is_multiple_of(align) {
            return Err(bad());
        }
        let start = usize::try_from(ptr).map_err(|_| bad())?;
        let len = usize::try_from(len).map_err(|_| bad())?;
        let end = start.checked_add(len).ok_or_else(bad)?;
        self.bytes.get(start..end).ok_or_else(bad)
    }

    fn u8_at(area: &[u8], offset: usize) -> u8 {
        area.get(offset).copied().unwrap_or(0)
    }

    fn u32_at(area: &[u8], offset: usize) -> u32 {
        area.get(offset..offset + 4)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u32::from_le_bytes)
    }

    /// A string at `ptr`/`len` (in the encoding's units), at most
    /// `max_chars` characters; longer ones are measured, not copied.
    fn text(
        &self,
        ptr: u32,
        len: u32,
        max_chars: usize,
        at: &'static str,
    ) -> Result<GuestText, AbiFault> {
        const UTF16_TAG: u32 = 1 << 31;
        match self.encoding {
            StringEncoding::Utf8 => self.utf8(ptr, len, max_chars, at),
            StringEncoding::Utf16 => self.utf16(ptr, len, max_chars, at),
            StringEncoding::CompactUtf16 if len & UTF16_TAG != 0 => {
                self.utf16(ptr, len ^ UTF16_TAG, max_chars, at)
            }
            StringEncoding::CompactUtf16 => {
                // Latin-1: one character per byte.
                let bytes = self.slice(ptr, u64::from(len), 2, at)?;
                if bytes.len() > max_chars {
                    return Ok(GuestText::TooLong { chars: bytes.len() });
                }
                Ok(GuestText::Text(
                    bytes.iter().map(|&b| char::from(b)).collect(),
                ))
            }
        }
    }

    fn utf8(
        &self,
        ptr: u32,
        len: u32,
        max_chars: usize,
        at: &'static str,
    ) -> Result<GuestText, AbiFault> {
        let bytes = self.slice(ptr, u64::from(len), 1, at)?;
        let text =
            std::str::from_utf8(bytes).map_err(|_| fault(TrapKind::InvalidEncoding { at }))?;
        // A text of at most `max_chars` bytes has at most as many
        // characters; only longer ones are counted (in place).
        if text.len() > max_chars {
            let chars = text.chars().count();
            if chars > max_chars {
                return Ok(GuestText::TooLong { chars });
            }
        }
        Ok(GuestText::Text(text.to_owned()))
    }

    fn utf16(
        &self,
        ptr: u32,
        units: u32,
        max_chars: usize,
        at: &'static str,
    ) -> Result<GuestText, AbiFault> {
        let bytes = self.slice(ptr, u64::from(units) * 2, 2, at)?;
        let decoded = || {
            char::decode_utf16(
                bytes
                    .chunks_exact(2)
                    .map(|pair| u16::from_le_bytes([pair[0], pair[1]])),
            )
        };
        let mut chars = 0usize;
        for c in decoded() {
            c.map_err(|_| fault(TrapKind::InvalidEncoding { at }))?;
            chars += 1;
        }
        if chars > max_chars {
            return Ok(GuestText::TooLong { chars });
        }
        Ok(GuestText::Text(decoded().filter_map(Result::ok).collect()))
    }

    /// An `option<string>` at `offset` in `area`: tag byte, then pointer and
    /// length at `offset + 4` and `offset + 8`.
    fn option_text(
        &self,
        area: &[u8],
        offset: usize,
        max_chars: usize,
        at: &'static str,
    ) -> Result<Option<GuestText>, AbiFault> {
        match Self::u8_at(area, offset) {
            0 => Ok(None),
            1 => self
                .text(
                    Self::u32_at(area, offset + 4),
                    Self::u32_at(area, offset + 8),
                    max_chars,
                    at,
                )
                .map(Some),
            _ => Err(fault(TrapKind::InvalidDiscriminant { at })),
        }
    }
}

/// Size and alignment of the verdict record's return area:
/// `complete` at 0, `reason` at 4, `feedback` at 16 (each `option<string>`
/// a tag byte, then pointer and length).
const VERDICT_AREA: (u64, u32) = (28, 4);
/// Size and alignment of a string's return area: pointer, then length.
const STRING_AREA: (u64, u32) = (8, 4);

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
    let (size, align) = STRING_AREA;
    let area = memory.slice(ptr, size, align, "progress key")?;
    memory.text(
        Memory::u32_at(area, 0),
        Memory::u32_at(area, 4),
        MAX_PROGRESS_KEY_CHARS,
        "progress key",
    )
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

    fn memory(bytes: &[u8]) -> Memory<'_> {
        Memory {
            bytes,
            encoding: StringEncoding::Utf8,
        }
    }

    #[test]
    fn layouts_match_wasmtime() {
        let verdict = <wit::Verdict as ComponentType>::ABI;
        assert_eq!((u64::from(verdict.size32), verdict.align32), VERDICT_AREA);
        let string = <String as ComponentType>::ABI;
        assert_eq!((u64::from(string.size32), string.align32), STRING_AREA);
        // Both answers return through memory (more than one flat value).
        assert!(<(wit::Verdict,) as ComponentType>::flatten_count() > 1);
        assert!(<(String,) as ComponentType>::flatten_count() > 1);
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
            assert_eq!(decode_verdict(&memory(&m), ptr), Err(fault(kind)));
        }
    }

    #[test]
    fn over_long_text_is_measured_not_copied() {
        let long = "é".repeat(MAX_REASON_CHARS + 1);
        let mut m = vec![0u8; 4096];
        m[64..64 + long.len()].copy_from_slice(long.as_bytes());
        let mem = memory(&m);
        assert_eq!(
            mem.text(64, long.len() as u32, MAX_REASON_CHARS, "r"),
            Ok(GuestText::TooLong {
                chars: MAX_REASON_CHARS + 1
            })
        );
        // Exactly at the bound, multi-byte: accepted.
        let at_bound = "é".repeat(MAX_REASON_CHARS);
        assert_eq!(
            mem.text(64, at_bound.len() as u32, MAX_REASON_CHARS, "r"),
            Ok(GuestText::Text(at_bound))
        );
    }

    #[test]
    fn decodes_utf16_and_latin1() {
        let mut m = vec![0u8; 64];
        for (i, unit) in "hé".encode_utf16().enumerate() {
            m[8 + 2 * i..10 + 2 * i].copy_from_slice(&unit.to_le_bytes());
        }
        let utf16 = Memory {
            bytes: &m,
            encoding: StringEncoding::Utf16,
        };
        assert_eq!(utf16.text(8, 2, 10, "k"), Ok(GuestText::Text("hé".into())));
        assert!(utf16.text(9, 2, 10, "k").is_err());
        m[8..10].copy_from_slice(&0xD800u16.to_le_bytes());
        let utf16 = Memory {
            bytes: &m,
            encoding: StringEncoding::Utf16,
        };
        assert_eq!(
            utf16.text(8, 2, 10, "k"),
            Err(fault(TrapKind::InvalidEncoding { at: "k" }))
        );
        let latin1 = Memory {
            bytes: &[0, 0, 0x68, 0xe9],
            encoding: StringEncoding::CompactUtf16,
        };
        assert_eq!(latin1.text(2, 2, 10, "k"), Ok(GuestText::Text("hé".into())));
    }
}
