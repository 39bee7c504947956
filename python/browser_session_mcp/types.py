"""Typed results, in the service interface's field names (snake_case where the interface writes camelCase)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Dict, Iterator, List, Mapping, Optional


def _get(raw: Mapping[str, Any], key: str, default: Any = None) -> Any:
    value = raw.get(key, default)
    return default if value is None else value


@dataclass(frozen=True)
class Usage:
    """Token and timing metrics of the model calls of one operation (interface 2.8)."""

    input_tokens: int
    output_tokens: int
    inference_time_ms: float
    reasoning_tokens: Optional[int] = None
    cached_input_tokens: Optional[int] = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "Usage":
        return cls(
            input_tokens=raw["input_tokens"],
            output_tokens=raw["output_tokens"],
            inference_time_ms=raw["inference_time_ms"],
            reasoning_tokens=raw.get("reasoning_tokens"),
            cached_input_tokens=raw.get("cached_input_tokens"),
        )


@dataclass(frozen=True)
class FrameInfo:
    """A frame of the session's page; ``frame_id`` is what ``navigate(frame_id=...)`` takes."""

    frame_id: str
    url: str
    name: str
    parent_frame_id: Optional[str]

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "FrameInfo":
        return cls(frame_id=raw["frameId"], url=raw["url"], name=raw.get("name", ""), parent_frame_id=raw.get("parentFrameId"))


@dataclass(frozen=True)
class PageEvent:
    """Something the page did that the session handled by policy: a dialog, popup, download, crash or hang."""

    seq: int
    type: str
    message: str
    at: str
    url: Optional[str] = None
    #: How many events of this kind the server folded into this one (a page that opens popups in a loop).
    count: Optional[int] = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "PageEvent":
        return cls(seq=raw["seq"], type=raw["type"], message=raw["message"], at=raw["at"], url=raw.get("url"), count=raw.get("count"))


def _page_events(data: Mapping[str, Any]) -> List[PageEvent]:
    return [PageEvent.from_json(e) for e in _get(data, "pageEvents", [])]


@dataclass(frozen=True)
class SessionInfo:
    """A session as the server describes it (``GET /v1/sessions/{id}``)."""

    id: str
    main_frame_id: str
    url: str
    frames: List[FrameInfo]
    created_at: str
    last_used_at: str
    expires_at: str
    recent_events: List[PageEvent]
    #: The session's pages (several only with the server's ``--popups tab``).
    tabs: List["TabInfo"] = field(default_factory=list)
    #: The session_start options in force; the proxy password and header values show as ``"***"``.
    options: Dict[str, Any] = field(default_factory=dict)
    #: Requests blocked by ``block_resources`` / ``block_urls`` so far (None when the session blocks nothing).
    blocked_requests: Optional[int] = None
    #: Where the browser runs: ``"local"``, or the browser host's endpoint (without credentials).
    host: str = "local"
    #: ``"open"``, or ``"lost"`` when its browser host went away (operations answer browser_unavailable; end it).
    state: str = "open"

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "SessionInfo":
        return cls(
            id=raw["id"],
            main_frame_id=raw["mainFrameId"],
            url=raw["url"],
            frames=[FrameInfo.from_json(f) for f in _get(raw, "frames", [])],
            created_at=raw["createdAt"],
            last_used_at=raw["lastUsedAt"],
            expires_at=raw["expiresAt"],
            recent_events=[PageEvent.from_json(e) for e in _get(raw, "recentEvents", [])],
            tabs=[TabInfo.from_json(t) for t in _get(raw, "tabs", [])],
            options=dict(_get(raw, "options", {})),
            blocked_requests=_get(raw, "blockedRequests", None),
            host=raw.get("host", "local"),
            state=raw.get("state", "open"),
        )


