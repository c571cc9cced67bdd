"""`{{name}}`: a verdict completion checker.

Complete only when the model wrote an artifact during this execution (a
`write_artifact` call succeeded: a `status.json` left by an earlier run does
not count) and artifact `status.json` is JSON with `"done": true`; otherwise
not complete, with feedback telling the model what to do. Replace the logic
with your own; `pytest` runs it natively, and on the shipped `examples/`
(see README.md).

`check` takes the artifact reader as an argument: `app.py` hands it the
host's `artifacts.read`, the tests an in-memory one.
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

STATUS_ID = "status.json"
"""The artifact that must say the work is done."""
WRITE_TOOL = "write_artifact"
"""The tool whose successful call shows the model wrote it."""
FEEDBACK = 'Write status.json with "done": true (write_artifact) once the task is finished.'
"""Feedback returned whenever the execution is not complete."""

Reader = Callable[[str], Artifact]
"""`artifacts.read`: returns the artifact or raises `Err(ArtifactError)`."""


def check(packet: Packet, read: Reader) -> Verdict:
    """Decides whether the execution is complete.

    Return a `Verdict` whose `complete` is `True` or `False` (not merely
    truthy) and whose `reason` and `feedback` are `str` or `None`: `app.py`
    refuses anything else.
    """
    if not succeeded(packet, WRITE_TOOL):
        return not_complete("no successful write_artifact call")
    try:
        artifact = read(STATUS_ID)
    except Err as refused:
        if isinstance(refused.value, ArtifactError_NotFound):
            return not_complete("status.json does not exist")
        return not_complete(f"status.json unreadable: {error_code(refused.value)}")
    try:
        status = json.loads(artifact.bytes.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return not_complete("status.json is not JSON")
    # `is True`: 1 == True in Python, but only the JSON literal `true` counts.
    if isinstance(status, dict) and status.get("done") is True:
        return Verdict(complete=True, reason="status.json says done", feedback=None)
    return not_complete("status.json does not say done")


def succeeded(packet: Packet, tool: str) -> bool:
    """True when any call of `tool` has an authentic `succeeded` outcome."""
    return any(
        observation.tool_name == tool
        and observation.outcome is not None
        and observation.outcome.status == OutcomeStatus.SUCCEEDED
        for observation in packet.observations
    )


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
    """Not complete, with the feedback and a reason."""
    return Verdict(complete=False, reason=reason, feedback=FEEDBACK)
