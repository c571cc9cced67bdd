//! Lowering a [`CheckPacket`] as `verdict:packed@0.1.x`'s packet: the
//! observations' strings concatenated into one string, and the
//! observations as records of lengths and metadata
//! (`wit/verdict-packed@0.1.0/packed.wit`).
//!
//! A full packet lowered as the standard record asks the guest's allocator
//! once per string, about 300 calls into the guest; this one asks six or
//! seven times (the execution id, the output, the packed text, the entry
//! list, and the task state's two strings), and writes the entries in one
//! pass over guest memory.

use crate::abi::lower::{next, payload, record_fields, slice, view_of};
use crate::abi::shim::{InterfaceType, LowerContext, StringEncoding};
use crate::bindings::packed_v0_1::types as packed;
use crate::bindings::v0_1::convert;
use crate::error::AbiFault;
use crate::error::TrapKind;
use std::mem::MaybeUninit;
use verdict_policy::{CheckPacket, Observation};
use wasmtime::component::{ComponentType, Lower};

/// The packet, lowered as `verdict:packed/completion.packet` (or the
/// progress interface's identical record).
pub(crate) struct PackedView<'a>(pub(crate) &'a CheckPacket);

view_of!(PackedView, packed::Packet);

crate::abi::packet_arg!(
    /// The packet argument of the packed exports, lowered as
    /// `verdict:packed`'s packet ([`PackedView`]).
    PackedArg,
    PackedView,
    packed::Packet
);

/// The packed text: every observation's tool name, call id and result
/// fingerprint (when it has one), in that order.
pub(crate) fn text(observations: &[Observation]) -> String {
    fn pieces(obs: &Observation) -> impl Iterator<Item = &str> {
        [
            Some(obs.tool_name.as_str()),
            Some(obs.call_id.as_str()),
            obs.outcome
                .as_ref()
                .and_then(|o| o.result_fingerprint.as_deref()),
        ]
        .into_iter()
        .flatten()
    }
    let len = observations.iter().flat_map(pieces).map(str::len).sum();
    let mut text = String::with_capacity(len);
    observations
        .iter()
        .flat_map(pieces)
        .for_each(|piece| text.push_str(piece));
    text
}

/// A length in the packed format (a packet's strings are far below 4 GiB).
fn len32(text: &str) -> wasmtime::Result<u32> {
    Ok(u32::try_from(text.len())?)
}

// SAFETY: writes the layout of `packed::Packet` (see `view_of!`): the
// fields in WIT order at the offsets the record's ABI gives, each with the
// lowering of its own WIT type; the observations record as below.
#[allow(unsafe_code)]
unsafe impl Lower for PackedView<'_> {
    fn linear_lower_to_flat<T>(
        &self,
        _cx: &mut LowerContext<'_, T>,
        _ty: InterfaceType,
        _dst: &mut MaybeUninit<Self::Lower>,
    ) -> wasmtime::Result<()> {
        // The packed packet flattens to more than the canonical ABI's 16
        // parameters (asserted below), so it is always passed in memory.
        Err(wasmtime::format_err!(
            "the packed packet is passed in memory, never flat"
        ))
    }

    fn linear_lower_to_memory<T>(
        &self,
        cx: &mut LowerContext<'_, T>,
        ty: InterfaceType,
        mut offset: usize,
    ) -> wasmtime::Result<()> {
        // The lengths are UTF-8 byte counts: a guest that asked for its
        // strings in another encoding cannot have exported this for real.
        if cx.options().string_encoding != StringEncoding::Utf8 {
            return Err(AbiFault {
                kind: TrapKind::InvalidEncoding {
                    at: "packed packet (its strings are UTF-8 only)",
                },
            }
            .into());
        }
        let f: [InterfaceType; 8] = record_fields(cx, ty);
        let p = self.0;
        let o = &mut offset;
        p.execution_id
            .as_str()
            .linear_lower_to_memory(cx, f[0], next::<str>(o))?;
        p.iteration
            .linear_lower_to_memory(cx, f[1], next::<u32>(o))?;
        p.output_text
            .as_str()
            .linear_lower_to_memory(cx, f[2], next::<str>(o))?;
        p.output_truncated
            .linear_lower_to_memory(cx, f[3], next::<bool>(o))?;
        observations(cx, f[4], next::<packed::Observations>(o), &p.observations)?;
        p.observed_tool_calls
            .linear_lower_to_memory(cx, f[5], next::<u32>(o))?;
        p.observations_truncated
            .linear_lower_to_memory(cx, f[6], next::<bool>(o))?;
        // The task state's record is the standard one, field for field, and
        // its lowering follows the field types `f[7]` gives.
        convert::task_state(p.task_state.as_ref()).linear_lower_to_memory(
            cx,
            f[7],
            next::<Option<packed::TaskState>>(o),
        )
    }
}

/// Where the fields of a packed `observation` record lie, from its start.
struct EntryLayout {
    tool_name_len: usize,
    call_id_len: usize,
    effect: usize,
    outcome_tag: usize,
    status: usize,
    failure_tag: usize,
    failure: usize,
    executed: usize,
    fingerprint_tag: usize,
    fingerprint_len: usize,
}

impl EntryLayout {
    fn new() -> Self {
        let o = &mut 0usize;
        let tool_name_len = next::<u32>(o);
        let call_id_len = next::<u32>(o);
        let effect = next::<packed::Effect>(o);
        let outcome_tag = next::<Option<packed::Outcome>>(o);
        let mut p = payload::<packed::Outcome>(outcome_tag);
        let status = next::<packed::OutcomeStatus>(&mut p);
        let failure_tag = next::<Option<packed::FailureKind>>(&mut p);
        let executed = next::<bool>(&mut p);
        let fingerprint_tag = next::<Option<u32>>(&mut p);
        Self {
            tool_name_len,
            call_id_len,
            effect,
            outcome_tag,
            status,
            failure_tag,
            failure: payload::<packed::FailureKind>(failure_tag),
            executed,
            fingerprint_tag,
            fingerprint_len: payload::<u32>(fingerprint_tag),
        }
    }
}

