"""`BinaryBackend`: the same checks in-process through the `verdict` binary
(`verdict check --json`), no server needed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from typing import Any

from .errors import BackendError
from .result import CheckResult


class BinaryBackend:
    """Runs `verdict check --verifier VERIFIER --packet FILE --json` per
    check. `binary`: the path of `verdict` (default: `$VERDICT_BIN`, else
    `verdict` on `PATH`)."""

    def __init__(
        self,
        verifier: str,
        *,
        artifacts: str | os.PathLike[str] | None = None,
        tenant: str | None = None,
        binary: str | None = None,
        timeout: float = 60.0,
        extra_args: list[str] | None = None,
    ) -> None:
        found = binary or os.environ.get("VERDICT_BIN") or shutil.which("verdict")
        if not found:
            raise BackendError("no_binary", "no verdict binary: pass binary= or set VERDICT_BIN")
        self.binary = str(found)
        self.verifier = verifier
        self.artifacts = artifacts
        self.tenant = tenant
        self.timeout = timeout
        self.extra_args = list(extra_args or [])

    def check(self, packet: dict[str, Any]) -> CheckResult:
        """The completion check of `packet`."""
        return CheckResult.from_json(self._run(packet, []))

    def progress(self, packet: dict[str, Any]) -> str:
        """The progress key of `packet`."""
        result = CheckResult.from_json(self._run(packet, ["--progress"]))
        if result.progress_key is None:
            raise BackendError("bad_answer", "the answer carries no progressKey")
        return result.progress_key

    def _run(self, packet: dict[str, Any], extra: list[str]) -> Any:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "packet.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(packet, f)
            args = [self.binary, "check", "--verifier", self.verifier, "--packet", path, "--json"]
            if self.artifacts is not None:
                args += ["--artifacts", os.fspath(self.artifacts)]
            if self.tenant is not None:
                args += ["--tenant", self.tenant]
            args += self.extra_args + extra
            try:
                done = subprocess.run(
                    args, capture_output=True, text=True, timeout=self.timeout, check=False
                )
            except (OSError, subprocess.TimeoutExpired) as e:
                raise BackendError("backend_failed", f"{self.binary}: {e}") from e
        try:
            return json.loads(done.stdout)
        except ValueError:
            raise BackendError(
                f"exit_{done.returncode}", done.stderr.strip() or "no answer on stdout"
            ) from None
