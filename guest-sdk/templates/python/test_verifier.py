"""Native tests of `verifier.check` against an in-memory artifact reader."""

import pytest
from componentize_py_types import Err
from wit_world.imports.artifacts import (
    Artifact,
    ArtifactError_LimitReached,
    ArtifactError_NotFound,
)
from wit_world.imports.types import (
    Effect,
    FailureKind,
    Observation,
    Outcome,
    OutcomeStatus,
    Packet,
)

from verifier import FEEDBACK, STATUS_ID, WRITE_TOOL, check


def wrote(outcome: Outcome | None) -> Packet:
    """A packet with one `write_artifact` call that had `outcome`."""
    call = Observation(WRITE_TOOL, "call-1", Effect.WRITE, outcome)
    return Packet("exec-1", 1, "", False, [call], 1, False, None)


PACKET = wrote(Outcome(OutcomeStatus.SUCCEEDED, None, True, None))


def reader(items: dict[str, str]):
    """`artifacts.read` over `items`, refusing like the host."""

    def read(id: str) -> Artifact:
        if id not in items:
            raise Err(ArtifactError_NotFound())
        data = items[id].encode()
        return Artifact(id, "r1", len(data), data)

    return read


def test_complete_when_status_says_done():
    verdict = check(PACKET, reader({STATUS_ID: '{"done": true}'}))
    assert verdict.complete is True
    assert verdict.feedback is None


@pytest.mark.parametrize(
    "packet",
    [
        Packet("exec-1", 1, "", False, [], 0, False, None),
        wrote(Outcome(OutcomeStatus.FAILED, FailureKind.PERMISSION, False, None)),
        wrote(None),
    ],
    ids=["no-calls", "denied", "no-outcome"],
)
def test_not_complete_without_a_successful_write(packet):
    verdict = check(packet, reader({STATUS_ID: '{"done": true}'}))
    assert verdict.complete is False
    assert verdict.reason == "no successful write_artifact call"
    assert verdict.feedback == FEEDBACK


@pytest.mark.parametrize(
    "items, reason",
    [
        ({}, "status.json does not exist"),
        ({STATUS_ID: '{"done": false}'}, "status.json does not say done"),
        ({STATUS_ID: '{"done": 1}'}, "status.json does not say done"),
        ({STATUS_ID: "done"}, "status.json is not JSON"),
    ],
)
def test_not_complete_otherwise(items, reason):
    verdict = check(PACKET, reader(items))
    assert verdict.complete is False
    assert verdict.reason == reason
    assert verdict.feedback == FEEDBACK


def test_refused_read_is_not_complete():
    def refuse(id: str) -> Artifact:
        raise Err(ArtifactError_LimitReached())

    verdict = check(PACKET, refuse)
    assert verdict.reason == "status.json unreadable: limit-reached"
