"""Errors: the server's {code, message} as ServiceError with status; unreachable and non-JSON answers."""

import os
import socket
import unittest

from browser_session_mcp import Client, ServiceError

from .support import OTHER_KEY, ServerTestCase, site


class ErrorTest(ServerTestCase):
    def assertServiceError(self, caught: ServiceError, code: str, status: object) -> None:
        self.assertEqual((caught.code, caught.status), (code, status), str(caught))
        self.assertTrue(caught.message)

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
