"""Tests of the entry point `app.Completion`: the shipped examples, checked
natively (the same files `verdict check --packet examples/...
--artifacts examples/artifacts` reads, see README.md, so the examples and
the logic cannot drift apart), and the refusal of a verdict the host would
misread. `packet` reads any packet file of `verdict check`: reuse it."""

import json
from pathlib import Path

import pytest
from componentize_py_types import Err
from wit_world.imports.artifacts import Artifact, ArtifactError_NotFound
from wit_world.imports.types import (
    Effect,
    FailureKind,
    Observation,
    Outcome,
    OutcomeStatus,
    Packet,
    TaskState,
    Verdict,
)

import app
import verifier

EXAMPLES = Path(__file__).parent / "examples"


def packet(path: Path) -> Packet:
    """A packet file of `verdict check --packet` (camelCase JSON)."""
    doc = json.loads(path.read_text())
    state = doc.get("taskState")
    return Packet(
        execution_id=doc["executionId"],
        iteration=doc["iteration"],
        output_text=doc["outputText"],
        output_truncated=doc.get("outputTruncated", False),
        observations=[observation(o) for o in doc.get("observations", [])],
        observed_tool_calls=doc.get("observedToolCalls", 0),
        observations_truncated=doc.get("observationsTruncated", False),
        task_state=None
        if state is None
        else TaskState(
            host_scope=state["hostScope"],
            revision=state["revision"],
            generation=state.get("generation", 0),
            payload_json=json.dumps(state["payload"]),
        ),
    )


def observation(doc: dict) -> Observation:
    outcome = doc.get("outcome")
    return Observation(
        tool_name=doc["toolName"],
        call_id=doc["callId"],
        effect=Effect[doc["effect"].upper()],
        outcome=None
        if outcome is None
        else Outcome(
            status=OutcomeStatus[outcome["status"].upper()],
            failure=None if "failure" not in outcome else FailureKind[outcome["failure"].upper()],
            executed=outcome.get("executed", False),
            result_fingerprint=outcome.get("resultFingerprint"),
        ),
    )


def read_example(id: str) -> Artifact:
    """`artifacts.read` over `examples/artifacts`, like `verdict check`."""
    path = EXAMPLES / "artifacts" / id
    if not path.is_file():
        raise Err(ArtifactError_NotFound())
    data = path.read_bytes()
    return Artifact(id, "r1", len(data), data)


@pytest.fixture
def on_examples(monkeypatch):
    """The entry point, with the host's `artifacts.read` over the examples."""
    monkeypatch.setattr(app.artifacts, "read", read_example)
    return app.Completion()


def test_warm_up_reads_nothing_and_answers_nothing(monkeypatch):
    monkeypatch.setattr(app.artifacts, "read", lambda id: pytest.fail("no read expected"))
    assert app.WarmUp().warm() is None


def test_complete_json_is_complete(on_examples):
    verdict = on_examples.check(packet(EXAMPLES / "complete.json"))
    assert verdict.complete is True
    assert verdict.reason == "status.json says done"


def test_not_complete_json_is_not_complete(on_examples):
    verdict = on_examples.check(packet(EXAMPLES / "not-complete.json"))
    assert verdict.complete is False
    assert verdict.reason == "no successful write_artifact call"
    assert verdict.feedback == verifier.FEEDBACK


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
def test_a_verdict_the_host_would_misread_is_refused(on_examples, monkeypatch, answer, message):
    monkeypatch.setattr(verifier, "check", lambda packet, read: answer)
    with pytest.raises(TypeError, match=message):
        on_examples.check(packet(EXAMPLES / "complete.json"))
