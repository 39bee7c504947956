"""The server's operations by ``operationId``, read from its ``/v1/openapi.json``: what ``call`` sends where.

The document is generated from the server's one table of operations, so an operation added there is in it, and so
reachable through ``client.call(operation_id, ...)``, with no edit here. Each transport reads it once (on the first
``call``) and keeps the table; ``Endpoint.use_openapi`` sets it from a document in hand.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple
from urllib.parse import quote, urlencode

OPENAPI_PATH = "/v1/openapi.json"
_METHODS = ("get", "post", "put", "patch", "delete")
_PARAMETER = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class Operation:
    """One REST operation of the server: its ``operation_id``, HTTP ``method`` and ``path`` (with ``{id}`` for the
    session), and its ``summary``."""

    operation_id: str
    method: str
    path: str
    summary: str = ""

    @property
    def takes_session(self) -> bool:
        return "{id}" in self.path

    def target(self, body: Optional[Mapping[str, Any]], session_id: Optional[str]) -> Tuple[str, str, Optional[Dict[str, Any]]]:
        """The method, path (query included for a GET) and JSON body to send. A GET's input goes in the query string,
        each value as JSON, which is how the server reads it."""
        if self.takes_session and not session_id:
            raise ValueError(f"{self.operation_id} works on a session ({self.method} {self.path}): pass session_id")
        if session_id and not self.takes_session:
            raise ValueError(f"{self.operation_id} takes no session ({self.method} {self.path}): leave session_id out")
        others = [name for name in _PARAMETER.findall(self.path) if name != "id"]
        if others:
            raise ValueError(f"{self.operation_id} has path parameters the client cannot fill: {', '.join(others)}")
        path = self.path.replace("{id}", quote(session_id or "", safe=""))
        if self.method != "GET":
            return self.method, path, dict(body) if body is not None else None
        if body:
            path += "?" + urlencode({name: json.dumps(value) for name, value in body.items()})
        return self.method, path, None


def operations_of(document: Mapping[str, Any]) -> Dict[str, Operation]:
    """Every operation of an OpenAPI document by its operationId, in document order."""
    found: Dict[str, Operation] = {}
    for path, item in (document.get("paths") or {}).items():
        if not isinstance(item, Mapping):
            continue
        for method in _METHODS:
            spec = item.get(method)
            if isinstance(spec, Mapping) and isinstance(spec.get("operationId"), str):
                found[spec["operationId"]] = Operation(spec["operationId"], method.upper(), path, str(spec.get("summary", "")))
    return found


def find(operations: Mapping[str, Operation], operation_id: str, where: str) -> Operation:
    """The operation named ``operation_id``; ValueError naming the ones there are when the server has no such one."""
    operation = operations.get(operation_id)
    if operation is None:
        known = ", ".join(sorted(operations)) or "none"
        raise ValueError(f"No operation {operation_id!r} in the OpenAPI document of {where}; its operationIds: {known}")
    return operation


def data_of(answer: Any) -> Any:
    """What ``call`` answers: the ``data`` of the ``{success: true, data}`` envelope (None for a bare
    ``{success: true}``); an answer without the envelope (the OpenAPI document) as it is."""
    if isinstance(answer, dict) and answer.get("success") is True:
        return answer.get("data")
    return answer
