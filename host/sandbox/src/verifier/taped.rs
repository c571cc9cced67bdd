//! Recorded and replayed calls: a call together with its [`CallTrace`].
//!
//! Recording draws the call's random seed from the operating system and
//! writes down what the guest sees from outside (see
//! [`crate::store::tape`]); replaying gives a fresh sandbox the same seed,
//! wall clock, monotonic readings and artifact answers, so the same
//! component on the same packet under the same limits answers the same.
//! Neither takes a ready instance: a taped call instantiates in its own
//! store, under its own tape.

use crate::error::CheckError;
use crate::store::tape::{CallTrace, Taped};
use crate::tenant::Tenant;
use crate::verifier::LoadedVerifier;
use crate::verifier::call::{CallReport, failed};
use verdict_policy::{CheckContext, CheckPacket, Verdict};

/// What a call does with what it sees from outside the guest.
#[derive(Debug, Clone, Copy)]
pub enum Tape<'a> {
    /// Write it down, with a fresh seed from the operating system.
    Record,
    /// Give the guest what this trace says it saw: its seed, clocks and
    /// artifact answers (the tenant's own artifacts are not read).
    Replay(&'a CallTrace),
}

/// A taped call's report and its trace.
#[derive(Debug, Clone)]
pub struct TapedReport<T> {
    /// The answer and what the call used.
    pub report: CallReport<T>,
    /// What the guest saw (on replay: what the replay gave it).
    pub trace: CallTrace,
}

/// The trace of a call refused before it began: nothing seen.
fn refused<T>(err: CheckError, tape: Tape<'_>) -> TapedReport<T> {
    let trace = match tape {
        Tape::Replay(trace) => CallTrace::new(trace.seed, trace.wall_clock_ms),
        // A fresh seed all the same: a recorder names the check after it.
        Tape::Record => CallTrace::new(
            crate::store::tape::draw_seed().unwrap_or([0; crate::store::tape::SEED_BYTES]),
            0,
        ),
    };
    TapedReport {
        report: failed(err),
        trace,
    }
}

impl LoadedVerifier {
    /// [`LoadedVerifier::check_async`], recorded or replayed (see the
    /// module docs).
    pub async fn check_taped(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        ctx: &CheckContext,
        tape: Tape<'_>,
    ) -> TapedReport<Verdict> {
        match self.start_check(tenant, packet, ctx, Some(tape)) {
            Ok(mut call) => {
                let taped = call.taped.take();
                let report = call.finish().await;
                finish(report, taped, tape)
            }
            Err(err) => refused(err, tape),
        }
    }

    /// [`LoadedVerifier::progress_key_async`], recorded or replayed.
    pub async fn progress_key_taped(
        &self,
        tenant: &Tenant,
        packet: &CheckPacket,
        ctx: &CheckContext,
        tape: Tape<'_>,
    ) -> TapedReport<String> {
        match self.start_progress(tenant, packet, ctx, Some(tape)) {
            Ok(mut call) => {
                let taped = call.taped.take();
                let report = call.finish().await;
                finish(report, taped, tape)
            }
            Err(err) => refused(err, tape),
        }
    }
}

fn finish<T>(report: CallReport<T>, taped: Option<Taped>, tape: Tape<'_>) -> TapedReport<T> {
    match taped {
        Some(taped) => TapedReport {
            report,
            trace: taped.collect(),
        },
        // A taped start always leaves its `Taped`.
        None => TapedReport {
            trace: refused::<T>(CheckError::Host(String::new()), tape).trace,
            report,
        },
    }
}
