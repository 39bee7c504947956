"""Which OpenAPI schema each result class mirrors, and the check that the server's ``/v1/openapi.json`` has no
property the client does not know (``tests/test_openapi.py`` runs it against the live server).

A place in the document is written ``Component/prop/prop`` (``items`` for an array's items; ``anyOf`` branches share
their parent's place; ``*`` matches any part). Every operation is reachable through ``client.call(operationId)``,
which answers plain dicts, so a response component that no mirror names (no place starts with its name) is not a
problem: ``answered_as_dicts`` lists those. The check walks every response component a mirror names, from the
component down, and every object schema with properties it meets must be one of:

- a ``Mirror``: the wire names of its properties (camelCase, or as ``renamed`` says) are fields of the class, or
  are ``ignored`` with the reason; ``flattened`` properties are not fields but their object is walked (``ActResult``
  holds ``data`` and ``data.result`` together); a field the wire lacks must be ``extra``;
- under a property the mirror lists as ``opaque`` (a ``dict`` in Python).
A response component's top level (``success`` and ``data``/``error``) is unwrapped by the client unless mirrored.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from . import types as t
from .errors import ServiceError
from .profiles import ProfileInfo, ProfileList

# The operation metadata every operation's data carries beside its result; said once for the mirrors that skip it.
_META_NOT_HERE = "this call's answer is the result alone (the metadata reaches Python on navigate, observe, act and the agent)"


@dataclass(frozen=True)
class Mirror:
    """A class and the places of the document it mirrors."""

    cls: Optional[type]
    at: Tuple[str, ...]
    renamed: Mapping[str, str] = field(default_factory=dict)
    ignored: Mapping[str, str] = field(default_factory=dict)
    flattened: Tuple[str, ...] = ()
    opaque: Tuple[str, ...] = ()
    extra: Tuple[str, ...] = ()
    #: The fields of a class that is not a dataclass.
    fields: Tuple[str, ...] = ()

    def field_names(self) -> Tuple[str, ...]:
        if self.cls is not None and dataclasses.is_dataclass(self.cls):
            return tuple(f.name for f in dataclasses.fields(self.cls))
        return self.fields

    def name(self) -> str:
        return self.cls.__name__ if self.cls is not None else "(unwrapped by the client)"


_OP_META = {"actionId": "action_id", "pageEvents": "page_events"}

MIRRORS: Sequence[Mirror] = (
    Mirror(t.Usage, ("*/usage",)),
    Mirror(t.PageEvent, ("*/pageEvents/items", "*/recentEvents/items")),
    Mirror(t.FrameInfo, ("*/frames/items",)),
    Mirror(t.TabInfo, ("*/tabs/items",)),
    Mirror(
        t.SessionInfo,
        ("SessionStartResponse/data", "SessionGetResponse/data", "SessionListResponse/data/sessions/items"),
        opaque=("options",),
    ),
    Mirror(
        None,
        ("SessionListResponse/data",),
        flattened=("sessions",),
        ignored={"unavailable": "peers that did not answer: sessions.list() answers the sessions it could list"},
    ),
    Mirror(t.NavigateResponse, ("SessionNavigateResponse",)),
    Mirror(
        t.NavigateResultOutput,
        ("SessionNavigateResponse/data",),
        renamed=_OP_META,
        ignored={"wrapped": "only extract wraps a result"},
    ),
    Mirror(t.NavigationResponse, ("SessionNavigateResponse/data/result",), opaque=("serverAddr", "timing")),
    Mirror(
        t.ObserveResult,
        ("SessionObserveResponse/data", "SessionObserveResponse/data/result"),
        renamed=_OP_META,
        flattened=("result",),
        ignored={"wrapped": "only extract wraps a result"},
    ),
    Mirror(t.ObserveAction, ("SessionObserveResponse/data/result/actions/items",)),
    Mirror(
        t.ActResult,
        ("SessionActResponse/data", "SessionActResponse/data/result"),
        renamed=_OP_META,
        flattened=("result",),
        ignored={"wrapped": "only extract wraps a result"},
    ),
    Mirror(
        t.EvaluateResult,
        ("SessionEvaluateResponse/data",),
        renamed=_OP_META,
        flattened=("result",),
        ignored={"usage": "a script calls no model", "wrapped": "only extract wraps a result"},
        extra=("result", "truncated"),
    ),
    Mirror(t.EvaluateResult, ("SessionEvaluateResponse/data/result",), extra=("action_id", "page_events")),
    Mirror(t.PerformedAction, ("SessionActResponse/data/result/action",)),
    Mirror(t.PageDiff, ("SessionActResponse/data/result/diff",)),
    Mirror(t.Settled, ("SessionActResponse/data/result/settled",)),
    Mirror(t.ActStep, ("SessionActResponse/data/result/steps/items",)),
    Mirror(t.ActFailure, ("SessionActResponse/data/result/failed",)),
    Mirror(
        t.AgentResult,
        ("SessionAgentExecuteResponse/data", "SessionAgentExecuteResponse/data/result"),
        renamed=_OP_META,
        flattened=("result",),
        ignored={"wrapped": "only extract wraps a result"},
    ),
    Mirror(t.AgentAction, ("SessionAgentExecuteResponse/data/result/actions/items",)),
    Mirror(t.AgentCache, ("SessionAgentExecuteResponse/data/result/cache",)),
    Mirror(
        t.ReplayResult,
        ("SessionReplayResponse/data", "SessionReplayResponse/data/result"),
        renamed=_OP_META,
        flattened=("result",),
        ignored={"wrapped": "only extract wraps a result"},
    ),
    Mirror(t.ReplayHeal, ("SessionReplayResponse/data/result/healed/items",)),
    Mirror(t.StepTarget, ("SessionReplayResponse/data/result/healed/items/was", "SessionReplayResponse/data/result/healed/items/now")),
    Mirror(t.ReplayFailure, ("SessionReplayResponse/data/result/failed",)),
    Mirror(
        t.Screenshot,
        ("SessionScreenshotResponse/data", "SessionScreenshotResponse/data/result"),
        fields=("mime_type", "width", "height", "action_id", "annotated"),
        renamed={"actionId": "action_id"},
        flattened=("result",),
        ignored={
            "bytes": "len(screenshot): the Screenshot is the image bytes",
            "contentBase64": "the client asks for the image itself, not its JSON form",
            "mediaType": "the image form's content type is mime_type",
            "pageEvents": "the image form carries only x-action-id",
            "usage": "a screenshot calls no model",
            "wrapped": "only extract wraps a result",
        },
    ),
    Mirror(t.LiveView, ("SessionLiveViewResponse/data",)),
    Mirror(ProfileList, ("ProfileListResponse/data",)),
    Mirror(ProfileInfo, ("ProfileListResponse/data/profiles/items", "ProfileSaveResponse/data/result")),
    Mirror(
        None,
        ("ProfileSaveResponse/data",),
        flattened=("result",),
        ignored={name: _META_NOT_HERE for name in ("actionId", "usage", "pageEvents", "wrapped")},
    ),
    Mirror(ServiceError, ("ErrorBody/error",), fields=("code", "message", "details")),
)

def snake(name: str) -> str:
    """``mainFrameId`` -> ``main_frame_id``; ``extraHTTPHeaders`` -> ``extra_http_headers``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def response_components(document: Mapping[str, Any]) -> List[str]:
    """The component names the paths answer with (every status, every content type), in document order."""
    names: List[str] = []
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, Mapping):
                continue
            for response in operation.get("responses", {}).values():
                for content in response.get("content", {}).values():
                    ref = content.get("schema", {}).get("$ref", "")
                    name = ref.rsplit("/", 1)[-1] if ref.startswith("#/components/schemas/") else ""
                    if name and name not in names:
                        names.append(name)
    return names


