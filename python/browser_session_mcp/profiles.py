"""Storage state and named profiles: ``session.state()``, ``session.save_profile()``, ``client.profiles``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Union
from urllib.parse import quote

from ._transport import Transport

if TYPE_CHECKING:
    from .session import Session

#: Playwright's storage state: ``{"cookies": [...], "origins": [{"origin", "localStorage", "indexedDB"?}]}``.
StorageState = Dict[str, Any]


@dataclass(frozen=True)
class ProfileInfo:
    """A saved profile as the server describes it: never its cookies or storage, only how much it holds."""

    name: str
    saved_at: str
    cookies: int
    origins: int
    bytes: int

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "ProfileInfo":
        return cls(name=raw["name"], saved_at=raw["savedAt"], cookies=raw["cookies"], origins=raw["origins"], bytes=raw["bytes"])


@dataclass(frozen=True)
class ProfileList:
    """The caller's profiles; ``unreadable`` counts files of theirs that failed the integrity check."""

    profiles: List[ProfileInfo]
    unreadable: int = 0

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "ProfileList":
        return cls(profiles=[ProfileInfo.from_json(item) for item in raw["profiles"]], unreadable=raw.get("unreadable", 0))

    def names(self) -> List[str]:
        return [profile.name for profile in self.profiles]


class Profiles:
    """``client.profiles``: the named storage states the server keeps for this API key (``--profile-dir``).

    Names are per key: another key's profile of the same name is ``profile_not_found`` (404), as if it did not exist.
    """

    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def list(self) -> ProfileList:
        return ProfileList.from_json(self._transport.request("GET", "/v1/profiles")["data"])

    def save(self, session: Union["Session", str], name: Optional[str] = None) -> ProfileInfo:
        """Saves a session's state (a ``Session`` or its id) under ``name``; the last save of a name wins."""
        session_id = session if isinstance(session, str) else session.id
        body = {} if name is None else {"name": name}
        raw = self._transport.request("POST", f"/v1/sessions/{quote(session_id, safe='')}/saveProfile", body)
        return ProfileInfo.from_json(raw["data"]["result"])

    def delete(self, name: str) -> None:
        self._transport.request("POST", "/v1/profiles/delete", {"name": name})
