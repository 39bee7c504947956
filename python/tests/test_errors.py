"""Errors: the server's {code, message} as ServiceError with status; unreachable and non-JSON answers."""

import os
import socket
import threading
import unittest

from browser_session_mcp import (
    ClientTimeout,
    Client,
    InvalidArgument,
    NotFound,
    RateLimited,
    ServiceError,
    SessionLimit,
    SessionNotFound,
    Timeout,
    Unauthorized,
    Unreachable,
    errors,
)
from browser_session_mcp._transport import parse_retry_after, retry_delay

from .support import OTHER_KEY, ServerTestCase, site


class ErrorClassTest(unittest.TestCase):
    """The code -> class map, without a server."""

    def test_codes_map_to_subclasses_and_unknown_codes_stay_plain(self) -> None:
        cases = {
            "session_not_found": SessionNotFound,
            "url_not_allowed": errors.UrlNotAllowed,
            "session_limit": SessionLimit,
            "invalid_argument": InvalidArgument,
            "unauthorized": Unauthorized,
            "timeout": Timeout,
            "session_unavailable": errors.SessionUnavailable,
            "client_timeout": ClientTimeout,
        }
        for code, cls in cases.items():
            error = errors.error_for(code, "m", 400)
            self.assertIs(type(error), cls)
            self.assertEqual((error.code, error.message, error.status), (code, "m", 400))
        unknown = errors.error_for("brand_new_code", "m", 418)
        self.assertIs(type(unknown), ServiceError)
        self.assertEqual(unknown.code, "brand_new_code")

    def test_families(self) -> None:
        self.assertTrue(issubclass(SessionNotFound, NotFound) and issubclass(SessionLimit, RateLimited))
        self.assertTrue(issubclass(errors.NavigationTimeout, Timeout))
        # The client's own timeout is not the server's timeout code.
        self.assertFalse(issubclass(ClientTimeout, Timeout))
        for cls in set(errors.ERROR_CLASSES.values()):
            self.assertTrue(issubclass(cls, ServiceError), cls)

    def test_retry_after_as_seconds_or_an_http_date(self) -> None:
        self.assertEqual(parse_retry_after("2"), 2.0)
        self.assertEqual(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), 0.0)
        self.assertIsNone(parse_retry_after(None))
        self.assertIsNone(parse_retry_after("soon"))

    def test_only_refusals_with_retry_after_are_retried_bounded_and_capped(self) -> None:
        refused = errors.error_for("session_limit", "m", 429, retry_after=2.0)
        self.assertEqual([retry_delay(refused, attempt, 2) for attempt in (1, 2, 3)], [2.0, 2.0, None])
        self.assertIsNone(retry_delay(refused, 1, 0))
        self.assertEqual(retry_delay(errors.error_for("browser_unavailable", "m", 503, retry_after=0.0), 3, 5), 1.0)
        self.assertEqual(retry_delay(errors.error_for("session_limit", "m", 429, retry_after=3600.0), 1, 2), 30.0)
        # No Retry-After, or not a 429/503: the call may have run, it is never sent again.
        self.assertIsNone(retry_delay(errors.error_for("session_limit", "m", 429), 1, 2))
        self.assertIsNone(retry_delay(errors.error_for("browser_unavailable", "m", 503), 1, 2))
        self.assertIsNone(retry_delay(errors.error_for("internal", "m", 500, retry_after=1.0), 1, 2))
        self.assertIsNone(retry_delay(errors.error_for("client_timeout", "m"), 1, 2))

    def test_no_answer_in_time_is_client_timeout(self) -> None:
        with socket.socket() as silent:
            silent.bind(("127.0.0.1", 0))
            silent.listen(1)
            port = silent.getsockname()[1]
            accepted = []
            thread = threading.Thread(target=lambda: accepted.append(silent.accept()), daemon=True)
            thread.start()
            with self.assertRaises(ServiceError) as caught:
                Client(f"http://127.0.0.1:{port}", api_key="k", timeout=0.5).sessions.list()
            thread.join(5)
            for conn, _ in accepted:
                conn.close()
        self.assertIsInstance(caught.exception, ClientTimeout)
        self.assertNotIsInstance(caught.exception, Timeout)
        self.assertEqual((caught.exception.code, caught.exception.status), ("client_timeout", None))


class ErrorTest(ServerTestCase):
    def assertServiceError(self, caught: ServiceError, code: str, status: object) -> None:
        self.assertEqual((caught.code, caught.status), (code, status), str(caught))
        self.assertTrue(caught.message)
        self.assertIs(type(caught), errors.ERROR_CLASSES[code])

    def test_wrong_key_is_unauthorized(self) -> None:
        with self.assertRaises(ServiceError) as caught:
            Client(api_key="not-a-key").sessions.start()
        self.assertServiceError(caught.exception, "unauthorized", 401)

    def test_unknown_session_is_session_not_found(self) -> None:
        with self.assertRaises(ServiceError) as caught:
            self.client.sessions.get("no-such-session")
        self.assertServiceError(caught.exception, "session_not_found", 404)

    def test_another_keys_session_does_not_exist_for_this_key(self) -> None:
        with Client(api_key=OTHER_KEY) as other:
            theirs = other.sessions.start()
            with self.assertRaises(ServiceError) as caught:
                self.client.sessions.get(theirs.id)
            self.assertServiceError(caught.exception, "session_not_found", 404)
            self.assertNotIn(theirs.id, [s.id for s in self.client.sessions.list()])

    def test_bad_navigate_options_are_invalid_argument_with_the_field(self) -> None:
        with self.client.sessions.start() as session:
            with self.assertRaises(ServiceError) as caught:
                session.navigate(site("/index.html"), timeout=-1)
            self.assertServiceError(caught.exception, "invalid_argument", 400)
            self.assertIn("options.timeout", caught.exception.message)
            assert caught.exception.details is not None
            self.assertEqual(caught.exception.details["issues"][0]["path"], "options.timeout")
            with self.assertRaises(ServiceError) as caught:
                session.navigate(site("/index.html"), wait_until="never")  # type: ignore[arg-type]
            self.assertServiceError(caught.exception, "invalid_argument", 400)

    def test_operation_on_an_ended_session_is_session_not_found(self) -> None:
        session = self.client.sessions.start()
        session.end()
        with self.assertRaises(ServiceError) as caught:
            session.navigate(site("/index.html"))
        self.assertServiceError(caught.exception, "session_not_found", 404)

    def test_unreachable_server(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        # Nothing listens on the port once the probe is closed.
        with self.assertRaises(ServiceError) as caught:
            Client(f"http://127.0.0.1:{port}", api_key="k", timeout=5).sessions.list()
        self.assertServiceError(caught.exception, "unreachable", None)
        self.assertIsInstance(caught.exception, Unreachable)
        self.assertIn(f"127.0.0.1:{port}", caught.exception.message)

    def test_an_answer_that_is_not_json(self) -> None:
        # The local site server answers HTML, as a proxy or a wrong address would.
        with self.assertRaises(ServiceError) as caught:
            Client(site(""), api_key="k").sessions.get("x")
        self.assertServiceError(caught.exception, "invalid_response", 404)
        self.assertIn("not JSON", caught.exception.message)

    def test_bad_base_url(self) -> None:
        with self.assertRaises(ValueError):
            Client("127.0.0.1:8931")
        self.assertTrue(os.environ.get("SVC_BASE_URL"))


if __name__ == "__main__":
    unittest.main()
