"""The OpenAI Agents SDK (the real `openai-agents` from PyPI) on a scripted
model (`verdict fake-provider`, OpenAI Chat Completions wire), judged by a
served verifier."""

from __future__ import annotations

import asyncio
import json

import pytest
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    OutputGuardrailTripwireTriggered,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

from conftest import ALPHA, always_premature_script, premature_then_read_script
from recording import RequestLog
from verdict import Client, RecoveryExhausted
from verdict.adapters.openai_agents import VerdictJudge, run_until_verified

set_tracing_disabled(True)
TASK = "Verify artifact A42 (openai-agents)."
FEEDBACK = "Read and verify artifact A42 before finishing."


def make_agent(fake, log: RequestLog, artifacts) -> Agent:
    @function_tool
    def read_artifact(id: str) -> str:
        """Read an artifact by id."""
        return (artifacts / id).read_text()

    client = AsyncOpenAI(
        base_url=fake.urls["OpenAiChat"], api_key="fake", max_retries=0,
        http_client=log.async_client(),
    )
    return Agent(
        name="checker",
        instructions="Verify the artifact the user names.",
        tools=[read_artifact],
        model=OpenAIChatCompletionsModel(model="fake-model", openai_client=client),
    )


def test_the_guardrail_trips_on_a_premature_done(served, fake_provider, artifacts):
    fake = fake_provider(premature_then_read_script(TASK))
    log = RequestLog()
    judge = VerdictJudge(Client(served.base, ALPHA, tenant="alpha"), effects={"read_artifact": "read"})
    agent = make_agent(fake, log, artifacts).clone(output_guardrails=[judge.guardrail])
    with pytest.raises(OutputGuardrailTripwireTriggered) as tripped:
        asyncio.run(Runner.run(agent, TASK, hooks=judge.hooks))
    result = tripped.value.guardrail_result.output.output_info
    assert result.status == "not_complete" and result.feedback == FEEDBACK
    assert judge.observations == []
    assert len(log.bodies) == 1


def test_the_rerun_finishes_after_the_model_reads(served, fake_provider, artifacts):
    fake = fake_provider(premature_then_read_script(TASK))
    log = RequestLog()
    alpha = Client(served.base, ALPHA, tenant="alpha")
    judge = VerdictJudge(alpha, effects={"read_artifact": "read"})
    run = asyncio.run(
        run_until_verified(make_agent(fake, log, artifacts), TASK, judge=judge, max_recovery_attempts=2)
    )
    assert run.result.final_output == "A42 is verified and ready."
    assert run.recovery_attempts == 1
    assert [v.status for v in run.verdicts] == ["not_complete", "complete"]
    # The packet the verifier confirmed carries the SDK's own tool call.
    assert [(o.tool_name, o.effect, o.status) for o in judge.observations] == [
        ("read_artifact", "read", "succeeded")
    ]
    assert alpha.record(run.verdicts[-1].check_id)["packet"]["observations"][0]["callId"] == "call_1"
    # The fake saw three turns: the task, the feedback, the tool's result.
    print("requests:", json.dumps(log.last_messages(), indent=1))
    turns = log.last_messages()
    assert [role for role, _ in turns] == ["user", "user", "tool"]
    assert turns[0][1] == TASK and turns[1][1] == FEEDBACK
    assert json.loads(turns[2][1])["ready"] is True


def test_recovery_is_bounded(served, fake_provider, artifacts):
    fake = fake_provider(always_premature_script(TASK, 3))
    log = RequestLog()
    judge = VerdictJudge(Client(served.base, ALPHA, tenant="alpha"))
    with pytest.raises(RecoveryExhausted) as exhausted:
        asyncio.run(
            run_until_verified(make_agent(fake, log, artifacts), TASK, judge=judge, max_recovery_attempts=2)
        )
    assert exhausted.value.code == "recovery_exhausted" and exhausted.value.attempts == 2
    assert exhausted.value.result.status == "not_complete"
    assert [role for role, _ in log.last_messages()] == ["user", "user", "user"]
    assert len(log.bodies) == 3


def test_a_verifier_error_fails_closed_unless_open(fake_provider, artifacts):
    unreachable = Client("http://127.0.0.1:9", ALPHA, tenant="alpha", timeout=5)
    fake = fake_provider(always_premature_script(TASK, 2))
    closed = VerdictJudge(unreachable)
    opened = VerdictJudge(unreachable, on_error="open")
    agent = make_agent(fake, RequestLog(), artifacts)

    async def both():
        with pytest.raises(OutputGuardrailTripwireTriggered):
            await Runner.run(agent.clone(output_guardrails=[closed.guardrail]), TASK, hooks=closed.hooks)
        return await Runner.run(agent.clone(output_guardrails=[opened.guardrail]), TASK, hooks=opened.hooks)

    result = asyncio.run(both())
    assert closed.results[0].code == "unreachable"
    assert result.final_output == "Done (1)."
    assert opened.results[0].code == "unreachable"
