"""What the tests share: the server's address and keys from the environment, and the fake model server's control."""

import json
import logging
import os
import unittest
import urllib.request
from typing import Any, Callable, Dict, List, Optional

from browser_session_mcp import Client, Session

NEEDS_SERVER = "needs the test server: run `npx vitest run test/python-client.test.ts` from the repository root"
HAVE_SERVER = bool(os.environ.get("SVC_BASE_URL") and os.environ.get("FAKE_LLM_CONTROL"))
SITE_URL = os.environ.get("SITE_URL", "")
OTHER_KEY = os.environ.get("SVC_OTHER_API_KEY", "")


def site(path: str) -> str:
    return SITE_URL + path


def _control(method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(
        os.environ["FAKE_LLM_CONTROL"] + path, data=data, method=method, headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read().decode("utf-8"))


def script_model(*replies: Dict[str, Any]) -> None:
    """Queues the fake model's next replies (the FakeReply shapes of test/fixtures/fake-llm.ts)."""
    _control("POST", "/enqueue", list(replies))


def reset_model() -> None:
    """No scripted reply and no recorded request."""
    _control("POST", "/reset")


def model_requests() -> List[Dict[str, Any]]:
    """What the fake model received since the last reset: ``{provider, path, authorization, body}`` each."""
    return _control("GET", "/requests")


@unittest.skipUnless(HAVE_SERVER, NEEDS_SERVER)
class ServerTestCase(unittest.TestCase):
    """A test against the real server; the fake model starts each test with no scripted reply and no requests."""

    client: Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.client = Client()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.client.close()

    def setUp(self) -> None:
        reset_model()


class SessionTestCase(ServerTestCase):
    """A server test whose tests share one browser session (each navigates first): a context per test costs seconds."""

    session: Session

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.session = cls.client.sessions.start()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.session.end()
        super().tearDownClass()


LIMITED_URL = os.environ.get("SVC_LIMITED_BASE_URL", "")
LIMITED_KEY = os.environ.get("SVC_LIMITED_API_KEY", "")
HAVE_LIMITED = bool(LIMITED_URL and LIMITED_KEY)


class RetryLog(logging.Handler):
    """Collects the client's retry records; ``on_retry`` runs at each, before the client waits."""

    def __init__(self, on_retry: Optional[Callable[[], None]] = None) -> None:
        super().__init__(logging.INFO)
        self.records: List[logging.LogRecord] = []
        self.on_retry = on_retry

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        if self.on_retry is not None:
            self.on_retry()

    def __enter__(self) -> "RetryLog":
        logger = logging.getLogger("browser_session_mcp")
        logger.addHandler(self)
        self._level = logger.level
        logger.setLevel(logging.INFO)
        return self

    def __exit__(self, *exc: object) -> None:
        logger = logging.getLogger("browser_session_mcp")
        logger.removeHandler(self)
        logger.setLevel(self._level)
