//! Canonical JSON (RFC 8785, JCS) and SHA-256 fingerprints.
//!
//! Objects are written with their members sorted by the UTF-16 code units of
//! their names, numbers in the ECMAScript `Number.prototype.toString` form
//! (every number is an IEEE 754 double, as in RFC 8785 §3.2.2.3), strings
//! with only the escapes RFC 8785 §3.2.2.2 requires, and no whitespace.
//!
//! Written here rather than taken from a crate: the maintained crate
//! (`serde_json_canonicalizer`) re-parses every member name to sort it and
//! buffers every object, which costs several times a plain `serde_json`
//! encode; this writer makes one pass over a `serde_json::Value` and stops
//! at the [`MAX_FINGERPRINT_INPUT_BYTES`] bound. Doubles are formatted by `ryu-js`
//! (the formatter that crate uses too). The crate is kept as a test oracle
//! (`tests/canonical_props.rs`).

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// A fingerprint input (canonical bytes) is at most this many bytes.
pub const MAX_FINGERPRINT_INPUT_BYTES: usize = 64 * 1024;
/// Arrays and objects nest at most this deep; deeper values are refused so
/// that canonicalization can never exhaust the stack.
pub const MAX_DEPTH: usize = 128;

/// Why a value has no canonical form or fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CanonicalError {
    /// The canonical form is larger than [`MAX_FINGERPRINT_INPUT_BYTES`].
    #[error("canonical JSON exceeds {MAX_FINGERPRINT_INPUT_BYTES} bytes")]
    TooLarge,
    /// The value nests deeper than [`MAX_DEPTH`].
    #[error("JSON nests deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// A number is not a finite IEEE 754 double.
    #[error("JSON number is not a finite double")]
    NonFiniteNumber,
}

/// `bytes` as lowercase hex, two digits a byte (a table lookup per
/// nibble: `hex::encode` collects a char iterator).
fn lower_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = Vec::with_capacity(bytes.len() * 2);
    for &byte in bytes {
        out.push(DIGITS[usize::from(byte >> 4)]);
        out.push(DIGITS[usize::from(byte & 0x0f)]);
    }
    // Only ASCII digits were written.
    String::from_utf8(out).unwrap_or_default()
}

/// Lowercase hex SHA-256 of a value's canonical JSON.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Fingerprint(String);

impl Fingerprint {
    /// Fingerprints `value`, refusing inputs over the bound.
    pub fn of(value: &Value) -> Result<Self, CanonicalError> {
        // Writing into one buffer and hashing it once is faster than
        // streaming many small writes into the hasher.
        let bytes = canonical_json(value)?;
        Ok(Self(lower_hex(&Sha256::digest(&bytes))))
    }

    /// The fingerprint as an owned string.
    pub fn into_string(self) -> String {
        self.0
    }

    /// Accepts a fingerprint computed elsewhere: exactly 64 lowercase hex
    /// digits.
    pub fn parse(text: &str) -> Option<Self> {
        let valid = text.len() == 64
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        valid.then(|| Self(text.to_owned()))
    }

    /// Stands for arguments that were not retained or cannot be
    /// fingerprinted; never equal to a computed fingerprint.
    pub(crate) fn absent() -> Self {
        Self(String::new())
    }

    /// The 64 lowercase hex digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The canonical JSON bytes of `value`, refusing outputs over the bound.
pub fn canonical_json(value: &Value) -> Result<Vec<u8>, CanonicalError> {
    let mut sink = VecSink {
        // Small: most arguments and results are, and an allocation of 1 KiB
        // or more takes the allocator's slow path (glibc consolidates its
        // fast bins first), which costs more than growing this one.
        bytes: Vec::with_capacity(256),
        limit: MAX_FINGERPRINT_INPUT_BYTES,
    };
    write_value(value, &mut sink, 0)?;
    Ok(sink.bytes)
}

/// Where canonical bytes go; every write is bounded.
trait Sink {
    fn put(&mut self, bytes: &[u8]) -> Result<(), CanonicalError>;
}

struct VecSink {
    bytes: Vec<u8>,
    limit: usize,
}

impl Sink for VecSink {
    fn put(&mut self, bytes: &[u8]) -> Result<(), CanonicalError> {
        if self.bytes.len().saturating_add(bytes.len()) > self.limit {
            return Err(CanonicalError::TooLarge);
        }
        self.bytes.extend_from_slice(bytes);
        Ok(())
    }
}

fn write_value(value: &Value, sink: &mut impl Sink, depth: usize) -> Result<(), CanonicalError> {
    match value {
        Value::Null => sink.put(b"null"),
        Value::Bool(true) => sink.put(b"true"),
        Value::Bool(false) => sink.put(b"false"),
        Value::Number(number) => write_number(number, sink),
        Value::String(text) => write_string(text, sink),
        Value::Array(items) => {
            if depth >= MAX_DEPTH {
                return Err(CanonicalError::TooDeep);
            }
            sink.put(b"[")?;
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    sink.put(b",")?;
                }
                write_value(item, sink, depth + 1)?;
            }
            sink.put(b"]")
        }
        Value::Object(map) => {
            if depth >= MAX_DEPTH {
                return Err(CanonicalError::TooDeep);
            }
            write_object(map, sink, depth)
        }
    }
}

