//! Lowering a [`CheckPacket`] as `verdict:verifier@0.1.x`'s packet record,
//! straight from the host's own types.
//!
//! The generated `wit::Packet` owns its strings, so lowering through it
//! meant cloning the whole packet (every string, the 32 KiB output) before
//! copying it again into the guest. The borrowed views here implement
//! wasmtime's component traits with the WIT records' own type information
//! (size, alignment, typecheck) and write the same canonical-ABI layout from
//! borrowed data: each string and list is copied once, into memory the
//! guest's `realloc` returned, exactly as the generated code does. Only the
//! task state (rare, small) is converted to its WIT record first, as its
//! payload is JSON text on the wire.
//!
//! A packet is always passed through memory (it flattens to more than the
//! 16 core parameters the canonical ABI passes directly), but every view
//! still implements flat lowering, through the owned WIT records, so the
//! views are correct whichever way wasmtime asks.

use crate::abi::lower::{next, payload, record_fields, slice, view_of};
use crate::abi::shim::{InterfaceType, LowerContext, StringEncoding, bad_type_info};
use crate::bindings::v0_1::convert;
use crate::bindings::v0_1::wit;
use std::mem::MaybeUninit;
use verdict_policy::{CheckPacket, Observation, ObservedOutcome};
use wasmtime::component::{ComponentType, Lower};

/// The packet, lowered as `verdict:verifier/types.packet`.
pub(crate) struct PacketView<'a>(pub(crate) &'a CheckPacket);

crate::abi::packet_arg!(
    /// The packet argument of the standard exports, lowered as
    /// `verdict:verifier/types.packet` ([`PacketView`]).
    PacketArg,
    PacketView,
    wit::Packet
);

/// One observation, lowered as `observation`.
struct ObservationView<'a>(&'a Observation);

/// An outcome, lowered as `outcome`.
struct OutcomeView<'a>(&'a ObservedOutcome);

/// The observations, lowered as `list<observation>`.
struct ObservationsView<'a>(&'a [Observation]);

view_of!(PacketView, wit::Packet);
view_of!(ObservationView, wit::Observation);
view_of!(OutcomeView, wit::Outcome);
view_of!(ObservationsView, Vec<wit::Observation>);

// SAFETY: writes the layout of `wit::Packet` (see `view_of!`): the fields in
// WIT order at the offsets the record's ABI gives, each with the lowering
// of its own WIT type.
#[allow(unsafe_code)]
unsafe impl Lower for PacketView<'_> {
    fn linear_lower_to_flat<T>(
        &self,
        cx: &mut LowerContext<'_, T>,
        ty: InterfaceType,
        dst: &mut MaybeUninit<Self::Lower>,
    ) -> wasmtime::Result<()> {
        convert::packet(self.0).linear_lower_to_flat(cx, ty, dst)
    }

    fn linear_lower_to_memory<T>(
        &self,
        cx: &mut LowerContext<'_, T>,
        ty: InterfaceType,
        mut offset: usize,
    ) -> wasmtime::Result<()> {
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
        ObservationsView(&p.observations).linear_lower_to_memory(
            cx,
            f[4],
            next::<Vec<wit::Observation>>(o),
        )?;
        p.observed_tool_calls
            .linear_lower_to_memory(cx, f[5], next::<u32>(o))?;
        p.observations_truncated
            .linear_lower_to_memory(cx, f[6], next::<bool>(o))?;
        convert::task_state(p.task_state.as_ref()).linear_lower_to_memory(
            cx,
            f[7],
            next::<Option<wit::TaskState>>(o),
        )
    }
}

// SAFETY: writes the layout of `list<observation>`: a buffer from the
// guest's `realloc` holding the elements at the element size, then its
// pointer and length as two `u32`s, as wasmtime's own list lowering does.
#[allow(unsafe_code)]
unsafe impl Lower for ObservationsView<'_> {
    fn linear_lower_to_flat<T>(
        &self,
        cx: &mut LowerContext<'_, T>,
        ty: InterfaceType,
        dst: &mut MaybeUninit<Self::Lower>,
    ) -> wasmtime::Result<()> {
        let owned: Vec<wit::Observation> = self.0.iter().map(convert::observation).collect();
        owned.linear_lower_to_flat(cx, ty, dst)
    }

    fn linear_lower_to_memory<T>(
        &self,
        cx: &mut LowerContext<'_, T>,
        ty: InterfaceType,
        offset: usize,
    ) -> wasmtime::Result<()> {
        let element = match ty {
            InterfaceType::List(i) => cx.types[i].element,
            _ => bad_type_info(),
        };
        let abi = <wit::Observation as ComponentType>::ABI;
        let size = abi.size32 as usize;
        let bytes = self
            .0
            .len()
            .checked_mul(size)
            .ok_or_else(|| wasmtime::format_err!("size overflow copying a list"))?;
        let base = cx.realloc(0, 0, abi.align32, bytes)?;
        if cx.options().string_encoding == StringEncoding::Utf8 {
            utf8_observations(cx, self.0, base)?;
        } else {
            for (i, obs) in self.0.iter().enumerate() {
                ObservationView(obs).linear_lower_to_memory(cx, element, base + i * size)?;
            }
        }
        let ptr = u32::try_from(base)?;
        let len = u32::try_from(self.0.len())?;
        *cx.get::<4>(offset) = ptr.to_le_bytes();
        *cx.get::<4>(offset + 4) = len.to_le_bytes();
        Ok(())
    }
}

