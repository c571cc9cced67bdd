//! Recording checks: a taped call whose trace goes to a [`Recorder`], as a
//! library call or as a checker in the loop.

use crate::cas::sha256_hex;
use crate::format::{RecordInput, RecordRole, RecordedAnswer, RecordedMetrics, RecordedVerifier};
use crate::writer::Recorder;
use std::sync::{Arc, Mutex};
use verdict_policy::{
    CheckContext, CheckFuture, CheckPacket, CheckerError, CompletionChecker, ProgressChecker,
    Verdict,
};
use verdict_sandbox::{
    CallReport, CheckerTotals, LoadedVerifier, SEED_BYTES, Tape, TapedReport, Tenant,
};

/// The id of the check whose random seed is `seed`: 32 hex digits (the
/// seed is fresh from the operating system for every check).
pub fn check_id(seed: &[u8; SEED_BYTES]) -> String {
    let mut input = b"verdict/check-id/".to_vec();
    input.extend_from_slice(seed);
    sha256_hex(&input)[..32].to_owned()
}

/// A check's report and the id of its record.
#[derive(Debug, Clone)]
pub struct Recorded<T> {
    /// The answer and what the call used.
    pub report: CallReport<T>,
    /// The record's id (its file is `<id>.json` once written).
    pub id: String,
}

/// The record of a taped call, to hand to the writer.
fn input<T>(
    taped: TapedReport<T>,
    verifier: &LoadedVerifier,
    tenant: &Tenant,
    packet: &CheckPacket,
    role: RecordRole,
    answer: RecordedAnswer,
) -> (RecordInput, CallReport<T>) {
    let TapedReport { report, trace } = taped;
    let input = RecordInput {
        id: check_id(&trace.seed),
        tenant: tenant.id().to_owned(),
        role,
        verifier: RecordedVerifier {
            digest: verifier.digest().to_owned(),
            wit_version: verifier.wit_version().to_owned(),
        },
        limits: *tenant.limits(),
        packet: packet.clone(),
        trace,
        answer,
        metrics: RecordedMetrics::from(&report.metrics),
    };
    (input, report)
}

/// Runs the completion check of `verifier` for `tenant` on `packet`,
/// recorded into `recorder` (written off this thread).
pub async fn check_recorded(
    verifier: &LoadedVerifier,
    tenant: &Tenant,
    packet: &CheckPacket,
    ctx: &CheckContext,
    recorder: &Recorder,
) -> Result<Recorded<Verdict>, crate::RecordError> {
    let taped = verifier
        .check_taped(tenant, packet, ctx, Tape::Record)
        .await;
    let answer = RecordedAnswer::of_verdict(&taped.report.result);
    let (input, report) = input(
        taped,
        verifier,
        tenant,
        packet,
        RecordRole::Completion,
        answer,
    );
    let id = input.id.clone();
    recorder.submit(input).await?;
    Ok(Recorded { report, id })
}

/// Samples the progress key of `verifier`, recorded into `recorder`.
pub async fn progress_key_recorded(
    verifier: &LoadedVerifier,
    tenant: &Tenant,
    packet: &CheckPacket,
    ctx: &CheckContext,
    recorder: &Recorder,
) -> Result<Recorded<String>, crate::RecordError> {
    let taped = verifier
        .progress_key_taped(tenant, packet, ctx, Tape::Record)
        .await;
    let answer = RecordedAnswer::of_key(&taped.report.result);
    let (input, report) = input(
        taped,
        verifier,
        tenant,
        packet,
        RecordRole::Progress,
        answer,
    );
    let id = input.id.clone();
    recorder.submit(input).await?;
    Ok(Recorded { report, id })
}

/// A wasm verifier in the checker roles whose every call is recorded: the
/// loop's diagnostics list each check's record id
/// (`LoopDiagnostics::check_records`).
#[derive(Clone)]
pub struct RecordingChecker {
    verifier: LoadedVerifier,
    tenant: Tenant,
    recorder: Arc<Recorder>,
    totals: Option<Arc<Mutex<CheckerTotals>>>,
}

impl std::fmt::Debug for RecordingChecker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingChecker")
            .field("digest", &self.verifier.digest())
            .field("tenant", &self.tenant.id())
            .field("recorder", &self.recorder)
            .finish()
    }
}

impl RecordingChecker {
    /// Checks with `verifier` for `tenant`, recording into `recorder`.
    pub fn new(verifier: LoadedVerifier, tenant: Tenant, recorder: Arc<Recorder>) -> Self {
        Self {
            verifier,
            tenant,
            recorder,
            totals: None,
        }
    }

    /// Also adds every call's metrics to `totals`.
    pub fn with_totals(mut self, totals: Arc<Mutex<CheckerTotals>>) -> Self {
        self.totals = Some(totals);
        self
    }

    fn count<T>(&self, report: &CallReport<T>, progress: bool) {
        if let Some(totals) = &self.totals {
            let mut totals = totals.lock().unwrap_or_else(|p| p.into_inner());
            totals.add(&report.metrics, report.result.is_err(), progress);
        }
    }
}

fn recorder_failed(e: crate::RecordError) -> CheckerError {
    CheckerError::Failed(format!("check record: {e}"))
}

impl CompletionChecker for RecordingChecker {
    fn check<'a>(
        &'a self,
        packet: &'a CheckPacket,
        ctx: &'a CheckContext,
    ) -> CheckFuture<'a, Verdict> {
        Box::pin(async move {
            let recorded =
                check_recorded(&self.verifier, &self.tenant, packet, ctx, &self.recorder)
                    .await
                    .map_err(recorder_failed)?;
            self.count(&recorded.report, false);
            ctx.note_record(recorded.id);
            recorded.report.result.map_err(CheckerError::from)
        })
    }

    fn identity(&self) -> String {
        self.verifier.digest().to_owned()
    }
}

impl ProgressChecker for RecordingChecker {
    fn progress_key<'a>(
        &'a self,
        packet: &'a CheckPacket,
        ctx: &'a CheckContext,
    ) -> CheckFuture<'a, String> {
        Box::pin(async move {
            let recorded =
                progress_key_recorded(&self.verifier, &self.tenant, packet, ctx, &self.recorder)
                    .await
                    .map_err(recorder_failed)?;
            self.count(&recorded.report, true);
            ctx.note_record(recorded.id);
            recorded.report.result.map_err(CheckerError::from)
        })
    }

    fn identity(&self) -> String {
        self.verifier.digest().to_owned()
    }
}
