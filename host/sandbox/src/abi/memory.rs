//! Reading the guest's memory for an answer: bounds- and alignment-checked
//! slices, and strings in the three encodings a component may use (UTF-8,
//! UTF-16, and Latin-1/UTF-16 "compact"), measured in place and copied only
//! when within their bound.

use super::shim::{LiftContext, StringEncoding};
use crate::error::{AbiFault, TrapKind};

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

/// Guest memory and its string encoding.
pub(crate) struct Memory<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) encoding: StringEncoding,
}

impl<'a> Memory<'a> {
    pub(crate) fn of(cx: &LiftContext<'a>) -> Self {
        Self {
            bytes: cx.memory(),
            encoding: cx.options().string_encoding,
        }
    }

    /// `len` bytes at `ptr`, which must be aligned to `align`.
    pub(crate) fn slice(
        &self,
        ptr: u32,
        len: u64,
        align: u32,
        at: &'static str,
    ) -> Result<&'a [u8], AbiFault> {
        let bad = || AbiFault::from(TrapKind::InvalidPointer { at });
        if !ptr.is_multiple_of(align) {
            return Err(bad());
        }
        let start = usize::try_from(ptr).map_err(|_| bad())?;
        let len = usize::try_from(len).map_err(|_| bad())?;
        let end = start.checked_add(len).ok_or_else(bad)?;
        self.bytes.get(start..end).ok_or_else(bad)
    }

    pub(crate) fn u8_at(area: &[u8], offset: usize) -> u8 {
        area.get(offset).copied().unwrap_or(0)
    }

    pub(crate) fn u32_at(area: &[u8], offset: usize) -> u32 {
        area.get(offset..offset + 4)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u32::from_le_bytes)
    }

    /// A string at `ptr`/`len` (in the encoding's units), at most
    /// `max_chars` characters; longer ones are measured, not copied.
    pub(crate) fn text(
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
        let text = std::str::from_utf8(bytes)
            .map_err(|_| AbiFault::from(TrapKind::InvalidEncoding { at }))?;
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
            c.map_err(|_| AbiFault::from(TrapKind::InvalidEncoding { at }))?;
            chars += 1;
        }
        if chars > max_chars {
            return Ok(GuestText::TooLong { chars });
        }
        Ok(GuestText::Text(decoded().filter_map(Result::ok).collect()))
    }

    /// An `option<string>` at `offset` in `area`: tag byte, then pointer and
    /// length at `offset + 4` and `offset + 8`.
    pub(crate) fn option_text(
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
            _ => Err(AbiFault::from(TrapKind::InvalidDiscriminant { at })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use verdict_policy::MAX_REASON_CHARS;

    fn memory(bytes: &[u8]) -> Memory<'_> {
        Memory {
            bytes,
            encoding: StringEncoding::Utf8,
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
            Err(AbiFault::from(TrapKind::InvalidEncoding { at: "k" }))
        );
        let latin1 = Memory {
            bytes: &[0, 0, 0x68, 0xe9],
            encoding: StringEncoding::CompactUtf16,
        };
        assert_eq!(latin1.text(2, 2, 10, "k"), Ok(GuestText::Text("hé".into())));
    }
}