fn write_object(
    map: &Map<String, Value>,
    sink: &mut impl Sink,
    depth: usize,
) -> Result<(), CanonicalError> {
    // Every member costs at least `"":` plus a value: refuse huge maps before
    // sorting them.
    if map.len().saturating_mul(4) > MAX_FINGERPRINT_INPUT_BYTES {
        return Err(CanonicalError::TooLarge);
    }
    sink.put(b"{")?;
    if in_utf16_order(map) {
        write_members(map.iter(), sink, depth)?;
    } else {
        let mut members: Vec<(&String, &Value)> = map.iter().collect();
        members.sort_by(|a, b| utf16_cmp(a.0, b.0));
        write_members(members.into_iter(), sink, depth)?;
    }
    sink.put(b"}")
}

/// True when the map already iterates in UTF-16 order. serde_json's default
/// map iterates in byte order, which is UTF-16 order as long as no name has a
/// character at or above U+E000 (UTF-8 lead bytes 0xEE..=0xF4); otherwise
/// (or with `preserve_order`) the caller sorts.
fn in_utf16_order(map: &Map<String, Value>) -> bool {
    let mut previous: Option<&[u8]> = None;
    for name in map.keys() {
        let bytes = name.as_bytes();
        if bytes.iter().any(|&b| b >= 0xEE) || previous.is_some_and(|p| p > bytes) {
            return false;
        }
        previous = Some(bytes);
    }
    true
}

fn write_members<'a>(
    members: impl Iterator<Item = (&'a String, &'a Value)>,
    sink: &mut impl Sink,
    depth: usize,
) -> Result<(), CanonicalError> {
    for (index, (name, item)) in members.enumerate() {
        if index > 0 {
            sink.put(b",")?;
        }
        write_string(name, sink)?;
        sink.put(b":")?;
        write_value(item, sink, depth + 1)?;
    }
    Ok(())
}

/// Orders strings by their UTF-16 code units (RFC 8785 §3.2.3).
pub(crate) fn utf16_cmp(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.cmp(b);
    }
    let mut left = a.chars();
    let mut right = b.chars();
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x == y => {}
            (Some(x), Some(y)) => return first_unit(x).cmp(&first_unit(y)).then(x.cmp(&y)),
        }
    }
}

/// The first UTF-16 code unit of `c` (its high surrogate when it needs two).
fn first_unit(c: char) -> u32 {
    let code = u32::from(c);
    if code >= 0x1_0000 {
        0xD800 + ((code - 0x1_0000) >> 10)
    } else {
        code
    }
}

/// For each byte: 0 = copy as is, b'u' = `\u00XX`, otherwise the character
/// after the backslash (RFC 8785 §3.2.2.2).
const ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0A] = b'n';
    table[0x0C] = b'f';
    table[0x0D] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

fn write_string(text: &str, sink: &mut impl Sink) -> Result<(), CanonicalError> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    sink.put(b"\"")?;
    let bytes = text.as_bytes();
    let mut start = 0;
    for (index, &byte) in bytes.iter().enumerate() {
        let escape = ESCAPE[usize::from(byte)];
        if escape == 0 {
            continue;
        }
        sink.put(&bytes[start..index])?;
        if escape == b'u' {
            let unicode = [
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xF)],
            ];
            sink.put(&unicode)?;
        } else {
            sink.put(&[b'\\', escape])?;
        }
        start = index + 1;
    }
    sink.put(&bytes[start..])?;
    sink.put(b"\"")
}

fn write_number(number: &serde_json::Number, sink: &mut impl Sink) -> Result<(), CanonicalError> {
    // Integers that a double holds exactly print as themselves.
    const EXACT: u64 = 1 << 53;
    if let Some(u) = number.as_u64()
        && u <= EXACT
    {
        return sink.put(itoa_u64(u, &mut [0u8; 20]));
    }
    if let Some(i) = number.as_i64()
        && i.unsigned_abs() <= EXACT
    {
        sink.put(b"-")?;
        return sink.put(itoa_u64(i.unsigned_abs(), &mut [0u8; 20]));
    }
    let double = number.as_f64().ok_or(CanonicalError::NonFiniteNumber)?;
    if !double.is_finite() {
        return Err(CanonicalError::NonFiniteNumber);
    }
    if double == 0.0 {
        return sink.put(b"0");
    }
    sink.put(ryu_js::Buffer::new().format_finite(double).as_bytes())
}

