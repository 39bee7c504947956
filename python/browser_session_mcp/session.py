"""A browser session and what runs in it: navigate, the agent; its page is in page.py."""

from __future__ import annotations

import json
import warnings
from typing import Any, Callable, Dict, Literal, Mapping, Optional, Sequence, Union, overload
from urllib.parse import quote, urlencode

from ._transport import EventStream, Transport, compact as _compact
from .errors import ServiceError
from .page import Page
from .profiles import ProfileInfo, StorageState
from .types import AgentResult, LiveView, NavigateResponse, ReplayResult, SessionInfo

WaitUntil = Literal["load", "domcontentloaded", "networkidle"]
ScriptFormat = Literal["typescript", "test", "python", "json"]

# The Python names of AgentExecuteOptions (2.7) and their wire names; other keys go as they are.
_EXECUTE_OPTION_NAMES = {
    "max_steps": "maxSteps",
    "auto_screenshot": "autoScreenshot",
    "wait_between_actions": "waitBetweenActions",
    "cache_key": "cacheKey",
}

# Codes meaning the session is already gone, which ending it again need not report.
_GONE = ("session_not_found", "session_closed")


class Session:
    """An isolated browser session (its own cookies, storage and page). Use it as a context manager to end it."""

    def __init__(self, transport: Transport, info: SessionInfo, on_end: Optional[Callable[[str], None]] = None) -> None:
        self._transport = transport
        self._on_end = on_end
        self._ended = False
        self.id: str = info.id
        #: What the server said of the session when this object was made or last refreshed.
        self.info: SessionInfo = info
        #: The session's page: ``page.extract(...)``, ``page.act(...)``, ``page.observe(...)``, ``page.screenshot(...)``.
        self.page = Page(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, url={self.info.url!r})"

    def _path(self, action: str = "") -> str:
        return f"/v1/sessions/{quote(self.id, safe='')}" + (f"/{action}" if action else "")

    def refresh(self) -> SessionInfo:
        """Fetches the session again (URL, frames, recent page events) and returns it."""
        self.info = SessionInfo.from_json(self._transport.request("GET", self._path())["data"])
        return self.info

    @overload
    def navigate(
        self,
        url: str,
        referer: Optional[str] = ...,
        timeout: Optional[int] = ...,
        wait_until: Optional[WaitUntil] = ...,
        frame_id: Optional[str] = ...,
        *,
        stream: Literal[False] = ...,
    ) -> NavigateResponse: ...

    @overload
    def navigate(
        self,
        url: str,
        referer: Optional[str] = ...,
        timeout: Optional[int] = ...,
        wait_until: Optional[WaitUntil] = ...,
        frame_id: Optional[str] = ...,
        *,
        stream: Literal[True],
    ) -> EventStream: ...

    def navigate(
        self,
        url: str,
        referer: Optional[str] = None,
        timeout: Optional[int] = None,
        wait_until: Optional[WaitUntil] = None,
        frame_id: Optional[str] = None,
        *,
        stream: bool = False,
    ) -> Union[NavigateResponse, EventStream]:
        """Opens ``url`` in the session's page (or in the frame ``frame_id``).

        ``timeout`` is in milliseconds (server default 30000); ``wait_until`` is ``load`` (default),
        ``domcontentloaded`` or ``networkidle``. A 404 page is a successful navigation: check
        ``response.data.result.status``. With ``stream=True`` the events are returned instead (see ``EventStream``).
        """
        options = _compact({"referer": referer, "timeout": timeout, "waitUntil": wait_until})
        body = _compact({"url": url, "options": options or None, "frameId": frame_id})
        if stream:
            return self._transport.stream(self._path("navigate"), body)
        return NavigateResponse.from_json(self._transport.request("POST", self._path("navigate"), body))

    def agent(self, model: Optional[str], instructions: Optional[str] = None, options: Optional[Mapping[str, Any]] = None) -> "Agent":
        """An agent on this session. ``model`` like ``openai/gpt-4.1-mini`` or ``anthropic/claude-sonnet-4-6`` (None:
        the server's default); ``instructions`` are added to its system prompt; ``options`` are the provider options
        (``apiKey``, ``baseURL``, ``organization``, ...)."""
        return Agent(self, _compact({"model": model, "instructions": instructions, "options": dict(options) if options else None}))

    def live_view(self, interactive: bool = True, expires_in_ms: Optional[int] = None, takeover: bool = False) -> LiveView:
        """A link a person opens in a browser to watch the page live; ``interactive`` lets them click and type.
        ``takeover=True`` holds the page for them now: operations wait until they press Done (docs/live-view.md)."""
        body = _compact({"interactive": interactive, "expiresInMs": expires_in_ms, "takeover": takeover or None})
        return LiveView.from_json(self._transport.request("POST", self._path("liveView"), body)["data"])

    def trace(self) -> bytes:
        """The session's Playwright trace so far as zip bytes (``npx playwright-core show-trace``), secrets scrubbed. Raises
        ``ServiceError`` ``recording_not_enabled`` (409) for a session started without ``record``."""
        raw, _ = self._transport.request_bytes(self._path("trace"), {}, "application/zip")
        return raw

    def recording(self) -> bytes:
        """Deprecated until 0.3.0: the former name of ``trace()``."""
        warnings.warn("Session.recording() is now Session.trace()", DeprecationWarning, stacklevel=2)
        return self.trace()

    def log(self) -> Dict[str, Any]:
        """The action log as the server sends it: ``{"entries": [...], "dropped": n}``, each entry with ``actionId``,
        ``operation``, ``arguments`` (secrets masked), ``startedAt``, ``endedAt``, ``outcome``, ``errorCode``,
        ``pageEvents`` and ``url``; the last 1,000 operations."""
        return self._transport.request("GET", self._path("log"))["data"]

    def script(self, format: ScriptFormat = "typescript", action_id: Optional[str] = None) -> Dict[str, Any]:
        """The session's navigations and actions as a Playwright script, as the server sends it: ``{"format",
        "script", "runId", "steps", "dropped"}``. ``format`` is ``typescript`` (the ``playwright`` package), ``test``
        (``@playwright/test``), ``python`` (playwright-python) or ``json`` (``script`` is the run, ``{"steps": [...]}``,
        as ``replay(steps=...)`` takes it); ``action_id`` keeps one operation's steps. Secrets are read from
        environment variables, never written in. The run is kept for this API key: ``replay(run_id=...)`` does it
        again in any session (docs/replay.md)."""
        query = {name: json.dumps(value) for name, value in _compact({"format": format, "actionId": action_id}).items()}
        return self._transport.request("GET", self._path("script") + "?" + urlencode(query))["data"]

    @overload
    def replay(
        self,
        run_id: Optional[str] = ...,
        steps: Optional[Sequence[Mapping[str, Any]]] = ...,
        action_id: Optional[str] = ...,
        variables: Optional[Mapping[str, Union[str, Mapping[str, Any]]]] = ...,
        heal: Optional[bool] = ...,
        model_name: Optional[str] = ...,
        model_client_options: Optional[Mapping[str, Any]] = ...,
        timeout_ms: Optional[int] = ...,
        *,
        stream: Literal[False] = ...,
    ) -> ReplayResult: ...

    @overload
    def replay(
        self,
        run_id: Optional[str] = ...,
        steps: Optional[Sequence[Mapping[str, Any]]] = ...,
        action_id: Optional[str] = ...,
        variables: Optional[Mapping[str, Union[str, Mapping[str, Any]]]] = ...,
        heal: Optional[bool] = ...,
        model_name: Optional[str] = ...,
        model_client_options: Optional[Mapping[str, Any]] = ...,
        timeout_ms: Optional[int] = ...,
        *,
        stream: Literal[True],
    ) -> EventStream: ...

    def replay(
        self,
        run_id: Optional[str] = None,
        steps: Optional[Sequence[Mapping[str, Any]]] = None,
        action_id: Optional[str] = None,
        variables: Optional[Mapping[str, Union[str, Mapping[str, Any]]]] = None,
        heal: Optional[bool] = None,
        model_name: Optional[str] = None,
        model_client_options: Optional[Mapping[str, Any]] = None,
        timeout_ms: Optional[int] = None,
        *,
        stream: bool = False,
    ) -> Union[ReplayResult, EventStream]:
        """Does a recorded run again in this session, without a model: give one of ``run_id`` (from ``script()``),
        ``steps`` (a json script's steps) or ``action_id`` (an earlier operation of this session). ``variables``
        fill the run's ``%name%`` placeholders (a password typed without one is ``%password%``). A step whose element
        is gone is healed by one model call (``heal``, default True; ``model_name``, ``model_client_options``), or the
        replay stops there: ``success`` False and ``failed`` says what it expected and what the page shows.
        ``timeout_ms`` bounds each step's wait for its element. An unknown ``run_id`` raises ``RunNotFound`` (404)."""
        body = _compact(
            {
                "runId": run_id,
                "steps": [dict(step) for step in steps] if steps is not None else None,
                "actionId": action_id,
                "variables": dict(variables) if variables is not None else None,
                "heal": heal,
                "modelName": model_name,
                "modelClientOptions": dict(model_client_options) if model_client_options is not None else None,
                "timeoutMs": timeout_ms,
            }
        )
        if stream:
            return self._transport.stream(self._path("replay"), body)
        return ReplayResult.from_json(self._transport.request("POST", self._path("replay"), body)["data"])

    def call(self, operation_id: str, body: Optional[Mapping[str, Any]] = None) -> Any:
        """Any operation on this session by its OpenAPI ``operationId``: ``client.call(operation_id, body,
        session_id=session.id)`` (see ``Client.call``). It leaves this object as it was: after ``call("SessionEnd")``,
        leaving ``with`` finds the session gone, which is not an error there."""
        return self._transport.call(operation_id, body, self.id)

    def end(self, save_profile: bool = False) -> None:
        """Ends the session and frees its browser context. Ending it again does nothing.

        ``save_profile=True`` first saves the session's state to the profile it was started from (if that fails, the
        session stays open and the error is raised).
        """
        if self._ended:
            return
        self._transport.request("POST", self._path("end"), {"saveProfile": True} if save_profile else None)
        self._mark_ended()

    def state(self, indexed_db: bool = False) -> StorageState:
        """The session's storage state now, in Playwright's shape (``cookies``, ``origins`` with ``localStorage``;
        IndexedDB with ``indexed_db=True``). Pass it to ``client.sessions.start(storage_state=...)``."""
        body = {"indexedDB": True} if indexed_db else {}
        return self._transport.request("POST", self._path("state"), body)["data"]["result"]

    def save_profile(self, name: Optional[str] = None) -> ProfileInfo:
        """Saves the session's state as the named profile of this API key (default: the one it started from)."""
        body = {} if name is None else {"name": name}
        return ProfileInfo.from_json(self._transport.request("POST", self._path("saveProfile"), body)["data"]["result"])

    def _mark_ended(self) -> None:
        self._ended = True
        if self._on_end:
            self._on_end(self.id)

    def _end_quietly(self) -> None:
        try:
            self.end()
        except ServiceError as err:
            if err.code not in _GONE:
                raise
            self._mark_ended()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self._end_quietly()


