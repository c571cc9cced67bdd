"""LangGraph (the real `langgraph` from PyPI): an agent node calling a
scripted model (`verdict fake-provider`, OpenAI chat wire, through the
`openai` client), a tool node, and the verifier node whose conditional edge
routes back to the agent with the feedback."""

from __future__ import annotations

import json

from langgraph.graph import END, START, StateGraph
from openai import OpenAI

from conftest import ALPHA, always_premature_script, premature_then_read_script
from recording import RequestLog
from verdict import BinaryBackend, Client
from verdict.adapters.langgraph import VerdictState, add_verifier

TASK = "Verify artifact A42 (langgraph)."
FEEDBACK = "Read and verify artifact A42 before finishing."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_artifact",
            "description": "Read an artifact by id.",
            "parameters": {
                "type": "object",
                "properties": {"id": {"type": "string"}},
                "required": ["id"],
            },
        },
    }
]


def build_graph(fake, log: RequestLog, artifacts, checker, max_recovery_attempts: int):
    model = OpenAI(
        base_url=fake.urls["OpenAiChat"], api_key="fake", max_retries=0, http_client=log.client()
    )

    def agent(state: VerdictState) -> dict:
        reply = model.chat.completions.create(
            model="fake-model", messages=state["messages"], tools=TOOLS
        ).choices[0].message
        message: dict = {"role": "assistant", "content": reply.content or ""}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.function.name, "arguments": call.function.arguments},
                }
                for call in reply.tool_calls
            ]
        return {"messages": [message]}

    def tools(state: VerdictState) -> dict:
        out = []
        for call in state["messages"][-1]["tool_calls"]:
            args = json.loads(call["function"]["arguments"])
            out.append(
                {"role": "tool", "tool_call_id": call["id"], "content": (artifacts / args["id"]).read_text()}
            )
        return {"messages": out}

    def after_agent(state: VerdictState) -> str:
        return "tools" if state["messages"][-1].get("tool_calls") else "verdict"

    builder = StateGraph(VerdictState)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", after_agent, ["tools", "verdict"])
    builder.add_edge("tools", "agent")
    add_verifier(
        builder, checker, agent="agent", max_recovery_attempts=max_recovery_attempts,
        effects={"read_artifact": "read"},
    )
    return builder.compile()


def test_the_graph_loops_back_with_the_feedback_until_verified(served, fake_provider, artifacts):
    fake = fake_provider(premature_then_read_script(TASK))
    log = RequestLog()
    alpha = Client(served.base, ALPHA, tenant="alpha")
    graph = build_graph(fake, log, artifacts, alpha, max_recovery_attempts=2)
    final = graph.invoke({"messages": [{"role": "user", "content": TASK}]})
    assert final["verdict_status"] == "complete"
    assert final["recovery_attempts"] == 1
    assert final["verdict"]["verdict"]["reason"] == "artifact A42 is ready"
    assert final["messages"][-1]["content"] == "A42 is verified and ready."
    record = alpha.record(final["verdict"]["checkId"])
    assert [o["toolName"] for o in record["packet"]["observations"]] == ["read_artifact"]
    print("requests:", json.dumps(log.last_messages(), indent=1))
    turns = log.last_messages()
    assert [role for role, _ in turns] == ["user", "user", "tool"]
    assert turns[0][1] == TASK and turns[1][1] == FEEDBACK


def test_the_graph_stops_after_max_recovery_attempts(served, fake_provider, artifacts):
    fake = fake_provider(always_premature_script(TASK, 3))
    log = RequestLog()
    graph = build_graph(fake, log, artifacts, Client(served.base, ALPHA, tenant="alpha"), 2)
    final = graph.invoke({"messages": [{"role": "user", "content": TASK}]})
    assert final["verdict_status"] == "exhausted"
    assert final["recovery_attempts"] == 2
    assert final["verdict"]["status"] == "not_complete"
    # Three answers, two feedback messages: no fourth call to the model.
    assert len(log.bodies) == 3
    assert [m["content"] for m in final["messages"] if m["role"] == "user"] == [TASK, FEEDBACK, FEEDBACK]


def test_the_binary_backend_judges_the_graph_too(verdict_bin, fake_provider, artifacts):
    fake = fake_provider(premature_then_read_script(TASK))
    local = BinaryBackend("builtin:artifact-ready", artifacts=artifacts, binary=verdict_bin)
    graph = build_graph(fake, RequestLog(), artifacts, local, max_recovery_attempts=1)
    final = graph.invoke({"messages": [{"role": "user", "content": TASK}]})
    assert final["verdict_status"] == "complete" and final["recovery_attempts"] == 1
