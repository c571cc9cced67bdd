"""Native tests of `artifact_ready.check`: the same cases as the Rust sample."""

import pytest
from componentize_py_types import Err
from wit_world.imports.artifacts import (
    Artifact,
    ArtifactError_LimitReached,
    ArtifactError_NotFound,
    ArtifactError_TooLarge,
)
from wit_world.imports.types import (
    Effect,
    FailureKind,
    Observation,
    Outcome,
    OutcomeStatus,
    Packet,
)

from artifact_ready import ARTIFACT_ID, FEEDBACK, READ_TOOL, check

SUCCEEDED = Outcome(OutcomeStatus.SUCCEEDED, None, True, None)
FAILED = Outcome(OutcomeStatus.FAILED, FailureKind.EXECUTION, True, None)


def packet(*observations: Observation) -> Packet:
    return Packet("exec", 1, "", False, list(observations), len(observations), False, None)


def read_call(outcome: Outcome | None) -> Packet:
    return packet(Observation(READ_TOOL, "call-1", Effect.READ, outcome))


class Store:
    """In-memory artifacts with the host's refusals for a size or read limit."""

    def __init__(self, items=None, max_bytes=None, max_reads=None):
        self.items = dict(items or {})
        self.max_bytes = max_bytes
        self.max_reads = max_reads
        self.reads = 0

    def read(self, id: str) -> Artifact:
        if self.max_reads is not None and self.reads >= self.max_reads:
            raise Err(ArtifactError_LimitReached())
        self.reads += 1
        if id not in self.items:
            raise Err(ArtifactError_NotFound())
        data = self.items[id].encode()
        if self.max_bytes is not None and len(data) > self.max_bytes:
            raise Err(ArtifactError_TooLarge(len(data)))
        return Artifact(id, "r1", len(data), data)


def ready_store(json: str, **limits) -> Store:
    return Store({ARTIFACT_ID: json}, **limits)


def test_complete_when_read_succeeded_and_artifact_ready():
    verdict = check(read_call(SUCCEEDED), ready_store('{"ready":true}').read)
    assert verdict.complete
    assert verdict.reason == "artifact A42 is ready"
    assert verdict.feedback is None


@pytest.mark.parametrize(
    "candidate",
    [packet(), read_call(FAILED), read_call(None)],
    ids=["no-calls", "failed-call", "no-outcome"],
)
def test_not_complete_without_a_successful_read(candidate):
    store = ready_store('{"ready":true}')
    verdict = check(candidate, store.read)
    assert not verdict.complete
    assert verdict.feedback == FEEDBACK
    assert verdict.reason == "no successful read_artifact call"
    assert store.reads == 0


@pytest.mark.parametrize(
    "json", ['{"ready":false}', '{"ready":"true"}', '{"ready":1}', "{}", "[true]", "true"]
)
def test_not_complete_unless_ready_is_exactly_true(json):
    verdict = check(read_call(SUCCEEDED), ready_store(json).read)
    assert not verdict.complete
    assert verdict.feedback == FEEDBACK
    assert verdict.reason == "artifact A42 is not ready"


@pytest.mark.parametrize(
    "store, reason",
    [
        (Store(), "artifact A42 does not exist"),
        (ready_store("{ready"), "artifact A42 is not JSON"),
        (ready_store('{"ready":NaN}'), "artifact A42 is not JSON"),
        (ready_store('\ufeff{"ready":true}'), "artifact A42 is not JSON"),
        (ready_store('{"ready":true}', max_bytes=4), "artifact A42 unreadable: too-large"),
        (ready_store('{"ready":true}', max_reads=0), "artifact A42 unreadable: limit-reached"),
    ],
    ids=["missing", "invalid", "nan", "bom", "too-large", "limit-reached"],
)
def test_missing_unreadable_or_invalid_artifact_is_not_complete(store, reason):
    verdict = check(read_call(SUCCEEDED), store.read)
    assert not verdict.complete
    assert verdict.reason == reason
    assert verdict.feedback == FEEDBACK


def test_invalid_utf8_is_not_json():
    store = Store()
    store.read = lambda id: Artifact(id, "r1", 3, b'"\xff"')
    assert check(read_call(SUCCEEDED), store.read).reason == "artifact A42 is not JSON"