def mirrored_components(mirrors: Sequence[Mirror] = MIRRORS) -> Set[str]:
    """The response components a mirror names by their first part (a pattern such as ``*/usage`` names none)."""
    firsts = {place.split("/", 1)[0] for mirror in mirrors for place in mirror.at}
    return {first for first in firsts if not any(c in first for c in "*?[")}


def answered_as_dicts(document: Mapping[str, Any], mirrors: Sequence[Mirror] = MIRRORS) -> List[str]:
    """The operationIds whose JSON answer no class mirrors: ``call`` answers their ``data`` as dicts (so does a typed
    method such as ``session.log()`` where there is one). Answers with no property but ``success`` (session end,
    profile delete; the OpenAPI document, a free-form object) are not listed."""
    schemas = document.get("components", {}).get("schemas", {})
    mirrored = mirrored_components(mirrors)
    found: List[str] = []
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, Mapping) or not isinstance(operation.get("operationId"), str):
                continue
            content = operation.get("responses", {}).get("200", {}).get("content", {}).get("application/json", {})
            name = content.get("schema", {}).get("$ref", "").rsplit("/", 1)[-1]
            bare = set(schemas.get(name, {}).get("properties", {})) <= {"success"}
            if name and name not in mirrored and not bare:
                found.append(operation["operationId"])
    return found


