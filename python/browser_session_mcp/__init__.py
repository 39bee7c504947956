"""Python client of browser-session-mcp: isolated real-browser sessions driven over its REST API.

    from browser_session_mcp import Client

    with Client("http://127.0.0.1:8931", api_key="...") as client:
        with client.sessions.start() as session:
            session.navigate("https://example.com")
            print(session.page.extract()["pageText"])
"""

from ._transport import EventStream
from .client import Client, Sessions
from .errors import ServiceError
from .page import Page
from .profiles import ProfileInfo, ProfileList, Profiles
from .session import Agent, Session
from .sse import SseMessage, SseParser
from .types import (
    ActResult,
    AgentAction,
    AgentResult,
    FrameInfo,
    LiveView,
    NavigateResponse,
    NavigateResultOutput,
    NavigationResponse,
    ObserveAction,
    ObserveResult,
    PageDiff,
    PageEvent,
    PerformedAction,
    Screenshot,
    SessionInfo,
    StreamEvent,
    TabInfo,
    Usage,
)

__version__ = "0.1.0"

__all__ = [
    "ActResult",
    "Agent",
    "AgentAction",
    "AgentResult",
    "Client",
    "EventStream",
    "FrameInfo",
    "LiveView",
    "NavigateResponse",
    "NavigateResultOutput",
    "NavigationResponse",
    "ObserveAction",
    "ObserveResult",
    "Page",
    "ProfileInfo",
    "ProfileList",
    "Profiles",
    "PageDiff",
    "PageEvent",
    "PerformedAction",
    "Screenshot",
    "ServiceError",
    "Session",
    "SessionInfo",
    "Sessions",
    "SseMessage",
    "SseParser",
    "StreamEvent",
    "TabInfo",
    "Usage",
]
