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
from .session import Agent, Page, Session
from .sse import SseMessage, SseParser
from .types import (
    AgentAction,
    AgentResult,
    FrameInfo,
    NavigateResponse,
    NavigateResultOutput,
    NavigationResponse,
    PageEvent,
    SessionInfo,
    StreamEvent,
    Usage,
)

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentAction",
    "AgentResult",
    "Client",
    "EventStream",
    "FrameInfo",
    "NavigateResponse",
    "NavigateResultOutput",
    "NavigationResponse",
    "Page",
    "PageEvent",
    "ServiceError",
    "Session",
    "SessionInfo",
    "Sessions",
    "SseMessage",
    "SseParser",
    "StreamEvent",
    "Usage",
]
