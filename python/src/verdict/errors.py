"""Errors: every failure is a `VerdictError` carrying a machine-readable `code`."""

from __future__ import annotations


class VerdictError(Exception):
    """Base of every error of this package; `code` names the failure."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class ApiError(VerdictError):
    """The server refused the request: its HTTP `status` and `{code, message}` body."""

    def __init__(
        self, status: int, code: str, message: str, retry_after: float | None = None
    ) -> None:
        super().__init__(code, message)
        self.status = status
        self.retry_after = retry_after


class TransportError(VerdictError):
    """The server could not be reached, or answered something that is not the API."""


class CheckerError(VerdictError):
    """The check ran but the verifier failed (trap, timeout, out of fuel, ...):
    the answer's `status` was `checker_error`; `code` is the verifier error's code."""

    def __init__(self, code: str, message: str, result: object = None) -> None:
        super().__init__(code, message)
        self.result = result


class BackendError(VerdictError):
    """The in-process backend (the `verdict` binary) failed to answer."""


class RecoveryExhausted(VerdictError):
    """The verifier still refused after the allowed recovery attempts."""

    def __init__(self, attempts: int, result: object) -> None:
        super().__init__(
            "recovery_exhausted",
            f"the verifier did not confirm completion after {attempts} recovery attempts",
        )
        self.attempts = attempts
        self.result = result
