//! The stale-view guard.

use crate::common;

use common::{start, view, with_completion, with_progress};
use verdict_policy::{
    BatchDecision, CheckDecision, CheckView, FinalDecision, LoopPolicy, StopReason, Verdict,
    WorkflowStatus,
};

fn yes() -> Verdict {
    Verdict::bare(true)
}

#[test]
fn scope_change_restarts_the_check() {
    let changes: Vec<fn(&mut CheckView)> = vec![
        |v| v.scope.account = "acct-2".into(),
        |v| {
            v.scope.connector_identities.insert("github:bob".into());
        },
        |v| {
            v.scope.roles.insert("admin".into());
        },
        |v| v.scope.session = "sess-2".into(),
        |v| v.scope.registry_scope = "registry-b".into(),
    ];
    for change in changes {
        let mut exec = start(&with_completion(LoopPolicy::default()));
        let FinalDecision::Check(request) = exec.final_candidate("done", &view(), None) else {
            panic!("expected a check");
        };
        let mut now = view();
        change(&mut now);
        let CheckDecision::Restart(again) =
            exec.completion_verdict(request.ticket, &now, Ok(yes()))
        else {
            panic!("old authority confirmed the check");
        };
        assert_eq!(exec.diagnostics().status, None);
        assert_eq!(again.packet.output_text, "done");
        assert_ne!(again.ticket, request.ticket);
        // The old ticket is dead; the new one under the new scope completes.
        assert_eq!(
            exec.completion_verdict(request.ticket, &now, Ok(yes())),
            CheckDecision::Ignored
        );
        assert_eq!(
            exec.completion_verdict(again.ticket, &now, Ok(yes())),
            CheckDecision::Complete
        );
        assert_eq!(exec.diagnostics().status, Some(WorkflowStatus::Completed));
        assert_eq!(exec.diagnostics().counters.scope_restarts, 1);
    }
}

#[test]
fn identity_change_stops_with_state_changed() {
    let changes: Vec<fn(&mut CheckView)> = vec![
        |v| v.identity.task_generation += 1,
        |v| v.identity.checker = "sha256:def".into(),
        |v| v.identity.owner = "owner-2".into(),
        |v| v.identity.conversation = "conv-2".into(),
    ];
    for change in changes {
        let mut exec = start(&with_completion(LoopPolicy::default()));
        let FinalDecision::Check(request) = exec.final_candidate("done", &view(), None) else {
            panic!("expected a check");
        };
        let mut now = view();
        change(&mut now);
        // A scope change at the same time does not soften it.
        now.scope.session = "sess-9".into();
        assert_eq!(
            exec.completion_verdict(request.ticket, &now, Ok(yes())),
            CheckDecision::Stop {
                reason: StopReason::StateChanged
            }
        );
        assert_eq!(exec.diagnostics().status, None);
    }
}

#[test]
fn progress_key_guard_applies() {
    let mut exec = start(&with_progress(LoopPolicy::default()));
    let BatchDecision::SampleProgress(request) = exec.after_batch(&view(), None) else {
        panic!("expected a sample");
    };
    let mut now = view();
    now.scope.roles.insert("viewer".into());
    assert!(matches!(
        exec.progress_key(request.ticket, &now, Ok("rev-1".into())),
        CheckDecision::Restart(_)
    ));
    let mut exec = start(&with_progress(LoopPolicy::default()));
    let BatchDecision::SampleProgress(request) = exec.after_batch(&view(), None) else {
        panic!("expected a sample");
    };
    let mut now = view();
    now.identity.task_generation = 3;
    assert_eq!(
        exec.progress_key(request.ticket, &now, Ok("rev-1".into())),
        CheckDecision::Stop {
            reason: StopReason::StateChanged
        }
    );
}

#[test]
fn the_checker_identity_is_the_one_the_execution_started_with() {
    // The engine keeps the checker's identity from `start`: the view a check
    // is asked under cannot change it, and an answer is compared with it.
    let mut exec = start(&with_completion(LoopPolicy::default()));
    let mut asked = view();
    asked.identity.checker = "sha256:something-else".into();
    let FinalDecision::Check(request) = exec.final_candidate("done", &asked, None) else {
        panic!("expected a check");
    };
    assert_eq!(
        exec.completion_verdict(request.ticket, &view(), Ok(yes())),
        CheckDecision::Complete
    );
    assert_eq!(exec.checkers().completion.as_deref(), Some(common::CHECKER));
}
