"""verdict from Python: the client of `verdict serve`, an in-process backend
through the `verdict` binary, packet builders, and adapters for the OpenAI
Agents SDK (`verdict.adapters.openai_agents`) and LangGraph
(`verdict.adapters.langgraph`)."""

from .backend import BinaryBackend
from .client import Client
from .errors import (
    ApiError,
    BackendError,
    CheckerError,
    RecoveryExhausted,
    TransportError,
    VerdictError,
)
from .packet import Observation, build_packet, observations_from_messages
from .result import CheckResult

__all__ = [
    "ApiError",
    "BackendError",
    "BinaryBackend",
    "CheckResult",
    "CheckerError",
    "Client",
    "Observation",
    "RecoveryExhausted",
    "TransportError",
    "VerdictError",
    "build_packet",
    "observations_from_messages",
]
__version__ = "0.1.0"
