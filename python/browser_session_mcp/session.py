"""A browser session and what runs in it: navigate, page.extract, the agent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Literal, Mapping, Optional, Type, TypeVar, Union, overload
from urllib.parse import quote

from ._schema import prepare_schema
from ._transport import EventStream, Transport
from .errors import ServiceError
from .types import AgentResult, NavigateResponse, SessionInfo, Usage

if TYPE_CHECKING:
    from pydantic import BaseModel

    ModelT = TypeVar("ModelT", bound=BaseModel)

WaitUntil = Literal["load", "domcontentloaded", "networkidle"]

# The Python names of AgentExecuteOptions (2.7) and their wire names; other keys go as they are.
_EXECUTE_OPTION_NAMES = {
    "max_steps": "maxSteps",
    "auto_screenshot": "autoScreenshot",
    "wait_between_actions": "waitBetweenActions",
}

# Codes meaning the session is already gone, which ending it again need not report.
_GONE = ("session_not_found", "session_closed")


def _compact(values: Mapping[str, Any]) -> Dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}


class Session:
    """An isolated browser session (its own cookies, storage and page). Use it as a context manager to end it."""

    def __init__(self, transport: Transport, info: SessionInfo, on_end: Optional[Callable[[str], None]] = None) -> None:
        self._transport = transport
        self._on_end = on_end
        self._ended = False
        self.id: str = info.id
        #: What the server said of the session when this object was made or last refreshed.
        self.info: SessionInfo = info
        #: The session's page: ``page.extract(...)``.
        self.page = Page(self)

    def __repr__(self) -> str:
        return f"Session(id={self.id!r}, url={self.info.url!r})"

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

    def end(self) -> None:
        """Ends the session and frees its browser context. Ending it again does nothing."""
        if self._ended:
            return
        self._transport.request("POST", self._path("end"))
        self._mark_ended()

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


class Page:
    """The page of a session."""

    def __init__(self, session: Session) -> None:
        self._session = session

    @overload
    def extract(
        self,
        instruction: Optional[str] = ...,
        schema: Any = ...,
        selector: Optional[str] = ...,
        iframes: Optional[bool] = ...,
        model_name: Optional[str] = ...,
        model_client_options: Optional[Mapping[str, Any]] = ...,
        dom_settle_timeout_ms: Optional[int] = ...,
        *,
        stream: Literal[True],
        on_usage: Optional[Callable[[Usage], None]] = ...,
    ) -> EventStream: ...

    @overload
    def extract(
        self,
        instruction: Optional[str] = ...,
        schema: None = ...,
        selector: Optional[str] = ...,
        iframes: Optional[bool] = ...,
        model_name: Optional[str] = ...,
        model_client_options: Optional[Mapping[str, Any]] = ...,
        dom_settle_timeout_ms: Optional[int] = ...,
        *,
        stream: Literal[False] = ...,
        on_usage: Optional[Callable[[Usage], None]] = ...,
    ) -> Dict[str, Any]: ...

    @overload
    def extract(
        self,
        instruction: Optional[str],
        schema: "Type[ModelT]",
        selector: Optional[str] = ...,
        iframes: Optional[bool] = ...,
        model_name: Optional[str] = ...,
        model_client_options: Optional[Mapping[str, Any]] = ...,
        dom_settle_timeout_ms: Optional[int] = ...,
        *,
        stream: Literal[False] = ...,
        on_usage: Optional[Callable[[Usage], None]] = ...,
    ) -> "ModelT": ...

    @overload
    def extract(
        self,
        *,
        instruction: Optional[str] = ...,
        schema: "Type[ModelT]",
        selector: Optional[str] = ...,
        iframes: Optional[bool] = ...,
        model_name: Optional[str] = ...,
        model_client_options: Optional[Mapping[str, Any]] = ...,
        dom_settle_timeout_ms: Optional[int] = ...,
        stream: Literal[False] = ...,
        on_usage: Optional[Callable[[Usage], None]] = ...,
    ) -> "ModelT": ...

    @overload
    def extract(
        self,
        instruction: Optional[str] = ...,
        schema: Optional[Mapping[str, Any]] = ...,
        selector: Optional[str] = ...,
        iframes: Optional[bool] = ...,
        model_name: Optional[str] = ...,
        model_client_options: Optional[Mapping[str, Any]] = ...,
        dom_settle_timeout_ms: Optional[int] = ...,
        *,
        stream: Literal[False] = ...,
        on_usage: Optional[Callable[[Usage], None]] = ...,
    ) -> Any: ...

    def extract(
        self,
        instruction: Optional[str] = None,
        schema: Any = None,
        selector: Optional[str] = None,
        iframes: Optional[bool] = None,
        model_name: Optional[str] = None,
        model_client_options: Optional[Mapping[str, Any]] = None,
        dom_settle_timeout_ms: Optional[int] = None,
        *,
        stream: bool = False,
        on_usage: Optional[Callable[[Usage], None]] = None,
    ) -> Any:
        """Reads the page (interface 2.9, 2.10).

        - no arguments: ``{"pageText": str}``, the page as text with element refs (no model call);
        - ``instruction`` alone: ``{"extraction": str}``;
        - ``schema`` a pydantic model class: an instance of it; a JSON Schema dict: data valid against it (a dict for
          an object schema).

        ``selector`` (XPath) limits the page to one subtree; ``iframes=True`` includes frame content;
        ``model_name`` and ``model_client_options`` choose the model; ``dom_settle_timeout_ms`` bounds the wait for
        the page to settle. ``on_usage`` receives the token usage when a model was called. With ``stream=True`` the
        events are returned instead; the ``finished`` event carries the raw body (``data.result``, ``data.usage``).
        """
        json_schema, convert = prepare_schema(schema)
        body = _compact(
            {
                "instruction": instruction,
                "schema": json_schema,
                "selector": selector,
                "iframes": iframes,
                "modelName": model_name,
                "modelClientOptions": dict(model_client_options) if model_client_options is not None else None,
                "domSettleTimeoutMs": dom_settle_timeout_ms,
            }
        )
        path = self._session._path("extract")
        if stream:
            return self._session._transport.stream(path, body)
        data = self._session._transport.request("POST", path, body)["data"]
        if on_usage is not None and data.get("usage") is not None:
            on_usage(Usage.from_json(data["usage"]))
        return convert(data["result"])


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
        return AgentResult.from_json(self._session._transport.request("POST", path, body)["data"]["result"])