/// Lowers the `observations` record at `offset`: the packed text as one
/// string, then the entries into one buffer from the guest's allocator,
/// each record built on the host and copied in.
fn observations<T>(
    cx: &mut LowerContext<'_, T>,
    ty: InterfaceType,
    mut offset: usize,
    observations: &[Observation],
) -> wasmtime::Result<()> {
    let f: [InterfaceType; 2] = record_fields(cx, ty);
    let o = &mut offset;
    text(observations)
        .as_str()
        .linear_lower_to_memory(cx, f[0], next::<str>(o))?;
    let list_at = next::<Vec<packed::Observation>>(o);

    let abi = <packed::Observation as ComponentType>::ABI;
    let size = abi.size32 as usize;
    let bytes = observations
        .len()
        .checked_mul(size)
        .ok_or_else(|| wasmtime::format_err!("size overflow copying a list"))?;
    let base = cx.realloc(0, 0, abi.align32, bytes)?;
    let layout = EntryLayout::new();
    let memory = cx.as_slice_mut();
    let mut record = vec![0u8; size];
    for (i, obs) in observations.iter().enumerate() {
        record.fill(0);
        let mut put = |at: usize, value: u32| {
            slice(&mut record, at, 4).map(|s| s.copy_from_slice(&value.to_le_bytes()))
        };
        put(layout.tool_name_len, len32(&obs.tool_name)?)?;
        put(layout.call_id_len, len32(&obs.call_id)?)?;
        if let Some(outcome) = &obs.outcome {
            if let Some(fingerprint) = &outcome.result_fingerprint {
                put(layout.fingerprint_len, len32(fingerprint)?)?;
                record[layout.fingerprint_tag] = 1;
            }
            record[layout.outcome_tag] = 1;
            record[layout.status] = convert::status(outcome.status) as u8;
            if let Some(kind) = outcome.failure {
                record[layout.failure_tag] = 1;
                record[layout.failure] = convert::failure(kind) as u8;
            }
            record[layout.executed] = u8::from(outcome.executed);
        }
        record[layout.effect] = convert::effect(obs.effect) as u8;
        slice(memory, base + i * size, size)?.copy_from_slice(&record);
    }
    let ptr = u32::try_from(base)?;
    let len = u32::try_from(observations.len())?;
    *cx.get::<4>(list_at) = ptr.to_le_bytes();
    *cx.get::<4>(list_at + 4) = len.to_le_bytes();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packed observation layout, as the canonical ABI lays it out by
    /// hand: two `u32` lengths, the effect byte, then the optional outcome
    /// (tag, then its record at 4-byte alignment: status, failure tag and
    /// kind, executed, fingerprint length tag, then the length).
    #[test]
    fn the_entry_layout_is_the_canonical_one() {
        let l = EntryLayout::new();
        assert_eq!(
            [
                l.tool_name_len,
                l.call_id_len,
                l.effect,
                l.outcome_tag,
                l.status,
                l.failure_tag,
                l.failure,
                l.executed,
                l.fingerprint_tag,
                l.fingerprint_len,
            ],
            [0, 4, 8, 12, 16, 17, 18, 19, 20, 24]
        );
        assert_eq!(<packed::Observation as ComponentType>::ABI.size32, 28);
    }

    /// The packed enums' case indices are the standard ones' (the view
    /// writes the standard discriminants into packed records).
    #[test]
    fn packed_enums_have_the_standard_case_order() {
        use crate::bindings::v0_1::wit;
        assert_eq!(
            [
                packed::Effect::Read,
                packed::Effect::Write,
                packed::Effect::Unknown
            ]
            .map(|e| e as u8),
            [wit::Effect::Read, wit::Effect::Write, wit::Effect::Unknown].map(|e| e as u8),
        );
        assert_eq!(
            [
                packed::OutcomeStatus::Succeeded,
                packed::OutcomeStatus::Failed,
                packed::OutcomeStatus::NotStarted,
                packed::OutcomeStatus::Unknown,
            ]
            .map(|s| s as u8),
            [
                wit::OutcomeStatus::Succeeded,
                wit::OutcomeStatus::Failed,
                wit::OutcomeStatus::NotStarted,
                wit::OutcomeStatus::Unknown,
            ]
            .map(|s| s as u8),
        );
        assert_eq!(
            [
                packed::FailureKind::Permission,
                packed::FailureKind::Arguments,
                packed::FailureKind::Execution,
                packed::FailureKind::Timeout,
                packed::FailureKind::Cancelled,
            ]
            .map(|k| k as u8),
            [
                wit::FailureKind::Permission,
                wit::FailureKind::Arguments,
                wit::FailureKind::Execution,
                wit::FailureKind::Timeout,
                wit::FailureKind::Cancelled,
            ]
            .map(|k| k as u8),
        );
    }

    /// The packet flattens to more than 16 core values, so wasmtime always
    /// lowers it into memory and never asks for the flat form.
    #[test]
    fn the_packed_packet_is_passed_in_memory() {
        let flat = std::mem::size_of::<<packed::Packet as ComponentType>::Lower>()
            / std::mem::size_of::<wasmtime::ValRaw>();
        assert!(flat > 16, "{flat} flat values");
    }
}
