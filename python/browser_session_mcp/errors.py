"""The one error type of the client."""

from __future__ import annotations

from typing import Any, Dict, Optional


class ServiceError(Exception):
    """An error answered by the service, or met on the way to it.

    ``code`` is the server's stable error code (``session_not_found``, ``invalid_argument``, ``unauthorized``, ...)
    and ``status`` its HTTP status. Failures before an answer use codes of their own with ``status`` None:
    ``unreachable`` (no connection), ``timeout`` (no answer in time) and ``invalid_response`` (an answer that is
    not the service's JSON, e.g. from a proxy; ``status`` is then that answer's status).
    """

    def __init__(self, code: str, message: str, status: Optional[int] = None, details: Optional[Dict[str, Any]] = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status
        self.details = details

    def __repr__(self) -> str:
        return f"ServiceError(code={self.code!r}, status={self.status!r}, message={self.message!r})"
