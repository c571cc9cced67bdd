"""What a check answers: `CheckResult`, the same for the server and the binary."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import CheckerError, TransportError

#: The statuses an answer carries.
STATUSES = ("complete", "not_complete", "progress_key", "checker_error")


@dataclass(frozen=True)
class CheckResult:
    """One check's answer (`verdict check --json`'s object; from the server
    also `checkId` and `witVersion`)."""

    status: str
    tenant: str
    verifier_digest: str
    verdict: dict[str, Any] | None = None
    progress_key: str | None = None
    error: dict[str, Any] | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    check_id: str | None = None
    wit_version: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def complete(self) -> bool:
        """True when the verifier confirmed completion."""
        return self.status == "complete"

    @property
    def feedback(self) -> str | None:
        """The verifier's feedback for the agent, when not complete."""
        return (self.verdict or {}).get("feedback")

    @property
    def reason(self) -> str | None:
        """The verifier's reason (for operators, not the model)."""
        return (self.verdict or {}).get("reason")

    @classmethod
    def from_json(cls, value: Any) -> "CheckResult":
        """Parses an answer; raises `CheckerError` for a `checker_error` answer."""
        if not isinstance(value, dict) or value.get("status") not in STATUSES:
            raise TransportError("bad_answer", f"not a check answer: {value!r:.200}")
        result = cls(
            status=value["status"],
            tenant=str(value.get("tenant", "")),
            verifier_digest=str(value.get("verifierDigest", "")),
            verdict=value.get("verdict"),
            progress_key=value.get("progressKey"),
            error=value.get("error"),
            metrics=value.get("metrics") or {},
            check_id=value.get("checkId"),
            wit_version=value.get("witVersion"),
            raw=value,
        )
        if result.status == "checker_error":
            error = result.error or {}
            raise CheckerError(
                str(error.get("code", "checker_error")),
                str(error.get("message", "the verifier failed")),
                result,
            )
        return result