fn itoa_u64(mut value: u64, buffer: &mut [u8; 20]) -> &[u8] {
    let mut start = buffer.len();
    loop {
        start -= 1;
        // `value % 10` is below 10, so the cast cannot truncate.
        buffer[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            return &buffer[start..];
        }
    }
}

/// Writes `value` as ECMAScript's `Number.prototype.toString` would
/// (shortest round-trip digits, ties to even, `1e+21` style exponents):
/// the number form the RFC 8785 tests below check `ryu-js` against.
#[cfg(test)]
fn write_es_number(value: f64, out: &mut String) -> Result<(), CanonicalError> {
    if !value.is_finite() {
        return Err(CanonicalError::NonFiniteNumber);
    }
    if value == 0.0 {
        // Both zeros print as "0".
        out.push('0');
        return Ok(());
    }
    out.push_str(ryu_js::Buffer::new().format_finite(value));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn es(bits: u64) -> String {
        let mut out = String::new();
        write_es_number(f64::from_bits(bits), &mut out)
            .map(|()| out)
            .unwrap_or_default()
    }

    /// RFC 8785 Appendix B.
    #[test]
    fn rfc8785_appendix_b_numbers() {
        let cases: &[(u64, &str)] = &[
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ];
        for &(bits, expected) in cases {
            assert_eq!(es(bits), expected, "bits {bits:#018x}");
        }
    }

    #[test]
    fn rfc8785_non_finite_numbers_are_refused() {
        for bits in [0x7fffffffffffffff_u64, 0x7ff0000000000000] {
            let mut out = String::new();
            assert_eq!(
                write_es_number(f64::from_bits(bits), &mut out),
                Err(CanonicalError::NonFiniteNumber)
            );
        }
    }

    /// RFC 8785 §3.2.2 (the example in §3.2.4's input, with its output).
    #[test]
    fn rfc8785_section_3_2_2_example() {
        let input = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        let value: Value = serde_json::from_str(input).unwrap_or_default();
        let expected = "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],\"string\":\"€$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}";
        assert_eq!(
            canonical_json(&value).ok().as_deref(),
            Some(expected.as_bytes())
        );
    }

    /// RFC 8785 §3.2.3 sorting example.
    #[test]
    fn rfc8785_section_3_2_3_sorting() {
        let value = json!({
            "\u{20ac}": "Euro Sign",
            "\r": "Carriage Return",
            "\u{fb33}": "Hebrew Letter Dalet With Dagesh",
            "1": "One",
            "\u{1f600}": "Emoji: Grinning Face",
            "\u{0080}": "Control",
            "\u{00f6}": "Latin Small Letter O With Diaeresis"
        });
        let expected = "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}";
        let got = canonical_json(&value).unwrap_or_default();
        assert_eq!(String::from_utf8_lossy(&got), expected);
    }

    #[test]
    fn large_integers_print_as_their_double() {
        let value = json!([9007199254740993_u64, -9007199254740993_i64, u64::MAX]);
        let got = canonical_json(&value).unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&got),
            "[9007199254740992,-9007199254740992,18446744073709552000]"
        );
    }

    #[test]
    fn fingerprint_is_sha256_of_canonical_bytes() {
        let value = json!({"b": 1, "a": [true, null]});
        let bytes = canonical_json(&value).unwrap_or_default();
        assert_eq!(bytes, br#"{"a":[true,null],"b":1}"#);
        let expected = hex::encode(Sha256::digest(&bytes));
        assert_eq!(Fingerprint::of(&value).map(|f| f.0), Ok(expected));
    }

    #[test]
    fn inputs_over_64_kib_are_refused() {
        // The quotes make the canonical form 2 bytes longer than the text.
        let fits = Value::String("x".repeat(MAX_FINGERPRINT_INPUT_BYTES - 2));
        let over = Value::String("x".repeat(MAX_FINGERPRINT_INPUT_BYTES - 1));
        assert!(Fingerprint::of(&fits).is_ok());
        assert_eq!(Fingerprint::of(&over), Err(CanonicalError::TooLarge));
        assert_eq!(canonical_json(&over), Err(CanonicalError::TooLarge));
    }

    #[test]
    fn nesting_beyond_the_depth_bound_is_refused() {
        let mut value = json!(0);
        for _ in 0..MAX_DEPTH {
            value = json!([value]);
        }
        assert!(Fingerprint::of(&value).is_ok());
        let deeper = json!({ "a": value });
        assert_eq!(Fingerprint::of(&deeper), Err(CanonicalError::TooDeep));
    }
}