// SAFETY: writes the layout of `wit::Observation` (see `view_of!`).
#[allow(unsafe_code)]
unsafe impl Lower for ObservationView<'_> {
    fn linear_lower_to_flat<T>(
        &self,
        cx: &mut LowerContext<'_, T>,
        ty: InterfaceType,
        dst: &mut MaybeUninit<Self::Lower>,
    ) -> wasmtime::Result<()> {
        convert::observation(self.0).linear_lower_to_flat(cx, ty, dst)
    }

    fn linear_lower_to_memory<T>(
        &self,
        cx: &mut LowerContext<'_, T>,
        ty: InterfaceType,
        mut offset: usize,
    ) -> wasmtime::Result<()> {
        let f: [InterfaceType; 4] = record_fields(cx, ty);
        let obs = self.0;
        let o = &mut offset;
        obs.tool_name
            .as_str()
            .linear_lower_to_memory(cx, f[0], next::<str>(o))?;
        obs.call_id
            .as_str()
            .linear_lower_to_memory(cx, f[1], next::<str>(o))?;
        convert::effect(obs.effect).linear_lower_to_memory(cx, f[2], next::<wit::Effect>(o))?;
        obs.outcome
            .as_ref()
            .map(OutcomeView)
            .linear_lower_to_memory(cx, f[3], next::<Option<wit::Outcome>>(o))
    }
}

// SAFETY: writes the layout of `wit::Outcome` (see `view_of!`).
#[allow(unsafe_code)]
unsafe impl Lower for OutcomeView<'_> {
    fn linear_lower_to_flat<T>(
        &self,
        cx: &mut LowerContext<'_, T>,
        ty: InterfaceType,
        dst: &mut MaybeUninit<Self::Lower>,
    ) -> wasmtime::Result<()> {
        convert::outcome(self.0).linear_lower_to_flat(cx, ty, dst)
    }

    fn linear_lower_to_memory<T>(
        &self,
        cx: &mut LowerContext<'_, T>,
        ty: InterfaceType,
        mut offset: usize,
    ) -> wasmtime::Result<()> {
        let f: [InterfaceType; 4] = record_fields(cx, ty);
        let out = self.0;
        let o = &mut offset;
        convert::status(out.status).linear_lower_to_memory(
            cx,
            f[0],
            next::<wit::OutcomeStatus>(o),
        )?;
        out.failure.map(convert::failure).linear_lower_to_memory(
            cx,
            f[1],
            next::<Option<wit::FailureKind>>(o),
        )?;
        out.executed
            .linear_lower_to_memory(cx, f[2], next::<bool>(o))?;
        out.result_fingerprint
            .as_deref()
            .linear_lower_to_memory(cx, f[3], next::<Option<&str>>(o))
    }
}

/// Where the fields of an `observation` record lie, from its start (the
/// canonical ABI's layout, computed from the WIT types' own ABI info).
struct ObservationLayout {
    tool_name: usize,
    call_id: usize,
    effect: usize,
    outcome_tag: usize,
    status: usize,
    failure_tag: usize,
    failure: usize,
    executed: usize,
    fingerprint_tag: usize,
    fingerprint: usize,
}

impl ObservationLayout {
    fn new() -> Self {
        let o = &mut 0usize;
        let tool_name = next::<str>(o);
        let call_id = next::<str>(o);
        let effect = next::<wit::Effect>(o);
        let outcome_tag = next::<Option<wit::Outcome>>(o);
        let mut p = payload::<wit::Outcome>(outcome_tag);
        let status = next::<wit::OutcomeStatus>(&mut p);
        let failure_tag = next::<Option<wit::FailureKind>>(&mut p);
        let executed = next::<bool>(&mut p);
        let fingerprint_tag = next::<Option<String>>(&mut p);
        Self {
            tool_name,
            call_id,
            effect,
            outcome_tag,
            status,
            failure_tag,
            failure: payload::<wit::FailureKind>(failure_tag),
            executed,
            fingerprint_tag,
            fingerprint: payload::<str>(fingerprint_tag),
        }
    }
}

/// A string placed in guest memory: where, and what to copy there.
struct Placed<'a> {
    ptr: usize,
    text: &'a str,
}

