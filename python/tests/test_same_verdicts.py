"""One verifier, one story, every framework: the served `artifact-ready`
judges the OpenAI Agents SDK, LangGraph and verdict's own loop (`verdict
run`, its completion checker the same served tenant) on the same scripted
model, with the same verdicts. Prints the table."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess

from conftest import ALPHA, premature_then_read_script
from recording import RequestLog
from test_langgraph import build_graph
from test_openai_agents import make_agent
from verdict import Client
from verdict.adapters.openai_agents import VerdictJudge, run_until_verified

TASK = "Verify artifact A42 (all frameworks)."


def openai_agents_row(served, fake_provider, artifacts):
    fake = fake_provider(premature_then_read_script(TASK))
    judge = VerdictJudge(Client(served.base, ALPHA, tenant="alpha"), effects={"read_artifact": "read"})
    run = asyncio.run(
        run_until_verified(make_agent(fake, RequestLog(), artifacts), TASK, judge=judge)
    )
    return [v.reason for v in run.verdicts], run.recovery_attempts, run.result.final_output


def langgraph_row(served, fake_provider, artifacts):
    fake = fake_provider(premature_then_read_script(TASK))
    reasons = []
    alpha = Client(served.base, ALPHA, tenant="alpha")

    class Recording:
        def check(self, packet):
            result = alpha.check(packet)
            reasons.append(result.reason)
            return result

    graph = build_graph(fake, RequestLog(), artifacts, Recording(), max_recovery_attempts=2)
    final = graph.invoke({"messages": [{"role": "user", "content": TASK}]})
    return reasons, final["recovery_attempts"], final["messages"][-1]["content"]


def loop_row(served, fake_provider, artifacts, verdict_bin, tmp_path):
    fake = fake_provider(premature_then_read_script(TASK))
    config = tmp_path / "loop.toml"
    config.write_text(
        f"""[connectors.fake]
protocol = "openai-chat"
base_url = "{fake.urls['OpenAiChat']}"
no_api_key = true

[agent]
connector = "fake"
model = "fake-model"

[tools]
workspace = "{artifacts}"
builtin = ["read_artifact"]

[loop_policy]
max_recovery_attempts = 2

[tenants.alpha]
artifact_root = "{artifacts}"
completion = {{ url = "{served.base}/v1/tenants/alpha", token_env = "VERDICT_TOKEN" }}
"""
    )
    done = subprocess.run(
        [verdict_bin, "run", "--config", str(config), "--tenant", "alpha", "--json", TASK],
        capture_output=True, text=True, timeout=120,
        env={"VERDICT_TOKEN": ALPHA, "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    reasons = re.findall(r"\[verdict\] verdict: \w+ \([^)]*\) - (.*)", done.stderr)
    return reasons, summary["recovery"]["used"], summary["output"]


def test_the_same_verifier_gives_the_same_verdicts_everywhere(
    served, fake_provider, artifacts, verdict_bin, tmp_path
):
    rows = {
        "openai-agents": openai_agents_row(served, fake_provider, artifacts),
        "langgraph": langgraph_row(served, fake_provider, artifacts),
        "verdict run": loop_row(served, fake_provider, artifacts, verdict_bin, tmp_path),
    }
    print()
    print(f"{'framework':<14} | {'verdicts (reasons, in order)':<62} | recoveries | final output")
    for name, (reasons, recoveries, output) in rows.items():
        print(f"{name:<14} | {' -> '.join(reasons):<62} | {recoveries:<10} | {output}")
    expected = (
        ["no successful read_artifact call", "artifact A42 is ready"],
        1,
        "A42 is verified and ready.",
    )
    for name, row in rows.items():
        assert tuple(row) == expected, name
