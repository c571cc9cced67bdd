"""Tests of the entry points `app.Completion` and `app.WarmUp`: the sample's
verdicts pass unchanged, a verdict the host would misread is refused (in the
component, a trap), and warming up reads nothing."""

import pytest
from wit_world.imports.types import Packet, Verdict

import app
import artifact_ready

PACKET = Packet("exec", 1, "", False, [], 0, False, None)


def test_warm_up_reads_nothing_and_answers_nothing(monkeypatch):
    monkeypatch.setattr(app.artifacts, "read", lambda id: pytest.fail("no read expected"))
    assert app.WarmUp().warm() is None


def test_the_sample_verdict_passes_unchanged(monkeypatch):
    monkeypatch.setattr(app.artifacts, "read", lambda id: pytest.fail("no read expected"))
    verdict = app.Completion().check(PACKET)
    assert verdict == Verdict(False, "no successful read_artifact call", artifact_ready.FEEDBACK)


@pytest.mark.parametrize(
    "answer, message",
    [
        (Verdict(complete="no", reason=None, feedback=None), "complete must be True or False"),
        (Verdict(complete=1, reason=None, feedback=None), "complete must be True or False"),
        (Verdict(complete=None, reason=None, feedback=None), "complete must be True or False"),
        (Verdict(complete=True, reason=42, feedback=None), "reason must be a str or None"),
        (Verdict(complete=False, reason=None, feedback=b"x"), "feedback must be a str or None"),
        ({"complete": True}, "must return a Verdict"),
    ],
    ids=["str", "int", "none", "reason-int", "feedback-bytes", "dict"],
)
def test_a_verdict_the_host_would_misread_is_refused(monkeypatch, answer, message):
    monkeypatch.setattr(artifact_ready, "check", lambda packet, read: answer)
    with pytest.raises(TypeError, match=message):
        app.Completion().check(PACKET)
