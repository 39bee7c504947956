"""The page of a session: extract, act, observe, screenshot, evaluate."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Literal, Mapping, Optional, Sequence, Type, TypeVar, Union, overload

from ._schema import prepare_schema, unwrap
from ._transport import EventStream, compact as _compact
from .types import ActResult, EvaluateResult, ObserveAction, ObserveResult, Screenshot, Usage

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .session import Session

    ModelT = TypeVar("ModelT", bound=BaseModel)

ScreenshotFormat = Literal["png", "jpeg"]


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
        return convert(unwrap(data))

    @overload
    def act(
        self,
        action: Union[ObserveAction, Mapping[str, Any], Sequence[Union[ObserveAction, Mapping[str, Any]]], str, None] = ...,
        *,
        instruction: Optional[str] = ...,
        variables: Optional[Mapping[str, Union[str, Mapping[str, Any]]]] = ...,
        model_name: Optional[str] = ...,
        model_client_options: Optional[Mapping[str, Any]] = ...,
        timeout_ms: Optional[int] = ...,
        max_tokens: Optional[int] = ...,
        stream: Literal[False] = ...,
    ) -> ActResult: ...

    @overload
    def act(
        self,
        action: Union[ObserveAction, Mapping[str, Any], Sequence[Union[ObserveAction, Mapping[str, Any]]], str, None] = ...,
        *,
        instruction: Optional[str] = ...,
        variables: Optional[Mapping[str, Union[str, Mapping[str, Any]]]] = ...,
        model_name: Optional[str] = ...,
        model_client_options: Optional[Mapping[str, Any]] = ...,
        timeout_ms: Optional[int] = ...,
        max_tokens: Optional[int] = ...,
        stream: Literal[True],
    ) -> EventStream: ...

    def act(
        self,
        action: Union[ObserveAction, Mapping[str, Any], Sequence[Union[ObserveAction, Mapping[str, Any]]], str, None] = None,
        *,
        instruction: Optional[str] = None,
        variables: Optional[Mapping[str, Union[str, Mapping[str, Any]]]] = None,
        model_name: Optional[str] = None,
        model_client_options: Optional[Mapping[str, Any]] = None,
        timeout_ms: Optional[int] = None,
        max_tokens: Optional[int] = None,
        stream: bool = False,
    ) -> Union[ActResult, EventStream]:
        """Performs one action on the page and answers what it changed.

        ``action`` is an ``ObserveAction`` from ``observe()`` as is, or a dict ``{"ref", "method", "arguments"}``
        (no model call), or a list of them, run in order in one call (at most 50; it stops at the first that fails:
        ``result.failed``); a string, or ``instruction=``, asks the model for the action ("click the sign-in button").
        ``%name%`` in the arguments is filled from ``variables`` after inference and never sent to a model; a value
        given as ``{"value": ..., "origins": ["https://bank.example"]}`` is typed only into pages of those origins
        (``VariableNotAllowed`` elsewhere).
        ``timeout_ms`` bounds the wait for the element to be actionable (server default 10000); ``max_tokens`` the
        page change in the result (default 2000 o200k tokens). With ``stream=True`` the events are returned instead.
        """
        if isinstance(action, str):
            if instruction is not None:
                raise TypeError("act() takes the instruction once: as its first argument or as instruction=, not both")
            action, instruction = None, action
        several = isinstance(action, (list, tuple))
        body = _compact(
            {
                "action": None if several else _action_body(action),
                "actions": [_action_body(one) for one in action] if several else None,
                "instruction": instruction,
                "variables": dict(variables) if variables is not None else None,
                "modelName": model_name,
                "modelClientOptions": dict(model_client_options) if model_client_options is not None else None,
                "timeoutMs": timeout_ms,
                "maxTokens": max_tokens,
            }
        )
        path = self._session._path("act")
        if stream:
            return self._session._transport.stream(path, body)
        return ActResult.from_json(self._session._transport.request("POST", path, body)["data"])

    @overload
    def observe(
        self,
        instruction: Optional[str] = ...,
        *,
        selector: Optional[str] = ...,
        iframes: Optional[bool] = ...,
        model_name: Optional[str] = ...,
        model_client_options: Optional[Mapping[str, Any]] = ...,
        dom_settle_timeout_ms: Optional[int] = ...,
        stream: Literal[False] = ...,
    ) -> ObserveResult: ...

    @overload
    def observe(
        self,
        instruction: Optional[str] = ...,
        *,
        selector: Optional[str] = ...,
        iframes: Optional[bool] = ...,
        model_name: Optional[str] = ...,
        model_client_options: Optional[Mapping[str, Any]] = ...,
        dom_settle_timeout_ms: Optional[int] = ...,
        stream: Literal[True],
    ) -> EventStream: ...

    def observe(
        self,
        instruction: Optional[str] = None,
        *,
        selector: Optional[str] = None,
        iframes: Optional[bool] = None,
        model_name: Optional[str] = None,
        model_client_options: Optional[Mapping[str, Any]] = None,
        dom_settle_timeout_ms: Optional[int] = None,
        stream: bool = False,
    ) -> Union[ObserveResult, EventStream]:
        """The elements one can act on, each an ``ObserveAction`` (ref, description, method, arguments) that
        ``act()`` takes as is. Without ``instruction``: every interactive element (of the XPath ``selector``
        subtree), no model call; with it, those the model picks, their refs checked against the page."""
        body = _compact(
            {
                "instruction": instruction,
                "selector": selector,
                "iframes": iframes,
                "modelName": model_name,
                "modelClientOptions": dict(model_client_options) if model_client_options is not None else None,
                "domSettleTimeoutMs": dom_settle_timeout_ms,
            }
        )
        path = self._session._path("observe")
        if stream:
            return self._session._transport.stream(path, body)
        return ObserveResult.from_json(self._session._transport.request("POST", path, body)["data"])

    def screenshot(
        self,
        full_page: Optional[bool] = None,
        ref: Optional[str] = None,
        format: Optional[ScreenshotFormat] = None,
        quality: Optional[int] = None,
        annotate: Optional[bool] = None,
    ) -> Screenshot:
        """A screenshot of the viewport, the full page (``full_page=True``) or one element (``ref``), PNG by default
        or ``format="jpeg"`` with ``quality`` 0-100 (default 80); ``annotate=True`` draws the page text's refs on it
        (``annotated``: how many). Returns ``Screenshot``: the image bytes, with ``mime_type``, ``width`` and
        ``height``. The server caps it at 2000 px a side and 2 MiB (scaling down)."""
        body = _compact({"fullPage": full_page, "ref": ref, "format": format, "quality": quality, "annotate": annotate})
        raw, response = self._session._transport.request_bytes(self._session._path("screenshot"), body, "image/png, image/jpeg")
        annotated = response.getheader("x-annotated-refs")
        return Screenshot(
            raw,
            mime_type=response.getheader("content-type", "").split(";")[0].strip(),
            width=int(response.getheader("x-image-width", "0")),
            height=int(response.getheader("x-image-height", "0")),
            action_id=response.getheader("x-action-id"),
            annotated=int(annotated) if annotated is not None else None,
        )

    def evaluate(
        self,
        expression: str,
        arg: Any = None,
        ref: Optional[str] = None,
        timeout_ms: Optional[int] = None,
    ) -> EvaluateResult:
        """Runs JavaScript in the page: an expression (``"document.title"``) or a function (``"async (arg) => ..."``,
        ``"(el, arg) => el.value"`` with ``ref``), called with ``arg`` (JSON). Returns ``EvaluateResult`` with its JSON
        value in ``result``. A script that throws raises ``EvaluationFailed``; one still running after ``timeout_ms``
        (default 10000, at most 60000) is stopped and raises ``Timeout``."""
        body = _compact({"expression": expression, "arg": arg, "ref": ref, "timeoutMs": timeout_ms})
        return EvaluateResult.from_json(self._session._transport.request("POST", self._session._path("evaluate"), body)["data"])


def _action_body(action: Union[ObserveAction, Mapping[str, Any], None]) -> Optional[Dict[str, Any]]:
    """An observe result or a dict as the wire's ``action``; anything else is a caller's mistake, said before sending."""
    if action is None:
        return None
    if isinstance(action, ObserveAction):
        return action.to_json()
    if isinstance(action, Mapping):
        return dict(action)
    raise TypeError(f"act() takes an ObserveAction, a dict {{ref, method, arguments}} or an instruction string, not {type(action).__name__}")