@dataclass(frozen=True)
class NavigationResponse:
    """The browser's response to a navigation; a 404 page is a successful navigation with ``status`` 404."""

    url: str
    status: int
    status_text: str
    ok: bool
    headers: Dict[str, str]
    redirect_chain: List[str]
    from_service_worker: bool
    server_addr: Optional[Dict[str, Any]]
    frame_id: str
    timing: Optional[Dict[str, float]] = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "NavigationResponse":
        return cls(
            url=raw["url"],
            status=raw["status"],
            status_text=raw.get("statusText", ""),
            ok=raw["ok"],
            headers=dict(_get(raw, "headers", {})),
            redirect_chain=list(_get(raw, "redirectChain", [])),
            from_service_worker=bool(raw.get("fromServiceWorker", False)),
            server_addr=raw.get("serverAddr"),
            frame_id=raw.get("frameId", ""),
            timing=raw.get("timing"),
        )


@dataclass(frozen=True)
class NavigateResultOutput:
    """``data`` of NavigateResponse (2.5): ``result`` is None for a same-document navigation or about:blank;
    ``page_events`` are what the page did meanwhile (dialogs, popups, downloads)."""

    result: Optional[NavigationResponse]
    action_id: Optional[str] = None
    usage: Optional["Usage"] = None
    page_events: List[PageEvent] = field(default_factory=list)


@dataclass(frozen=True)
class NavigateResponse:
    """Answer of ``navigate`` (2.4)."""

    success: bool
    data: NavigateResultOutput

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "NavigateResponse":
        data = raw["data"]
        result, usage = data.get("result"), data.get("usage")
        return cls(
            success=raw["success"],
            data=NavigateResultOutput(
                result=None if result is None else NavigationResponse.from_json(result),
                action_id=data.get("actionId"),
                usage=None if usage is None else Usage.from_json(usage),
                page_events=_page_events(data),
            ),
        )


@dataclass(frozen=True)
class AgentAction:
    """One action of an agent run: the tool used, its arguments as the model gave them, what it did (``message``, with
    its target and value), and how it went."""

    type: str
    arguments: Dict[str, Any] = field(default_factory=dict)
    message: Optional[str] = None
    reasoning: Optional[str] = None
    page_url: Optional[str] = None
    time_ms: Optional[float] = None
    error: Optional[str] = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "AgentAction":
        return cls(
            type=raw["type"],
            arguments=dict(_get(raw, "arguments", {})),
            message=raw.get("message"),
            reasoning=raw.get("reasoning"),
            page_url=raw.get("pageUrl"),
            time_ms=raw.get("timeMs"),
            error=raw.get("error"),
        )


@dataclass(frozen=True)
class AgentCache:
    """What a cached agent run did (``cache`` or ``cache_key`` in the execute options; docs/replay.md): ``hit``, a kept
    run was found and replayed; ``replayed``, steps done as recorded; ``healed``, steps whose target one model call
    found again; ``inferred``, actions the model chose; ``stored``, the run is kept for the next call (else ``reason``)."""

    hit: bool
    replayed: int
    healed: int
    inferred: int
    stored: bool
    reason: Optional[str] = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "AgentCache":
        return cls(
            hit=raw["hit"],
            replayed=raw["replayed"],
            healed=raw["healed"],
            inferred=raw["inferred"],
            stored=raw["stored"],
            reason=raw.get("reason"),
        )


@dataclass(frozen=True)
class AgentResult:
    """Outcome of ``agent.execute`` (2.8). ``completed``: the agent called done; ``success``: its verdict. ``cache``
    is set when the execute options asked for a cached run."""

    success: bool
    message: str
    actions: List[AgentAction]
    completed: bool
    metadata: Dict[str, Any] = field(default_factory=dict)
    usage: Optional[Usage] = None
    action_id: Optional[str] = None
    page_events: List[PageEvent] = field(default_factory=list)
    cache: Optional[AgentCache] = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any], data: Optional[Mapping[str, Any]] = None) -> "AgentResult":
        """From the REST answer's ``data.result`` (``raw``), with ``data`` itself for its action id and page events."""
        usage, cache = raw.get("usage"), raw.get("cache")
        return cls(
            success=raw["success"],
            message=raw["message"],
            actions=[AgentAction.from_json(a) for a in _get(raw, "actions", [])],
            completed=raw["completed"],
            metadata=dict(_get(raw, "metadata", {})),
            usage=None if usage is None else Usage.from_json(usage),
            action_id=None if data is None else data.get("actionId"),
            page_events=[] if data is None else _page_events(data),
            cache=None if cache is None else AgentCache.from_json(cache),
        )


