"""One verifier, one story, every framework: the served `artifact-ready`
judges the OpenAI Agents SDK, LangGraph, the real Claude Code (its `Stop`
hook `verdict hook claude-code`, when `$VERDICT_CLAUDE_BIN` names it) and
verdict's own loop (`verdict run`), each asking the same served tenant, on
the same scripted model, with the same verdicts. Prints the table."""

from __future__ import annotations

import asyncio
import json
import os
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


def claude_code_script(a42) -> dict:
    """The same story on the Anthropic wire, in Claude Code's own tools: its
    `Read` on A42's file. (Claude Code's first user message opens with its
    own context blocks, so this fake serves this conversation alone.)"""
    script = premature_then_read_script(TASK)
    del script["conversations"][0]["first_user_contains"]
    read = script["conversations"][0]["turns"][1]["action"]["reply"]
    read["tool_calls"] = [{"id": "toolu_1", "name": "Read", "arguments": {"file_path": str(a42)}}]
    script["conversations"][0]["turns"][2]["when"]["call_id"] = "toolu_1"
    return script


def claude_code_row(served, fake_provider, artifacts, verdict_bin, claude, tmp_path):
    """The real Claude Code in print mode, its `Stop` hook installed from
    `--print-settings` (the hook's notes on stderr kept in a log)."""
    tmp_path.mkdir()
    fake = fake_provider(claude_code_script(artifacts / "A42"))
    config = tmp_path / "hook.toml"
    config.write_text(
        f"""[loop_policy]
max_recovery_attempts = 2

[tenants.alpha]
artifact_root = "{artifacts}"
completion = {{ url = "{served.base}/v1/tenants/alpha", token_env = "VERDICT_TOKEN" }}

[claude_code.tools.Read]
name = "read_artifact"
"""
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "VERDICT_CACHE_DIR": str(tmp_path / "cache"),
        "VERDICT_TOKEN": ALPHA,
        "ANTHROPIC_BASE_URL": fake.urls["Anthropic"].removesuffix("/v1"),
        "ANTHROPIC_API_KEY": "sk-fake-not-secret",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
    }
    (tmp_path / "home").mkdir()
    printed = subprocess.run(
        [verdict_bin, "hook", "claude-code", "--config", str(config), "--print-settings"],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert printed.returncode == 0, printed.stderr
    settings = json.loads(printed.stdout)
    notes = tmp_path / "hook-notes.log"
    for event in settings["hooks"].values():
        for hook in event[0]["hooks"]:
            hook["command"] += f" 2>>{notes}"
    (tmp_path / "settings.json").write_text(json.dumps(settings))
    done = subprocess.run(
        [claude, "-p", TASK, "--output-format", "json", "--model", "claude-sonnet-4-5",
         "--settings", str(tmp_path / "settings.json")],
        capture_output=True, text=True, timeout=300, env=env, cwd=artifacts.parent,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    answer = json.loads(done.stdout)
    lines = notes.read_text().splitlines()
    reasons = [
        m.group(1)
        for m in (re.match(r"verdict: (?:not )?complete - (.*?)(?: \(blocking the stop, .*)?$", l) for l in lines)
        if m
    ]
    blocks = sum("(blocking the stop," in l for l in lines)
    return reasons, blocks, answer["result"]


def test_the_same_verifier_gives_the_same_verdicts_everywhere(
    served, fake_provider, artifacts, verdict_bin, tmp_path
):
    rows = {
        "openai-agents": openai_agents_row(served, fake_provider, artifacts),
        "langgraph": langgraph_row(served, fake_provider, artifacts),
        "verdict run": loop_row(served, fake_provider, artifacts, verdict_bin, tmp_path),
    }
    claude = os.environ.get("VERDICT_CLAUDE_BIN")
    if claude:
        rows["claude code"] = claude_code_row(
            served, fake_provider, artifacts, verdict_bin, claude, tmp_path / "claude"
        )
    else:
        assert os.environ.get("VERDICT_REQUIRE_CLAUDE_CODE") != "1", "VERDICT_CLAUDE_BIN is not set"
        print("(no Claude Code row: VERDICT_CLAUDE_BIN is not set)")
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
