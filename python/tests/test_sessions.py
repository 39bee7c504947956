"""Sessions and navigate: every call form, the environment, context managers."""

import os
import unittest
from unittest import mock

from browser_session_mcp import Client, NavigateResponse, ServiceError, SessionInfo

from .support import ServerTestCase, site


class SessionTest(ServerTestCase):
    def test_start_get_list_refresh_and_end(self) -> None:
        session = self.client.sessions.start()
        self.assertIsInstance(session.info, SessionInfo)
        self.assertEqual(session.info.url, "about:blank")
        self.assertEqual((session.info.host, session.info.state), ("local", "open"))
        self.assertEqual(session.info.frames[0].frame_id, session.info.main_frame_id)
        self.assertIsNone(session.info.frames[0].parent_frame_id)

        same = self.client.sessions.get(session.id)
        self.assertEqual(same.id, session.id)
        self.assertIn(session.id, [s.id for s in self.client.sessions.list()])

        session.navigate(site("/index.html"))
        self.assertEqual(session.refresh().url, site("/index.html"))

        session.end()
        session.end()  # a second end is a no-op, not an error
        with self.assertRaises(ServiceError) as caught:
            self.client.sessions.get(session.id)
        self.assertEqual((caught.exception.code, caught.exception.status), ("session_not_found", 404))
        self.assertNotIn(session.id, [s.id for s in self.client.sessions.list()])

    def test_navigate_answers_the_page_events_it_met(self) -> None:
        with self.client.sessions.start() as session:
            response = session.navigate(site("/dialogs.html"))
            dialogs = [event for event in response.data.page_events if event.type == "dialog"]
            self.assertGreaterEqual(len(dialogs), 1, response.data.page_events)
            self.assertIn("Hello from alert", dialogs[0].message)
            self.assertIsNone(response.data.usage)

    def test_navigate_returns_the_typed_response(self) -> None:
        with self.client.sessions.start() as session:
            response = session.navigate(site("/status?code=404"))
            self.assertIsInstance(response, NavigateResponse)
            self.assertTrue(response.success)
            result = response.data.result
            assert result is not None
            self.assertEqual((result.status, result.ok, result.url), (404, False, site("/status?code=404")))
            self.assertEqual(result.frame_id, session.info.main_frame_id)
            self.assertIsInstance(response.data.action_id, str)
            self.assertIn("content-type", result.headers)

    def test_navigate_options_referer_timeout_wait_until(self) -> None:
        with self.client.sessions.start() as session:
            response = session.navigate(
                site("/echo-headers"), referer="http://referer.test/from", timeout=15_000, wait_until="domcontentloaded"
            )
            assert response.data.result is not None
            self.assertEqual(response.data.result.status, 200)
            self.assertIn("http://referer.test/from", session.page.extract()["pageText"])

            # A navigation slower than `timeout` fails with the server's code: the option reached it.
            with self.assertRaises(ServiceError) as caught:
                session.navigate(site("/slow?ms=5000"), timeout=300, wait_until="load")
            self.assertEqual((caught.exception.code, caught.exception.status), ("navigation_timeout", 504))

    def test_navigate_a_frame_by_frame_id_and_a_same_document_navigation(self) -> None:
        with self.client.sessions.start() as session:
            session.navigate(site("/frames.html"))
            child = next(f for f in session.refresh().frames if f.parent_frame_id is not None)
            response = session.navigate(site("/index.html"), frame_id=child.frame_id)
            assert response.data.result is not None
            self.assertEqual(response.data.result.frame_id, child.frame_id)
            self.assertEqual(session.refresh().url, site("/frames.html"))

            session.navigate(site("/hash.html"))
            self.assertIsNone(session.navigate(site("/hash.html#section")).data.result)

    def test_session_context_manager_ends_the_session_even_on_an_exception(self) -> None:
        with self.client.sessions.start() as session:
            first = session.id
        second = ""
        with self.assertRaises(RuntimeError):
            with self.client.sessions.start() as session:
                second = session.id
                raise RuntimeError("boom")
        for session_id in (first, second):
            with self.assertRaises(ServiceError) as caught:
                self.client.sessions.get(session_id)
            self.assertEqual(caught.exception.code, "session_not_found")

    def test_client_context_manager_ends_the_sessions_it_started(self) -> None:
        with Client() as other:
            kept = other.sessions.start()
            ended = other.sessions.start()
            ended.end()
        self.assertNotIn(kept.id, [s.id for s in self.client.sessions.list()])
        with self.assertRaises(ServiceError):
            self.client.sessions.get(kept.id)

    def test_address_and_key_come_from_the_environment(self) -> None:
        env = {"SVC_BASE_URL": os.environ["SVC_BASE_URL"], "SVC_API_KEY": os.environ["SVC_API_KEY"]}
        with mock.patch.dict(os.environ, env, clear=True):
            self.assertIsInstance(Client().sessions.list(), list)
        with mock.patch.dict(os.environ, {}, clear=True):
            with self.assertRaises(ValueError):
                Client()
            # No key: the server asks for one.
            with self.assertRaises(ServiceError) as caught:
                Client(env["SVC_BASE_URL"]).sessions.list()
            self.assertEqual((caught.exception.code, caught.exception.status), ("unauthorized", 401))


if __name__ == "__main__":
    unittest.main()
