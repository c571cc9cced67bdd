"""Check packets: the spec's camelCase JSON, built within its bounds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

#: Output text is cut to this many characters (`outputTruncated` then set).
MAX_OUTPUT_CHARS = 32_768
#: At most this many (most recent) observations are carried.
MAX_OBSERVATIONS = 100

EFFECTS = ("read", "write", "unknown")
OUTCOMES = ("succeeded", "failed", "not_started", "unknown")
FAILURES = ("permission", "arguments", "execution", "timeout", "cancelled")


@dataclass(frozen=True)
class Observation:
    """One tool execution: name, call id, declared effect and, when the
    framework reported one, its outcome (`status` None: no outcome)."""

    tool_name: str
    call_id: str
    effect: str = "unknown"
    status: str | None = None
    executed: bool = False
    failure: str | None = None

    def __post_init__(self) -> None:
        if self.effect not in EFFECTS:
            raise ValueError(f"effect must be one of {EFFECTS}, not {self.effect!r}")
        if self.status is not None and self.status not in OUTCOMES:
            raise ValueError(f"status must be one of {OUTCOMES}, not {self.status!r}")
        if self.failure is not None and self.failure not in FAILURES:
            raise ValueError(f"failure must be one of {FAILURES}, not {self.failure!r}")

    @classmethod
    def succeeded(cls, tool_name: str, call_id: str, effect: str = "unknown") -> "Observation":
        """A call that ran and succeeded."""
        return cls(tool_name, call_id, effect, "succeeded", True)

    @classmethod
    def failed(
        cls, tool_name: str, call_id: str, effect: str = "unknown", failure: str = "execution"
    ) -> "Observation":
        """A call that failed (`execution`: it ran and reported an error)."""
        return cls(tool_name, call_id, effect, "failed", failure == "execution", failure)

    def to_json(self) -> dict[str, Any]:
        """The observation as the packet carries it."""
        value: dict[str, Any] = {
            "toolName": self.tool_name,
            "callId": self.call_id,
            "effect": self.effect,
        }
        if self.status is not None:
            outcome: dict[str, Any] = {"status": self.status, "executed": self.executed}
            if self.failure is not None:
                outcome["failure"] = self.failure
            value["outcome"] = outcome
        return value


def build_packet(
    execution_id: str,
    output_text: str,
    observations: Iterable[Observation] = (),
    iteration: int = 1,
) -> dict[str, Any]:
    """A packet within the bounds: the output cut to `MAX_OUTPUT_CHARS`, the
    last `MAX_OBSERVATIONS` observations kept (the flags say so)."""
    observed = list(observations)
    kept = observed[-MAX_OBSERVATIONS:]
    return {
        "executionId": execution_id,
        "iteration": int(iteration),
        "outputText": output_text[:MAX_OUTPUT_CHARS],
        "outputTruncated": len(output_text) > MAX_OUTPUT_CHARS,
        "observations": [o.to_json() for o in kept],
        "observedToolCalls": len(observed),
        "observationsTruncated": len(observed) > len(kept),
    }


def effect_of(name: str, effects: dict[str, str] | None, default: str = "unknown") -> str:
    """A tool's effect from a map of tool names (unknown when not named)."""
    return (effects or {}).get(name, default)


def observations_from_messages(
    messages: Iterable[Any], effects: dict[str, str] | None = None
) -> list[Observation]:
    """Observations from a chat history: each assistant tool call paired with
    its tool message. Takes OpenAI chat dicts (`role`, `tool_calls`,
    `tool_call_id`) and LangChain messages (`type` "ai"/"tool", `tool_calls`,
    `tool_call_id`, `status` "error"). A call with no result has no outcome."""
    calls: list[tuple[str, str]] = []
    results: dict[str, bool] = {}
    for message in messages:
        role = _field(message, "role") or _field(message, "type")
        if role in ("assistant", "ai"):
            for call in _field(message, "tool_calls") or []:
                call_id = _field(call, "id") or ""
                name = _field(call, "name") or _field(_field(call, "function") or {}, "name")
                calls.append((str(name or ""), str(call_id)))
        elif role == "tool":
            call_id = str(_field(message, "tool_call_id") or "")
            results[call_id] = _field(message, "status") != "error"
    out = []
    for name, call_id in calls:
        effect = effect_of(name, effects)
        if call_id not in results:
            out.append(Observation(name, call_id, effect))
        elif results[call_id]:
            out.append(Observation.succeeded(name, call_id, effect))
        else:
            out.append(Observation.failed(name, call_id, effect))
    return out


def last_assistant_text(messages: Iterable[Any]) -> str:
    """The text of the last assistant message (empty when none)."""
    text = ""
    for message in messages:
        role = _field(message, "role") or _field(message, "type")
        if role in ("assistant", "ai"):
            content = _field(message, "content")
            if isinstance(content, list):
                content = "".join(
                    str(_field(part, "text") or "") for part in content if part is not None
                )
            text = str(content or "")
    return text


def _field(value: Any, name: str) -> Any:
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)