class Agent:
    """An autonomous agent bound to one session and one model configuration (AgentConfig, 2.6)."""

    def __init__(self, session: Session, config: Dict[str, Any]) -> None:
        self._session = session
        self.config = config

    @overload
    def execute(self, instruction_or_options: Union[str, Mapping[str, Any]], *, stream: Literal[False] = ...) -> AgentResult: ...

    @overload
    def execute(self, instruction_or_options: Union[str, Mapping[str, Any]], *, stream: Literal[True]) -> EventStream: ...

    def execute(self, instruction_or_options: Union[str, Mapping[str, Any]], *, stream: bool = False) -> Union[AgentResult, EventStream]:
        """Runs the agent until it calls done or reaches ``max_steps``.

        Takes the instruction, or a dict of AgentExecuteOptions (2.7) with snake_case names: ``instruction``
        (required), ``max_steps`` (default 20), ``auto_screenshot`` (default True), ``wait_between_actions`` (ms,
        default 0), ``context``, and ``variables`` (values for ``%name%`` placeholders, never shown to the model).
        ``cache=True`` (or a ``cache_key``) keeps a successful run and replays it next time without the model
        (``result.cache``; docs/replay.md).
        """
        if isinstance(instruction_or_options, str):
            execute_options: Union[str, Dict[str, Any]] = instruction_or_options
        elif isinstance(instruction_or_options, Mapping):
            execute_options = {_EXECUTE_OPTION_NAMES.get(k, k): v for k, v in instruction_or_options.items() if v is not None}
        else:
            raise TypeError("execute takes an instruction string or a dict of options")
        body: Dict[str, Any] = {"executeOptions": execute_options}
        if self.config:
            body["agentConfig"] = self.config
        path = self._session._path("agentExecute")
        if stream:
            return self._session._transport.stream(path, body)
        data = self._session._transport.request("POST", path, body)["data"]
        return AgentResult.from_json(data["result"], data)