def check(document: Mapping[str, Any], mirrors: Sequence[Mirror] = MIRRORS) -> List[str]:
    """What the mirrored classes lack for this OpenAPI document, one line each; empty when every property of every
    response a mirror names is known and every field is sent."""
    return _Checker(document, mirrors).run()


class _Checker:
    def __init__(self, document: Mapping[str, Any], mirrors: Sequence[Mirror]) -> None:
        self.schemas: Mapping[str, Any] = document.get("components", {}).get("schemas", {})
        self.document = document
        self.mirrors = mirrors
        self.problems: List[str] = []
        self.seen: Dict[int, set] = {}

    def run(self) -> List[str]:
        components = response_components(self.document)
        if not components:
            self.problems.append("the document answers no response schema: is it the service's /v1/openapi.json?")
        mirrored = mirrored_components(self.mirrors)
        for name in components:
            if name in mirrored:
                self.walk(self.schemas.get(name, {}), name, top=True)
        for index, mirror in enumerate(self.mirrors):
            for name in sorted(set(mirror.field_names()) - self.seen.get(index, set()) - set(mirror.extra)):
                self.problems.append(f"{mirror.name()}.{name}: no such property at {', '.join(mirror.at)} (a field the server does not send)")
        return self.problems

    def mirror_at(self, place: str) -> Optional[Tuple[int, Mirror]]:
        for index, mirror in enumerate(self.mirrors):
            if any(fnmatchcase(place, pattern) for pattern in mirror.at):
                return index, mirror
        return None

    def walk(self, schema: Any, place: str, top: bool = False) -> None:
        for node in self.nodes(schema):
            if "items" in node:
                self.walk(node["items"], place + "/items")
            properties = node.get("properties")
            if not isinstance(properties, Mapping) or not properties:
                continue
            found = self.mirror_at(place)
            if found is None:
                if top:
                    # The envelope: success is the call not raising; data or error is walked.
                    for name, child in properties.items():
                        if name != "success":
                            self.walk(child, f"{place}/{name}")
                    continue
                self.problems.append(f"{place}: an object with {', '.join(sorted(properties))} that no class mirrors")
                continue
            index, mirror = found
            fields = set(mirror.field_names())
            for name, child in properties.items():
                if name in mirror.ignored:
                    continue
                if name in mirror.flattened:
                    self.walk(child, f"{place}/{name}")
                    continue
                python = mirror.renamed.get(name, snake(name))
                if python not in fields:
                    self.problems.append(f"{mirror.name()} lacks {python!r}: the server sends {name!r} at {place}")
                    continue
                self.seen.setdefault(index, set()).add(python)
                if name not in mirror.opaque:
                    self.walk(child, f"{place}/{name}")

    def nodes(self, schema: Any) -> Iterator[Mapping[str, Any]]:
        """The object schemas a schema stands for: itself, its $ref, and its anyOf/oneOf/allOf branches."""
        if not isinstance(schema, Mapping):
            return
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            yield from self.nodes(self.schemas.get(ref.rsplit("/", 1)[-1], {}))
            return
        yield schema
        for key in ("anyOf", "oneOf", "allOf"):
            for branch in schema.get(key, []) or []:
                yield from self.nodes(branch)
