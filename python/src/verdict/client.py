"""`Client`: the HTTP API of `verdict serve`, standard library only."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from .errors import ApiError, TransportError
from .result import CheckResult

#: Answers larger than this are refused (a verdict is at most 16 KiB).
MAX_ANSWER_BYTES = 1024 * 1024


class Client:
    """A tenant's client: `Client(base, token, tenant=...)`. `base` is the
    server (`http://127.0.0.1:8700`) or a tenant's URL
    (`http://127.0.0.1:8700/v1/tenants/acme`, as the loop's `url` takes it)."""

    def __init__(
        self,
        base: str,
        token: str | None = None,
        tenant: str | None = None,
        *,
        timeout: float = 30.0,
        deadline_ms: int | None = None,
    ) -> None:
        base = base.rstrip("/")
        marker = "/v1/tenants/"
        if marker in base:
            base, _, named = base.partition(marker)
            tenant = tenant or named.strip("/")
        if not tenant:
            raise ValueError("a tenant is needed: pass tenant= or a /v1/tenants/NAME URL")
        self.base = base
        self.tenant = tenant
        self.token = token
        self.timeout = timeout
        self.deadline_ms = deadline_ms

    def check(self, packet: dict[str, Any], *, deadline_ms: int | None = None) -> CheckResult:
        """The tenant's completion check of `packet` (raises `CheckerError`
        when the verifier failed, `ApiError` when the server refused)."""
        return CheckResult.from_json(
            self._request("POST", "completion", packet, deadline_ms or self.deadline_ms)
        )

    def progress(self, packet: dict[str, Any], *, deadline_ms: int | None = None) -> str:
        """The tenant's progress key of `packet`."""
        result = CheckResult.from_json(
            self._request("POST", "progress", packet, deadline_ms or self.deadline_ms)
        )
        if result.progress_key is None:
            raise TransportError("bad_answer", "the answer carries no progressKey")
        return result.progress_key

    def record(self, check_id: str) -> dict[str, Any]:
        """The record of one of the tenant's checks (tenants with `record_dir`)."""
        return self._request("GET", "checks/" + urllib.parse.quote(check_id, safe=""))

    def verifiers(self) -> dict[str, Any]:
        """The tenant's verifiers (roles, digests) and limits."""
        return self._request("GET", "verifiers")

    def _request(
        self, method: str, route: str, body: Any = None, deadline_ms: int | None = None
    ) -> Any:
        url = f"{self.base}/v1/tenants/{urllib.parse.quote(self.tenant, safe='')}/{route}"
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        if deadline_ms is not None:
            headers["X-Verdict-Deadline-Ms"] = str(int(deadline_ms))
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                return _json(answer.read(MAX_ANSWER_BYTES + 1))
        except urllib.error.HTTPError as refused:
            raise _api_error(refused) from None
        except (urllib.error.URLError, OSError) as e:
            raise TransportError("unreachable", f"{url}: {e}") from e


def _json(body: bytes) -> Any:
    if len(body) > MAX_ANSWER_BYTES:
        raise TransportError("answer_too_large", f"over {MAX_ANSWER_BYTES} bytes")
    try:
        return json.loads(body)
    except ValueError as e:
        raise TransportError("bad_answer", f"not JSON: {e}") from e


def _api_error(refused: urllib.error.HTTPError) -> ApiError:
    retry = refused.headers.get("Retry-After") if refused.headers else None
    try:
        body = json.loads(refused.read(MAX_ANSWER_BYTES))
        code, message = str(body["code"]), str(body["message"])
    except (ValueError, KeyError, TypeError, OSError):
        code, message = f"http_{refused.code}", str(refused.reason)
    try:
        retry_after = float(retry) if retry is not None else None
    except ValueError:
        retry_after = None
    return ApiError(refused.code, code, message, retry_after)
