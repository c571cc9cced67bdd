"""The OpenAI Agents SDK (`openai-agents`): a run hook that records the
run's tool calls, an output guardrail that asks the verifier about the final
output, and `run_until_verified`, which reruns with the verifier's feedback.

What the SDK itself lets reject-and-continue: only *tool* guardrails
(`reject_content` sends a message to the model and the run goes on). An
*output* guardrail can only halt the run: a tripped tripwire raises
`OutputGuardrailTripwireTriggered`. So the guardrail here refuses the
premature answer, and `run_until_verified` is what continues: it catches
the exception and runs again on the same conversation (the refused run's
input and items) plus the verifier's feedback as a user message, at most
`max_recovery_attempts` times.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from agents import (
    Agent,
    GuardrailFunctionOutput,
    OutputGuardrail,
    OutputGuardrailTripwireTriggered,
    RunContextWrapper,
    RunHooks,
    Runner,
    RunResult,
    Tool,
)

from ..errors import RecoveryExhausted, VerdictError
from ..packet import Observation, build_packet, effect_of
from ..result import CheckResult

#: Feedback sent when the verifier refused without any.
DEFAULT_FEEDBACK = "The verifier did not confirm that the task is complete."


class Checker(Protocol):
    """What judges a packet: `verdict.Client` or `verdict.BinaryBackend`."""

    def check(self, packet: dict[str, Any]) -> CheckResult: ...


class _Hooks(RunHooks[Any]):
    def __init__(self, judge: "VerdictJudge") -> None:
        self.judge = judge

    async def on_tool_start(self, context: RunContextWrapper[Any], agent: Any, tool: Tool) -> None:
        self.judge._started(_call_id(context, self.judge), tool.name)

    async def on_tool_end(
        self, context: RunContextWrapper[Any], agent: Any, tool: Tool, result: object
    ) -> None:
        self.judge._ended(_call_id(context, self.judge), tool.name)


def _call_id(context: Any, judge: "VerdictJudge") -> str:
    found = getattr(context, "tool_call_id", None)
    return str(found) if found else f"call-{len(judge.observations)}"


class VerdictJudge:
    """The verifier as an Agents SDK judge for one execution: pass `hooks`
    to `Runner.run` and put `guardrail` in the agent's `output_guardrails`.
    `effects` maps tool names to `read`/`write` (others: `unknown`).
    `on_error`: `closed` (default: a verifier error trips the guardrail) or
    `open` (it lets the output through)."""

    def __init__(
        self,
        checker: Checker,
        *,
        effects: dict[str, str] | None = None,
        execution_id: str | None = None,
        on_error: str = "closed",
    ) -> None:
        if on_error not in ("closed", "open"):
            raise ValueError("on_error must be 'closed' or 'open'")
        self.checker = checker
        self.effects = dict(effects or {})
        self.execution_id = execution_id or f"openai-agents-{uuid.uuid4()}"
        self.on_error = on_error
        self.iteration = 0
        self.observations: list[Observation] = []
        self._open: dict[str, int] = {}
        self.results: list[CheckResult | VerdictError] = []
        self.hooks: RunHooks[Any] = _Hooks(self)
        self.guardrail: OutputGuardrail[Any] = OutputGuardrail(
            guardrail_function=self._guard, name="verdict"
        )

    def packet(self, output_text: str) -> dict[str, Any]:
        """The packet of the execution so far with `output_text` as its output."""
        return build_packet(self.execution_id, output_text, self.observations, self.iteration)

    def _started(self, call_id: str, name: str) -> None:
        self._open[call_id] = len(self.observations)
        self.observations.append(Observation(name, call_id, effect_of(name, self.effects)))

    def _ended(self, call_id: str, name: str) -> None:
        index = self._open.pop(call_id, None)
        done = Observation.succeeded(name, call_id, effect_of(name, self.effects))
        if index is None:
            self.observations.append(done)
        else:
            self.observations[index] = done

    async def _guard(
        self, context: RunContextWrapper[Any], agent: Agent[Any], output: Any
    ) -> GuardrailFunctionOutput:
        self.iteration += 1
        packet = self.packet(output if isinstance(output, str) else str(output))
        try:
            result = self.checker.check(packet)
        except VerdictError as e:
            self.results.append(e)
            return GuardrailFunctionOutput(output_info=e, tripwire_triggered=self.on_error == "closed")
        self.results.append(result)
        return GuardrailFunctionOutput(output_info=result, tripwire_triggered=not result.complete)


@dataclass
class VerifiedRun:
    """A run the verifier confirmed: the SDK's result, the recovery attempts
    it took and every answer of the verifier, in order."""

    result: RunResult
    recovery_attempts: int
    verdicts: list[Any] = field(default_factory=list)


def feedback_of(info: Any) -> str:
    """The message a refusal sends back to the model."""
    if isinstance(info, CheckResult):
        return info.feedback or info.reason or DEFAULT_FEEDBACK
    if isinstance(info, VerdictError):
        return f"The verifier could not check the answer ({info.code}); try again."
    return DEFAULT_FEEDBACK


async def run_until_verified(
    agent: Agent[Any],
    input: str | list[Any],
    *,
    judge: VerdictJudge,
    max_recovery_attempts: int = 2,
    **runner_kwargs: Any,
) -> VerifiedRun:
    """Runs `agent` until the verifier confirms: each refusal (the judge's
    guardrail tripped) is followed by a run on the same conversation plus
    the feedback, at most `max_recovery_attempts` times; then
    `RecoveryExhausted` (with the last answer). The judge's guardrail is
    added to the agent when it lacks it."""
    if judge.guardrail not in agent.output_guardrails:
        agent = agent.clone(output_guardrails=[*agent.output_guardrails, judge.guardrail])
    attempts = 0
    while True:
        try:
            result = await Runner.run(agent, input, hooks=judge.hooks, **runner_kwargs)
            return VerifiedRun(result, attempts, list(judge.results))
        except OutputGuardrailTripwireTriggered as refused:
            if refused.guardrail_result.guardrail is not judge.guardrail:
                raise
            info = refused.guardrail_result.output.output_info
            if attempts >= max_recovery_attempts:
                raise RecoveryExhausted(attempts, info) from refused
            attempts += 1
            input = _conversation(refused, input) + [
                {"role": "user", "content": feedback_of(info)}
            ]


def _conversation(refused: OutputGuardrailTripwireTriggered, input: Any) -> list[Any]:
    data = refused.run_data
    start = data.input if data is not None else input
    items = list(data.new_items) if data is not None else []
    start_items = [{"role": "user", "content": start}] if isinstance(start, str) else list(start)
    return start_items + [item.to_input_item() for item in items]
