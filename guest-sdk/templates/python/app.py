"""The component's entry point: exports `verdict:verifier/completion` and
`verdict:verifier/warm-up` (world `warm-completion-checker`).

componentize-py looks for a class named after each exported interface.
Keep this file as generated: the logic is in `verifier.py`.
"""

from wit_world import exports
from wit_world.imports import artifacts
from wit_world.imports.types import Packet, Verdict

import verifier


class Completion(exports.Completion):
    """The completion role, backed by the host's artifacts."""

    def check(self, packet: Packet) -> Verdict:
        return checked(verifier.check(packet, artifacts.read))


class WarmUp(exports.WarmUp):
    """Called by the host once on each fresh instance, before its one check
    (ahead of it when the host keeps instances ready): the interpreter's
    first call into the instance is then off the caller's path. It sees no
    packet; keep nothing from it."""

    def warm(self) -> None:
        pass


def checked(verdict: Verdict) -> Verdict:
    """`verdict`, or a `TypeError` (the host reports a trap) unless it is a
    `Verdict` with a `bool` `complete` and `str` or `None` reason and feedback.

    componentize-py hands the host the truth value of `complete`:
    `Verdict(complete="no", ...)` would be complete.
    """
    if not isinstance(verdict, Verdict):
        raise TypeError(f"check must return a Verdict, not {type(verdict).__name__}")
    if not isinstance(verdict.complete, bool):
        raise TypeError(f"Verdict.complete must be True or False, not {verdict.complete!r}")
    for field in ("reason", "feedback"):
        value = getattr(verdict, field)
        if value is not None and not isinstance(value, str):
            raise TypeError(f"Verdict.{field} must be a str or None, not {value!r}")
    return verdict
