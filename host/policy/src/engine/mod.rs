//! `PolicyExecution`: the synchronous state machine of one policy execution.
//!
//! The agent loop drives it with plain events and acts on its answers:
//!
//! | event | call | answer |
//! |---|---|---|
//! | before each model call | [`PolicyExecution::begin_turn`] | [`TurnDecision`]: proceed (with labelled feedback) or stop |
//! | before each tool dispatch | [`PolicyExecution::admit`] | [`Admission`]: run, skip with feedback, or stop |
//! | a tool settled | [`PolicyExecution::observe`] | [`Decision`] |
//! | an async result delivered | [`PolicyExecution::import_delivery`] | [`Decision`] |
//! | an async result still awaited | [`PolicyExecution::expect_delivery`] | — |
//! | a tool batch ended | [`PolicyExecution::after_batch`] | [`BatchDecision`]: maybe a progress sample |
//! | a final candidate | [`PolicyExecution::final_candidate`] | [`FinalDecision`]: answer, check, or stop |
//! | a checker answered | [`PolicyExecution::completion_verdict`], [`PolicyExecution::progress_key`] | [`CheckDecision`] |
//!
//! The answers are in `decision.rs`; `state.rs` holds the execution and its
//! start, turns, recovery and stops, and each event has a file of its own.
//!
//! The engine never runs a checker, a tool or a model: it keeps only the
//! identities of the checkers named at [`PolicyExecution::start`]; the loop
//! runs its checker on the packet the engine built, and hands the answer
//! back with the view it saw then.
//!
//! # Rules and the tests that prove them
//!
//! Every rule of the spec sections "Bounds and recovery", "Host completion
//! and progress callbacks" and "Diagnostics and lifecycle" that is a
//! decision, with its test in `host/policy/tests/` (file::test):
//!
//! | rule | test |
//! |---|---|
//! | thresholds ≤ 1000, all but recovery positive; every violation reported with its field | `config_rules::every_violation_is_reported_with_its_field` |
//! | allowlist ≤ 100 nonempty names of ≤ 256 characters | `config_rules::allowlist_bounds_are_enforced` |
//! | invalid configuration refused before any dispatch | `config_rules::invalid_policy_cannot_start_an_execution` |
//! | policy loads from JSON; `{}` is valid and enables tracking without a completion checker | `config_rules::empty_json_policy_tracks_without_a_verifier` |
//! | unknown JSON fields refused | `config_rules::unknown_json_field_is_refused` |
//! | an execution captures a copy of the policy at start | compile time (`config_rules`: an execution is `'static`); per run: verdict-agent `lifecycle::a_run_policy_applies_to_that_execution_only` |
//! | key order never changes a fingerprint | `canonical_props::key_order_never_changes_a_fingerprint` |
//! | fingerprints are stable across runs | `canonical_props::fingerprints_are_stable_across_runs`, `canonical_props::golden_fingerprints_do_not_drift` |
//! | RFC 8785 number, string and sorting examples | `canonical::tests::rfc8785_*` (unit) |
//! | canonical form agrees with an independent RFC 8785 implementation | `canonical_props::agrees_with_serde_json_canonicalizer` |
//! | no panic on any JSON, string or size; the bound holds | `canonical_props::any_bytes_never_panic`, `canonical_props::bound_holds_for_any_size`, `engine_props::any_event_sequence_keeps_every_bound` |
//! | fingerprint input bounded to 64 KiB (and nesting to 128) | `canonical::tests::inputs_over_64_kib_are_refused`, `canonical::tests::nesting_beyond_the_depth_bound_is_refused` (unit) |
//! | unfingerprintable arguments stop before dispatch | `admission_rules::unfingerprintable_arguments_stop_before_dispatch` |
//! | repeated identical read: feedback first, then stop on the same request | `admission_rules::repeated_read_gets_feedback_then_stops` |
//! | a different read or changed argument proceeds | `admission_rules::changed_argument_proceeds_after_feedback` |
//! | a changed result does not count as repeated | `admission_rules::changed_result_is_not_a_repeat` |
//! | unfingerprintable read results never count as identical | `admission_rules::unfingerprintable_results_never_repeat` |
//! | allowlisted read tools are exempt from repeat accounting (not writes) | `admission_rules::allowlisted_reads_may_repeat`, `admission_rules::allowlist_never_exempts_a_write` |
//! | admission identity is the action plus the loop's call sequence, never the provider call id | `admission_rules::call_ids_are_not_action_identity` |
//! | identical write/unknown action cannot execute twice, even in one response | `admission_rules::duplicate_write_in_one_response_is_skipped` |
//! | asking again for a skipped duplicate stops with `duplicate_action` | `admission_rules::duplicate_write_requested_again_stops` |
//! | `not_started` releases an admission | `admission_rules::not_started_releases_the_admission` |
//! | absent outcome for write/unknown stops with `uncertain_effect` | `admission_rules::absent_outcome_of_a_write_is_uncertain` |
//! | unknown completion for write/unknown stops with `uncertain_effect` | `admission_rules::unknown_outcome_of_unknown_effect_is_uncertain` |
//! | framework outcome decides failure (`{"success":false}` succeeds) | `admission_rules::application_failure_data_is_success` |
//! | permission/argument failures count toward recovery without a receipt | `admission_rules::permission_failure_recovers_without_receipt` |
//! | at most N admissions, pending async included | `bounds_rules::admission_bound_counts_pending_calls` |
//! | at most N distinct call signatures | `bounds_rules::signature_bound_stops_next_dispatch` |
//! | at most N observations / failure identities (the bound reached is named) | `bounds_rules::observation_bound_stops_next_dispatch`, `bounds_rules::failure_identity_bound_stops_next_dispatch`, `bounds_rules::failure_identity_bound_caps_tracking` |
//! | reaching a bound stops the next model dispatch too | `bounds_rules::reaching_a_bound_stops_the_next_turn` |
//! | failure → labelled feedback for the next turn; nothing replayed | `recovery_rules::failure_feedback_is_labelled_and_delivered_once` |
//! | one recovery attempt per feedback turn; exhausted → stop | `recovery_rules::recovery_exhaustion_stops` |
//! | feedback queued before a final candidate shares its attempt with a false verdict and reaches the model | `recovery_rules::feedback_queued_before_a_final_candidate_shares_its_attempt` |
//! | `max_recovery_attempts = 0` stops at the first trigger | `recovery_rules::zero_recovery_stops_at_first_failure` |
//! | iteration bound stops without an extra turn | `recovery_rules::iteration_bound_stops_before_the_extra_turn` |
//! | no completion checker: `answer_returned`, no workflow status | `completion_rules::no_checker_answer_returned_without_status` |
//! | only a true verdict yields `completed` | `completion_rules::only_true_verdict_completes` |
//! | false verdict → feedback; exhausted → input-needed, verdict retained | `completion_rules::false_verdicts_recover_then_need_input` |
//! | later bound keeps the earlier false verdict | `completion_rules::later_bound_keeps_earlier_false_verdict` |
//! | invalid verdict (bounds) stops with `checker_error` | `completion_rules::invalid_verdict_is_a_checker_error` |
//! | checker error/timeout stops with sanitized `checker_error` | `completion_rules::checker_timeout_stops_sanitized` |
//! | a late verdict for a finished/cancelled check confirms nothing | `completion_rules::late_verdict_cannot_confirm` |
//! | final candidate with outstanding calls → `pending_async` | `completion_rules::final_candidate_with_outstanding_call_is_pending_async` |
//! | packet: output ≤ 32768 chars + `outputTruncated` | `packet_rules::output_is_bounded_and_flagged` |
//! | packet: last 100 observations, no error details/arguments, counts + flag | `packet_rules::last_hundred_observations_without_arguments` |
//! | packet: task-state snapshot carried | `packet_rules::task_state_is_carried` |
//! | packet ≤ 1 MiB serialized | `packet_rules::packet_never_exceeds_one_mib` |
//! | progress key sampled after batches; unchanged key → intervention | `progress_rules::unchanged_key_triggers_feedback` |
//! | changing key resets the count | `progress_rules::changing_key_does_not_intervene` |
//! | progress key > 4000 chars → `checker_error` | `progress_rules::oversized_key_is_a_checker_error` |
//! | host scope changed → verdict rejected, check restarts under new scope | `stale_view_rules::scope_change_restarts_the_check` |
//! | task/checker/owner/conversation changed → `state_changed` | `stale_view_rules::identity_change_stops_with_state_changed` |
//! | stale-view guard applies to progress keys | `stale_view_rules::progress_key_guard_applies` |
//! | diagnostics: phases, snake_case reasons, `input-needed` spelling, JSON | `diagnostics_rules::diagnostics_serialize_as_the_spec_names_them` |
//! | diagnostics snapshots are detached | compile time (`diagnostics_rules`: owned, `'static`); through the agent: verdict-agent `lifecycle::loop_diagnostics_describe_the_active_execution_while_it_runs` |
//! | verdicts strict: an object with only `complete`, `reason`, `feedback`; ≤ 16 KiB | `verdict_props::strict_shape_is_enforced` |
//! | `reason` ≤ 400 and `feedback` ≤ 2000 characters | `verdict_props::reason_and_feedback_bounds_are_exact` |
//! | characters are Unicode scalar values (an emoji is one) in every bound | `character_rules::*` |
//! | settlements and redeliveries deduplicated per call (sequence or delivery identity) | `delivery_rules::settlements_are_deduplicated` |
//! | deliveries keep the admitted effect; legacy: receipt effect or unknown; missing outcome blocks | `delivery_rules::delivered_outcomes_keep_the_admitted_effect` |
//! | imported failures respect recovery limits | `delivery_rules::imported_failures_respect_recovery_limits` |
//! | an expected (carried-over) delivery is outstanding until imported, without an admission | `delivery_rules::expected_delivery_is_pending_until_imported` |

mod admission;
mod checks;
mod decision;
mod delivery;
mod observation;
mod state;

pub use admission::ToolCallRequest;
pub use decision::{
    Admission, BatchDecision, CheckDecision, CheckKind, CheckRequest, CheckTicket, Decision,
    FinalDecision, TurnDecision,
};
pub use delivery::Delivery;
pub use state::PolicyExecution;
