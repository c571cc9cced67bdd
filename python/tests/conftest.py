"""Fixtures: a `verdict serve` on loopback with two tenants and a scripted
model (`verdict fake-provider`), both the real binary from `$VERDICT_BIN`."""

from __future__ import annotations

import hashlib
import json
import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import Iterator

import pytest

ALPHA = "alpha-token-7c1e0b5a9d2f4e6a8b3c5d7e9f1a2b4c"
BETA = "beta-token-0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c"
START_SECS = 120


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@pytest.fixture(scope="session")
def verdict_bin() -> str:
    path = os.environ.get("VERDICT_BIN")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("VERDICT_BIN must name the verdict binary")
    return path


class Process:
    """A child process whose stdout/stderr lines are read on a thread."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.lines: "queue.Queue[str]" = queue.Queue()
        self.log: list[str] = []
        self.child = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **(env or {})},
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.child.stdout is not None
        for line in self.child.stdout:
            self.log.append(line)
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, prefix: str) -> str:
        """The rest of the first line starting with `prefix`."""
        while True:
            try:
                line = self.lines.get(timeout=START_SECS)
            except queue.Empty:
                self.stop()
                raise AssertionError(f"no {prefix!r} line: {''.join(self.log)}") from None
            if line.startswith(prefix):
                return line[len(prefix) :]

    def stop(self) -> None:
        self.child.terminate()
        try:
            self.child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.child.kill()
            self.child.wait()


class Served:
    def __init__(self, base: str, root: Path) -> None:
        self.base = base
        self.root = root


@pytest.fixture(scope="session")
def served(verdict_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`verdict serve`: tenant alpha (A42 ready, records kept) and beta (A42
    not ready, a progress verifier too)."""
    root = tmp_path_factory.mktemp("served")
    for tenant, ready in (("alpha", True), ("beta", False)):
        (root / tenant).mkdir()
        (root / tenant / "A42").write_text(json.dumps({"id": "A42", "ready": ready}))
    (root / "verdict.toml").write_text(
        f"""[server]

[tenants.alpha]
artifact_root = "alpha"
completion = "builtin:artifact-ready"
token_hash = "{_hash(ALPHA)}"
record_dir = "records"

[tenants.beta]
artifact_root = "beta"
completion = "builtin:artifact-ready"
progress = "builtin:revision-progress"
token_hash = "{_hash(BETA)}"
"""
    )
    server = Process(
        [verdict_bin, "serve", "--config", str(root / "verdict.toml"), "--listen", "127.0.0.1:0"],
        env={"VERDICT_CACHE_DIR": str(root / "cache")},
    )
    addr = server.wait_for("verdict serve: listening on ")
    yield Served(f"http://{addr}", root)
    server.stop()


class Fake:
    """A `verdict fake-provider` and its base URLs by protocol."""

    def __init__(self, process: Process, urls: dict[str, str]) -> None:
        self.process = process
        self.urls = urls


@pytest.fixture
def fake_provider(verdict_bin: str, tmp_path: Path) -> Iterator:
    """Starts `verdict fake-provider` on a script (a dict); stopped after the test."""
    started: list[Process] = []

    def start(script: dict) -> Fake:
        path = tmp_path / f"script-{len(started)}.json"
        path.write_text(json.dumps(script))
        process = Process([verdict_bin, "fake-provider", "--script", str(path)])
        started.append(process)
        urls = {}
        while len(urls) < 4:
            protocol, _, url = process.wait_for("").partition(" ")
            urls[protocol] = url
        return Fake(process, urls)

    yield start
    for process in started:
        process.stop()


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    """An artifact root where A42 is ready (what the model's tool reads)."""
    root = tmp_path / "artifacts"
    root.mkdir()
    (root / "A42").write_text(json.dumps({"id": "A42", "ready": True}))
    return root


def premature_then_read_script(first_user: str) -> dict:
    """The story: "ready" without reading; after the feedback a read of A42;
    after its result "ready" again."""
    return {
        "conversations": [
            {
                "first_user_contains": first_user,
                "turns": [
                    {"action": {"reply": {"text": "Done! A42 is ready."}}},
                    {
                        "when": {"kind": "last_user_contains", "text": "Read and verify"},
                        "action": {
                            "reply": {
                                "text": "Reading the artifact.",
                                "tool_calls": [
                                    {"id": "call_1", "name": "read_artifact", "arguments": {"id": "A42"}}
                                ],
                            }
                        },
                    },
                    {
                        "when": {"kind": "last_is_tool_result", "call_id": "call_1"},
                        "action": {"reply": {"text": "A42 is verified and ready."}},
                    },
                ],
            }
        ]
    }


def always_premature_script(first_user: str, turns: int) -> dict:
    """A model that claims "done" every time and never reads."""
    return {
        "conversations": [
            {
                "first_user_contains": first_user,
                "turns": [{"action": {"reply": {"text": f"Done ({i})."}}} for i in range(turns)],
            }
        ]
    }