@dataclass(frozen=True)
class StepTarget:
    """The element of a recorded step: Playwright's ``selector`` for it (what codegen writes: role and name, label,
    test id, ...) and its ``description`` as the page text named it (``button "Sign in"``)."""

    selector: str
    description: str

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "StepTarget":
        return cls(selector=raw["selector"], description=raw["description"])


@dataclass(frozen=True)
class ReplayHeal:
    """A step of a replay (1-based) whose recorded target was gone or ambiguous, and the one a model call found."""

    step: int
    was: StepTarget
    now: StepTarget

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "ReplayHeal":
        return cls(step=raw["step"], was=StepTarget.from_json(raw["was"]), now=StepTarget.from_json(raw["now"]))


@dataclass(frozen=True)
class ReplayFailure:
    """The step a replay stopped at (1-based): what it ``expected``, the error, and where the page was and what it
    showed instead (``page_text``, cut)."""

    step: int
    method: str
    expected: str
    code: str
    message: str
    url: str
    title: str
    page_text: str

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "ReplayFailure":
        return cls(
            step=raw["step"],
            method=raw["method"],
            expected=raw["expected"],
            code=raw["code"],
            message=raw["message"],
            url=raw["url"],
            title=raw["title"],
            page_text=raw["pageText"],
        )


@dataclass(frozen=True)
class ReplayResult:
    """Answer of ``session.replay``: of the run's ``steps``, how many were ``replayed`` as recorded, which were
    ``healed`` by a model, and where it ``failed`` (``success`` False); ``url`` and ``title`` say where the page ended.
    ``usage`` is set only when a model healed a step."""

    success: bool
    steps: int
    replayed: int
    healed: List[ReplayHeal]
    url: str
    title: str
    failed: Optional[ReplayFailure] = None
    run_id: Optional[str] = None
    action_id: Optional[str] = None
    usage: Optional[Usage] = None
    page_events: List[PageEvent] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ReplayResult":
        raw = data["result"]
        failed, usage = raw.get("failed"), data.get("usage")
        return cls(
            success=raw["success"],
            steps=raw["steps"],
            replayed=raw["replayed"],
            healed=[ReplayHeal.from_json(heal) for heal in _get(raw, "healed", [])],
            url=raw["url"],
            title=raw["title"],
            failed=None if failed is None else ReplayFailure.from_json(failed),
            run_id=raw.get("runId"),
            action_id=data.get("actionId"),
            usage=None if usage is None else Usage.from_json(usage),
            page_events=_page_events(data),
        )


@dataclass(frozen=True)
class StreamEvent:
    """One Server-Sent Event of a streamed operation: ``starting``, ``connected``, ``log``, then ``finished`` or
    ``error``. ``data`` is the parsed JSON: for ``finished`` the body the plain call answers, for ``error`` the error
    body ``{"success": False, "error": {"code", "message"}}``."""

    event: str
    data: Any


@dataclass(frozen=True)
class TabInfo:
    """A page of the session; the operations act on the ``active`` one. Several only with the server's ``--popups tab``."""

    tab_id: str
    url: str
    active: bool

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "TabInfo":
        return cls(tab_id=raw["tabId"], url=raw["url"], active=bool(raw["active"]))


