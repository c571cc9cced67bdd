"""LangGraph: a verifier node and the conditional edge after it, which
routes back to the agent with the verifier's feedback until the verifier
confirms, at most `max_recovery_attempts` times (then the graph ends with
`verdict_status` "exhausted").

The state needs `messages` with an appending reducer (LangGraph's
`add_messages`, or `operator.add` for plain OpenAI chat dicts) and the keys
of `VerdictState`. Messages may be LangChain messages or OpenAI chat dicts:
each assistant tool call paired with its tool message is an observation,
the last assistant text is the output.
"""

from __future__ import annotations

import operator
import uuid
from typing import Annotated, Any, Callable, Protocol, TypedDict

from langgraph.graph import END

from ..errors import VerdictError
from ..packet import build_packet, last_assistant_text, observations_from_messages
from ..result import CheckResult

#: Feedback sent when the verifier refused without any.
DEFAULT_FEEDBACK = "The verifier did not confirm that the task is complete."


class Checker(Protocol):
    """What judges a packet: `verdict.Client` or `verdict.BinaryBackend`."""

    def check(self, packet: dict[str, Any]) -> CheckResult: ...


class VerdictState(TypedDict, total=False):
    """The keys the verifier node reads and writes (plain OpenAI chat
    dicts in `messages`; with LangChain messages use `add_messages`)."""

    messages: Annotated[list[Any], operator.add]
    verdict: dict[str, Any]
    verdict_status: str
    recovery_attempts: int
    execution_id: str


def verifier_node(
    checker: Checker,
    *,
    max_recovery_attempts: int = 2,
    effects: dict[str, str] | None = None,
    on_error: str = "closed",
    feedback_message: Callable[[str], Any] | None = None,
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A node that checks the conversation: `verdict_status` becomes
    `complete`, `not_complete` (the feedback is appended to `messages` as a
    user message and `recovery_attempts` counts it) or `exhausted`.
    `on_error`: `closed` treats a verifier error as not complete, `open`
    as complete. `feedback_message` makes the appended message (default an
    OpenAI chat user dict)."""
    if on_error not in ("closed", "open"):
        raise ValueError("on_error must be 'closed' or 'open'")
    make = feedback_message or (lambda text: {"role": "user", "content": text})

    def verify(state: dict[str, Any]) -> dict[str, Any]:
        messages = list(state.get("messages") or [])
        attempts = int(state.get("recovery_attempts") or 0)
        execution_id = state.get("execution_id") or f"langgraph-{uuid.uuid4()}"
        packet = build_packet(
            execution_id,
            last_assistant_text(messages),
            observations_from_messages(messages, effects),
            iteration=attempts + 1,
        )
        try:
            result = checker.check(packet)
            complete, verdict = result.complete, dict(result.raw)
            feedback = result.feedback or result.reason or DEFAULT_FEEDBACK
        except VerdictError as e:
            complete = on_error == "open"
            verdict = {"status": "checker_error", "error": {"code": e.code, "message": e.message}}
            feedback = f"The verifier could not check the answer ({e.code}); try again."
        update: dict[str, Any] = {"verdict": verdict, "execution_id": execution_id}
        if complete:
            update["verdict_status"] = "complete"
        elif attempts >= max_recovery_attempts:
            update["verdict_status"] = "exhausted"
        else:
            update["verdict_status"] = "not_complete"
            update["recovery_attempts"] = attempts + 1
            update["messages"] = [make(feedback)]
        return update

    return verify


def route_after_verdict(agent: str = "agent") -> Callable[[dict[str, Any]], str]:
    """The conditional edge after the verifier node: back to `agent` while
    not complete (with recovery left), else `END`."""

    def route(state: dict[str, Any]) -> str:
        return agent if state.get("verdict_status") == "not_complete" else END

    return route


def add_verifier(
    builder: Any,
    checker: Checker,
    *,
    agent: str = "agent",
    name: str = "verdict",
    **options: Any,
) -> None:
    """Adds the verifier node `name` to a `StateGraph` builder and its
    conditional edge back to `agent` or to the end. Route the agent's final
    answer (no tool calls) to `name`."""
    builder.add_node(name, verifier_node(checker, **options))
    builder.add_conditional_edges(name, route_after_verdict(agent), [agent, END])
