"""`artifact-ready` in Python: the spec's example completion checker.

Complete only when a `read_artifact` call succeeded and artifact `A42` is
JSON with `"ready": true`; otherwise not complete, with the feedback
`FEEDBACK` and a reason naming what is missing. Same verdicts as the Rust
sample in `sample-verifiers/artifact-ready`.

This module is the whole logic. It takes the artifact reader as an
argument, so `test_artifact_ready.py` runs it natively with an in-memory
reader; `app.py` hands it the host's `artifacts.read` import.
"""

import json
from typing import Callable

from componentize_py_types import Err
from wit_world.imports.artifacts import (
    Artifact,
    ArtifactError,
    ArtifactError_Denied,
    ArtifactError_LimitReached,
    ArtifactError_NotFound,
    ArtifactError_TooLarge,
)
from wit_world.imports.types import OutcomeStatus, Packet, Verdict

ARTIFACT_ID = "A42"
"""The artifact that must be ready."""
READ_TOOL = "read_artifact"
"""The tool whose successful call proves the model read the artifact."""
FEEDBACK = "Read and verify artifact A42 before finishing."
"""Feedback returned whenever the execution is not complete."""

Reader = Callable[[str], Artifact]
"""`artifacts.read`: returns the artifact or raises `Err(ArtifactError)`."""


def check(packet: Packet, read: Reader) -> Verdict:
    """Decides whether the execution is complete."""
    if not succeeded(packet, READ_TOOL):
        return not_complete("no successful read_artifact call")
    try:
        artifact = read(ARTIFACT_ID)
    except Err as refused:
        if isinstance(refused.value, ArtifactError_NotFound):
            return not_complete("artifact A42 does not exist")
        return not_complete(f"artifact A42 unreadable: {error_code(refused.value)}")
    document = parse_json(artifact.bytes)
    if document is None:
        return not_complete("artifact A42 is not JSON")
    # `is True`: 1 == True in Python, but only the JSON literal `true` counts.
    if isinstance(document, dict) and document.get("ready") is True:
        return Verdict(complete=True, reason="artifact A42 is ready", feedback=None)
    return not_complete("artifact A42 is not ready")


def succeeded(packet: Packet, tool: str) -> bool:
    """True when any call of `tool` has an authentic `succeeded` outcome."""
    return any(
        observation.tool_name == tool
        and observation.outcome is not None
        and observation.outcome.status == OutcomeStatus.SUCCEEDED
        for observation in packet.observations
    )


def parse_json(data: bytes) -> object | None:
    """The document as JSON, or None unless it is strict UTF-8 JSON.

    Stricter than `json.loads(bytes)`, like the Rust SDK: no UTF-16/32
    detection, no byte order mark, no `NaN`/`Infinity`.
    """
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def error_code(error: ArtifactError) -> str:
    """The WIT spelling of an artifact error (`too-large`, ...)."""
    match error:
        case ArtifactError_NotFound():
            return "not-found"
        case ArtifactError_Denied():
            return "denied"
        case ArtifactError_TooLarge():
            return "too-large"
        case ArtifactError_LimitReached():
            return "limit-reached"
    return "unknown"


def not_complete(reason: str) -> Verdict:
    """Not complete, with the fixed feedback and a reason."""
    return Verdict(complete=False, reason=reason, feedback=FEEDBACK)