@dataclass(frozen=True)
class ObserveAction:
    """An element one can act on and the method that fits it; ``page.act(observe_action)`` performs it as is.

    ``arguments`` use the wire names of the method (``fill`` ``{"value"}``, ``selectOption`` ``{"values"}``,
    ``dragTo`` ``{"targetRef"}``, ...); ``with_arguments(value="alice")`` gives a copy with other arguments."""

    ref: str
    description: str
    method: str
    arguments: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "ObserveAction":
        return cls(ref=raw["ref"], description=raw["description"], method=raw["method"], arguments=dict(_get(raw, "arguments", {})))

    def with_arguments(self, **arguments: Any) -> "ObserveAction":
        """The same element and method with these arguments instead (``field.with_arguments(value="alice")``)."""
        return replace(self, arguments=arguments)

    def to_json(self) -> Dict[str, Any]:
        return {"ref": self.ref, "method": self.method, "arguments": dict(self.arguments), "description": self.description}


@dataclass(frozen=True)
class ObserveResult:
    """Answer of ``page.observe``: the ``actions`` found (iterable and indexable like a list), with the operation's
    ``action_id`` and, when a model picked them, its ``usage``."""

    actions: List[ObserveAction]
    action_id: Optional[str] = None
    usage: Optional[Usage] = None
    page_events: List[PageEvent] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ObserveResult":
        usage = data.get("usage")
        return cls(
            actions=[ObserveAction.from_json(a) for a in _get(data["result"], "actions", [])],
            action_id=data.get("actionId"),
            usage=None if usage is None else Usage.from_json(usage),
            page_events=_page_events(data),
        )

    def __iter__(self) -> Iterator[ObserveAction]:
        return iter(self.actions)

    def __len__(self) -> int:
        return len(self.actions)

    def __getitem__(self, index: int) -> ObserveAction:
        return self.actions[index]


@dataclass(frozen=True)
class EvaluateResult:
    """Answer of ``page.evaluate``: ``result``, the script's JSON value (None for undefined, the session's secrets
    masked); with ``truncated``, the first 65,536 characters of its JSON text, as a string."""

    result: Any
    truncated: bool = False
    action_id: Optional[str] = None
    page_events: List[PageEvent] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "EvaluateResult":
        result = data["result"]
        return cls(
            result=result.get("result"),
            truncated=bool(result.get("truncated", False)),
            action_id=data.get("actionId"),
            page_events=_page_events(data),
        )


@dataclass(frozen=True)
class PerformedAction:
    """The action ``act`` performed, as given or as the model chose it; ``%name%`` placeholders stay placeholders."""

    method: str
    arguments: Dict[str, Any]
    description: str
    ref: Optional[str] = None
    selector: Optional[str] = None
    x: Optional[float] = None
    y: Optional[float] = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "PerformedAction":
        return cls(
            method=raw["method"],
            arguments=dict(_get(raw, "arguments", {})),
            description=raw.get("description", ""),
            ref=raw.get("ref"),
            selector=raw.get("selector"),
            x=raw.get("x"),
            y=raw.get("y"),
        )


@dataclass(frozen=True)
class PageDiff:
    """Lines of the page text that an action added and removed (same document), each in page order; a stretch
    reordered or rewritten counts as all removed and all added.

    ``lines`` is the change as the server's text answer shows it, in page order: ``+ line``, ``- line``,
    ``- N lines (first … last)`` for a run removed, ``  line`` for an unchanged line beside a change (the label of a
    value that changed). It is None when it would be the removed lines (``- line``) then the added ones (``+ line``)."""

    added: List[str]
    removed: List[str]
    lines: Optional[List[str]] = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "PageDiff":
        lines = raw.get("lines")
        return cls(added=list(raw["added"]), removed=list(raw["removed"]), lines=None if lines is None else list(lines))


@dataclass(frozen=True)
class Settled:
    """How long ``act`` waited for the page to finish reacting, and for what (``nothing``, ``navigation``,
    ``network``, ``timers``, ``animations``, ``dom``, or ``timeout`` with ``busy`` saying what was still pending)."""

    waited_ms: int
    waited_for: str
    busy: Optional[str] = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "Settled":
        return cls(waited_ms=raw["waitedMs"], waited_for=raw["waitedFor"], busy=raw.get("busy"))


