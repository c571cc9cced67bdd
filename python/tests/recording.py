"""A request log of what the SDKs sent to the fake provider: an httpx2
client (the transport of `openai`) whose request hook keeps each body."""

from __future__ import annotations

import json
from typing import Any

import httpx2


class RequestLog:
    """The JSON bodies of the requests, in order."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def _keep(self, request: httpx2.Request) -> None:
        self.bodies.append(json.loads(request.content or b"{}"))

    async def _keep_async(self, request: httpx2.Request) -> None:
        self._keep(request)

    def client(self) -> httpx2.Client:
        return httpx2.Client(event_hooks={"request": [self._keep]}, timeout=60)

    def async_client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(event_hooks={"request": [self._keep_async]}, timeout=60)

    def last_messages(self) -> list[tuple[str, str]]:
        """Per request: the role and text of its last message."""
        out = []
        for body in self.bodies:
            last = body["messages"][-1]
            content = last.get("content")
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content)
            out.append((last["role"], content or ""))
        return out
