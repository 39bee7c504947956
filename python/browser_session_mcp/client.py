"""The client: where the service is, with which key, and the sessions it started."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Union
from urllib.parse import quote

from ._operations import Operation
from ._transport import DEFAULT_RETRIES, Transport, compact as _compact
from .errors import ServiceError
from .profiles import Profiles, StorageState
from .session import Session
from .types import SessionInfo

DEFAULT_TIMEOUT = 300.0


class Client:
    """A client of the browser-session-mcp REST API.

    ``base_url`` defaults to ``SVC_BASE_URL`` and ``api_key`` to ``SVC_API_KEY`` (sent as ``x-svc-api-key``).
    ``timeout`` is how many seconds to wait for the server without receiving anything (an agent run that streams
    keeps it alive); waiting longer raises ``ClientTimeout``. ``retries`` is how many times a call the server refused
    before doing anything (429 or 503 with Retry-After, e.g. ``session_limit``) is sent again after the wait it asks
    for (at most 30 s); 0 raises the refusal at once (``RateLimited``, with ``retry_after``). ``close()``, or leaving
    a ``with Client(...)`` block, ends the sessions this client started.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
    ) -> None:
        base = base_url or os.environ.get("SVC_BASE_URL")
        if not base:
            raise ValueError("No service address: pass base_url (e.g. http://127.0.0.1:8931) or set SVC_BASE_URL.")
        key = api_key if api_key is not None else os.environ.get("SVC_API_KEY") or None
        self._transport = Transport(base, key, timeout, retries)
        self._open: Set[str] = set()
        #: Start, list and look up sessions.
        self.sessions = Sessions(self._transport, self._open)
        #: List, save and delete the named profiles of this API key.
        self.profiles = Profiles(self._transport)

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    def call(self, operation_id: str, body: Optional[Mapping[str, Any]] = None, *, session_id: Optional[str] = None) -> Any:
        """Any operation of the server by its OpenAPI ``operationId`` (``SessionNavigate``, ``ProfileList``, ...; see
        ``operations()``), including one this client has no method for yet. ``body`` is the request in the server's own
        (camelCase) names, sent as JSON, or as the query string of a GET; ``session_id`` fills the ``{id}`` of a
        session's path. Answers the ``data`` of the JSON answer as plain dicts and lists (None when there is none; a
        binary operation answers its JSON form, the bytes base64 in ``contentBase64``). Errors and retries are those
        of every call; an operationId the server does not have is a ``ValueError`` naming those it has. A session
        started this way is not ended by ``close()``.
        """
        return self._transport.call(operation_id, body, session_id)

    def operations(self) -> Dict[str, Operation]:
        """The server's operations by operationId (``Operation(operation_id, method, path, summary)``), read from its
        ``/v1/openapi.json`` once per client."""
        return self._transport.operations()

    def close(self) -> None:
        """Ends every session this client started that is still open (sessions already gone are skipped)."""
        errors: List[ServiceError] = []
        for session_id in list(self._open):
            try:
                self._transport.request("POST", f"/v1/sessions/{quote(session_id, safe='')}/end")
            except ServiceError as err:
                if err.code not in ("session_not_found", "session_closed"):
                    errors.append(err)
            self._open.discard(session_id)
        if errors:
            raise errors[0]

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r})"


class Sessions:
    """``client.sessions``: start a session, list the caller's sessions, get one by id."""

    def __init__(self, transport: Transport, open_ids: Set[str]) -> None:
        self._transport = transport
        self._open = open_ids

    def start(
        self,
        *,
        viewport: Optional[Mapping[str, int]] = None,
        device: Optional[str] = None,
        locale: Optional[str] = None,
        timezone_id: Optional[str] = None,
        geolocation: Optional[Mapping[str, float]] = None,
        color_scheme: Optional[str] = None,
        reduced_motion: Optional[str] = None,
        user_agent: Optional[str] = None,
        extra_http_headers: Optional[Mapping[str, str]] = None,
        java_script_enabled: Optional[bool] = None,
        proxy: Optional[Mapping[str, str]] = None,
        block_resources: Optional[Sequence[str]] = None,
        block_urls: Optional[Sequence[str]] = None,
        timeout_ms: Optional[int] = None,
        record: Union[bool, Mapping[str, bool], None] = None,
        profile: Optional[str] = None,
        storage_state: Optional[StorageState] = None,
        **options: Any,
    ) -> Session:
        """Starts an isolated browser session at about:blank. Use it as a context manager to end it.

        The options are session_start's (docs/sessions.md), in snake_case: ``viewport={"width": 390, "height": 844}``,
        ``device="Pixel 7"``, ``locale``, ``timezone_id``, ``geolocation={"latitude": .., "longitude": ..}``,
        ``color_scheme``, ``reduced_motion``, ``user_agent``, ``extra_http_headers``, ``java_script_enabled``,
        ``proxy={"server": "http://host:port", "username": .., "password": ..}``, ``block_resources=["image"]``,
        ``block_urls``, ``timeout_ms``; ``record=True`` (or ``{"screenshots": .., "snapshots": .., "video": ..}``)
        records a Playwright trace, read with ``session.recording()`` (docs/recording.md). Other keyword arguments are sent as they are (the server's own names).

        ``profile`` starts it from a saved profile of this API key, ``storage_state`` from a state you hold (what
        ``session.state()`` answered): either way it is logged in where that state was (docs/profiles.md).
        """
        body = _compact(
            {
                "viewport": dict(viewport) if viewport else None,
                "device": device,
                "locale": locale,
                "timezoneId": timezone_id,
                "geolocation": dict(geolocation) if geolocation else None,
                "colorScheme": color_scheme,
                "reducedMotion": reduced_motion,
                "userAgent": user_agent,
                "extraHTTPHeaders": dict(extra_http_headers) if extra_http_headers is not None else None,
                "javaScriptEnabled": java_script_enabled,
                "proxy": dict(proxy) if proxy else None,
                "blockResources": list(block_resources) if block_resources is not None else None,
                "blockUrls": list(block_urls) if block_urls is not None else None,
                "timeoutMs": timeout_ms,
                "record": (record if isinstance(record, bool) else dict(record)) if record is not None else None,
                "profile": profile,
                "storageState": storage_state,
                **options,
            }
        )
        info = SessionInfo.from_json(self._transport.request("POST", "/v1/sessions/start", body)["data"])
        self._open.add(info.id)
        return Session(self._transport, info, on_end=self._open.discard)

    def list(self) -> List[Session]:
        """The open sessions of this API key."""
        sessions = self._transport.request("GET", "/v1/sessions")["data"]["sessions"]
        return [self._wrap(SessionInfo.from_json(raw)) for raw in sessions]

    def get(self, session_id: str) -> Session:
        """A session by id; raises ``ServiceError`` ``session_not_found`` (404) when it does not exist for this key."""
        info = SessionInfo.from_json(self._transport.request("GET", f"/v1/sessions/{quote(session_id, safe='')}")["data"])
        return self._wrap(info)

    def _wrap(self, info: SessionInfo) -> Session:
        return Session(self._transport, info, on_end=self._open.discard)