@dataclass(frozen=True)
class ActStep:
    """One action of an ``act`` with several actions: its method and what it did."""

    method: str
    message: str

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "ActStep":
        return cls(method=raw["method"], message=raw["message"])


@dataclass(frozen=True)
class ActFailure:
    """The action of several that failed (``step``, 1-based) and its error; those after it did not run."""

    step: int
    code: str
    message: str

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "ActFailure":
        return cls(step=raw["step"], code=raw["code"], message=raw["message"])


@dataclass(frozen=True)
class ActResult:
    """Answer of ``page.act``: what was done and what it changed on the page.

    ``diff`` holds the page text's added and removed lines since the last read; ``page_text`` the whole text when
    the page navigated (``navigated``), had not been read before, or costs fewer tokens than its change;
    ``truncated`` says what was cut to stay within ``max_tokens``; ``tabs`` is set when the session has more than one
    tab. With several actions, ``steps`` says what each did and ``failed`` which one failed (``success`` is then
    False)."""

    success: bool
    message: str
    action: PerformedAction
    url: str
    title: str
    page_changed: bool
    navigated: bool
    diff: Optional[PageDiff] = None
    page_text: Optional[str] = None
    truncated: Optional[str] = None
    tabs: Optional[List[TabInfo]] = None
    action_id: Optional[str] = None
    usage: Optional[Usage] = None
    settled: Optional[Settled] = None
    steps: Optional[List[ActStep]] = None
    failed: Optional[ActFailure] = None
    page_events: List[PageEvent] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ActResult":
        raw = data["result"]
        diff, tabs, usage, settled = raw.get("diff"), raw.get("tabs"), data.get("usage"), raw.get("settled")
        steps, failed = raw.get("steps"), raw.get("failed")
        return cls(
            success=raw["success"],
            message=raw["message"],
            action=PerformedAction.from_json(raw["action"]),
            url=raw["url"],
            title=raw["title"],
            page_changed=raw["pageChanged"],
            navigated=raw["navigated"],
            diff=None if diff is None else PageDiff.from_json(diff),
            page_text=raw.get("pageText"),
            truncated=raw.get("truncated"),
            tabs=None if tabs is None else [TabInfo.from_json(t) for t in tabs],
            action_id=data.get("actionId"),
            usage=None if usage is None else Usage.from_json(usage),
            settled=None if settled is None else Settled.from_json(settled),
            steps=None if steps is None else [ActStep.from_json(step) for step in steps],
            failed=None if failed is None else ActFailure.from_json(failed),
            page_events=_page_events(data),
        )


class Screenshot(bytes):
    """The image bytes of ``page.screenshot``, usable wherever bytes are (``Path("a.png").write_bytes(shot)``),
    with ``mime_type`` (``image/png`` or ``image/jpeg``), ``width`` and ``height`` in pixels, ``action_id``, and
    ``annotated`` (how many refs were drawn; None unless ``annotate=True``)."""

    mime_type: str
    width: int
    height: int
    action_id: Optional[str]
    annotated: Optional[int]

    def __new__(
        cls, data: bytes, mime_type: str, width: int, height: int, action_id: Optional[str] = None, annotated: Optional[int] = None
    ) -> "Screenshot":
        shot = super().__new__(cls, data)
        shot.mime_type, shot.width, shot.height, shot.action_id, shot.annotated = mime_type, width, height, action_id, annotated
        return shot

    def __repr__(self) -> str:
        drawn = "" if self.annotated is None else f", annotated={self.annotated}"
        return f"Screenshot(mime_type={self.mime_type!r}, width={self.width}, height={self.height}, bytes={len(self)}{drawn})"


@dataclass(frozen=True)
class LiveView:
    """A link to watch the session live (and, interactive, click and type in it). The link is its only credential."""

    url: str
    expires_at: str
    interactive: bool

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "LiveView":
        return cls(url=raw["url"], expires_at=raw["expiresAt"], interactive=bool(raw["interactive"]))