impl<'a> Placed<'a> {
    /// Asks the guest's allocator for room for `text` (UTF-8, copied
    /// later by [`Placed::copy`]).
    fn new<T>(cx: &mut LowerContext<'_, T>, text: &'a str) -> wasmtime::Result<Self> {
        let ptr = cx.realloc(0, 0, 1, text.len())?;
        Ok(Self { ptr, text })
    }

    fn copy(&self, memory: &mut [u8]) -> wasmtime::Result<()> {
        slice(memory, self.ptr, self.text.len())?.copy_from_slice(self.text.as_bytes());
        Ok(())
    }

    /// Writes the string's pointer and length at `at` in `record`.
    fn describe(&self, record: &mut [u8], at: usize) -> wasmtime::Result<()> {
        let ptr = u32::try_from(self.ptr)?;
        let len = u32::try_from(self.text.len())?;
        slice(record, at, 4)?.copy_from_slice(&ptr.to_le_bytes());
        slice(record, at + 4, 4)?.copy_from_slice(&len.to_le_bytes());
        Ok(())
    }
}

/// Lowers the observations of a UTF-8 guest into the list buffer at
/// `base`: every string through the guest's allocator first, then the
/// records and the string bytes in one pass over guest memory. The same
/// bytes as the field-by-field lowering; fewer look-ups of the memory.
fn utf8_observations<T>(
    cx: &mut LowerContext<'_, T>,
    observations: &[Observation],
    base: usize,
) -> wasmtime::Result<()> {
    let layout = ObservationLayout::new();
    let size = <wit::Observation as ComponentType>::ABI.size32 as usize;
    let mut placed = Vec::with_capacity(observations.len());
    for obs in observations {
        let fingerprint = match obs
            .outcome
            .as_ref()
            .and_then(|o| o.result_fingerprint.as_deref())
        {
            Some(text) => Some(Placed::new(cx, text)?),
            None => None,
        };
        placed.push((
            Placed::new(cx, &obs.tool_name)?,
            Placed::new(cx, &obs.call_id)?,
            fingerprint,
        ));
    }
    let memory = cx.as_slice_mut();
    let mut record = vec![0u8; size];
    for (i, (obs, (tool_name, call_id, fingerprint))) in
        observations.iter().zip(&placed).enumerate()
    {
        record.fill(0);
        tool_name.describe(&mut record, layout.tool_name)?;
        call_id.describe(&mut record, layout.call_id)?;
        record[layout.effect] = convert::effect(obs.effect) as u8;
        if let Some(outcome) = &obs.outcome {
            record[layout.outcome_tag] = 1;
            record[layout.status] = convert::status(outcome.status) as u8;
            if let Some(kind) = outcome.failure {
                record[layout.failure_tag] = 1;
                record[layout.failure] = convert::failure(kind) as u8;
            }
            record[layout.executed] = u8::from(outcome.executed);
            if let Some(fingerprint) = fingerprint {
                record[layout.fingerprint_tag] = 1;
                fingerprint.describe(&mut record, layout.fingerprint)?;
                fingerprint.copy(memory)?;
            }
        }
        tool_name.copy(memory)?;
        call_id.copy(memory)?;
        slice(memory, base + i * size, size)?.copy_from_slice(&record);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The observation layout, as the canonical ABI lays it out by hand:
    /// two strings (pointer, length), the effect byte, then the optional
    /// outcome (tag, then its record at 4-byte alignment: status, failure
    /// tag and kind, executed, fingerprint tag, fingerprint string).
    #[test]
    fn the_observation_layout_is_the_canonical_one() {
        let l = ObservationLayout::new();
        assert_eq!(
            [
                l.tool_name,
                l.call_id,
                l.effect,
                l.outcome_tag,
                l.status,
                l.failure_tag,
                l.failure,
                l.executed,
                l.fingerprint_tag,
                l.fingerprint,
            ],
            [0, 8, 16, 20, 24, 25, 26, 27, 28, 32]
        );
        assert_eq!(<wit::Observation as ComponentType>::ABI.size32, 40);
    }

    /// The enum discriminants written directly are the WIT case indices.
    #[test]
    fn enum_bytes_are_the_wit_case_indices() {
        use verdict_policy::{Effect, FailureKind, OutcomeStatus};
        let effects = [Effect::Read, Effect::Write, Effect::Unknown];
        assert_eq!(effects.map(|e| convert::effect(e) as u8), [0, 1, 2]);
        let statuses = [
            OutcomeStatus::Succeeded,
            OutcomeStatus::Failed,
            OutcomeStatus::NotStarted,
            OutcomeStatus::Unknown,
        ];
        assert_eq!(statuses.map(|s| convert::status(s) as u8), [0, 1, 2, 3]);
        let kinds = [
            FailureKind::Permission,
            FailureKind::Arguments,
            FailureKind::Execution,
            FailureKind::Timeout,
            FailureKind::Cancelled,
        ];
        assert_eq!(kinds.map(|k| convert::failure(k) as u8), [0, 1, 2, 3, 4]);
    }
}
