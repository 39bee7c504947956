"""``call``: any operation by its operationId, resolved from the server's /v1/openapi.json (read once per client)."""

import asyncio
import threading
import unittest
from typing import Any, Callable, List

from browser_session_mcp import AsyncClient, Client, Operation, SessionNotFound
from browser_session_mcp._operations import data_of, find, operations_of

from .support import HAVE_SERVER, NEEDS_SERVER, ServerTestCase, site

DOCUMENT = {
    "paths": {
        "/v1/sessions": {"get": {"operationId": "SessionList", "summary": "list"}},
        "/v1/sessions/{id}/navigate": {"post": {"operationId": "SessionNavigate"}},
        "/v1/things/{thing}": {"get": {"operationId": "ThingGet"}},
    }
}


class OperationTest(unittest.TestCase):
    """Resolution and request building, on a small document: no server needed."""

    def test_operations_by_operation_id_with_method_and_path(self) -> None:
        operations = operations_of(DOCUMENT)
        self.assertEqual(list(operations), ["SessionList", "SessionNavigate", "ThingGet"])
        self.assertEqual(operations["SessionList"], Operation("SessionList", "GET", "/v1/sessions", "list"))

    def test_the_session_id_fills_the_path_quoted_and_the_body_goes_as_json(self) -> None:
        navigate = operations_of(DOCUMENT)["SessionNavigate"]
        self.assertEqual(navigate.target({"url": "https://a.test"}, "a/b c"), ("POST", "/v1/sessions/a%2Fb%20c/navigate", {"url": "https://a.test"}))
        self.assertEqual(navigate.target(None, "s1"), ("POST", "/v1/sessions/s1/navigate", None))

    def test_a_get_sends_its_input_as_query_values_in_json(self) -> None:
        listing = operations_of(DOCUMENT)["SessionList"]
        self.assertEqual(listing.target({"limit": 5, "name": "x y"}, None), ("GET", "/v1/sessions?limit=5&name=%22x+y%22", None))
        self.assertEqual(listing.target({}, None), ("GET", "/v1/sessions", None))

    def test_a_missing_or_needless_session_id_is_a_value_error_before_sending(self) -> None:
        operations = operations_of(DOCUMENT)
        with self.assertRaisesRegex(ValueError, "SessionNavigate works on a session"):
            operations["SessionNavigate"].target({}, None)
        with self.assertRaisesRegex(ValueError, "SessionList takes no session"):
            operations["SessionList"].target(None, "s1")
        with self.assertRaisesRegex(ValueError, "path parameters the client cannot fill: thing"):
            operations["ThingGet"].target(None, None)

    def test_an_unknown_operation_id_is_a_value_error_naming_the_known_ones(self) -> None:
        with self.assertRaises(ValueError) as caught:
            find(operations_of(DOCUMENT), "SessionNavigat", "http://x")
        self.assertEqual(
            str(caught.exception),
            "No operation 'SessionNavigat' in the OpenAPI document of http://x; its operationIds: SessionList, SessionNavigate, ThingGet",
        )

    def test_the_answer_is_the_data_of_the_envelope(self) -> None:
        self.assertEqual(data_of({"success": True, "data": {"sessions": []}}), {"sessions": []})
        self.assertIsNone(data_of({"success": True}))
        self.assertEqual(data_of({"openapi": "3.1.0"}), {"openapi": "3.1.0"})


def counting(calls: List[str], request: Callable[..., Any]) -> Callable[..., Any]:
    def counted(method: str, path: str, body: Any = None) -> Any:
        calls.append(f"{method} {path}")
        return request(method, path, body)

    return counted


class CallTest(ServerTestCase):
    def test_session_call_runs_an_operation_on_the_session_and_answers_plain_dicts(self) -> None:
        with self.client.sessions.start() as session:
            data = session.call("SessionNavigate", {"url": site("/index.html"), "options": {"waitUntil": "load"}})
            self.assertEqual((data["result"]["status"], data["result"]["url"]), (200, site("/index.html")))
            self.assertIsInstance(data["actionId"], str)
            self.assertEqual(session.call("SessionGet")["url"], site("/index.html"))
            shot = session.call("SessionScreenshot", {})
            self.assertEqual((shot["mediaType"], shot["contentBase64"][:4]), ("image/png", "iVBO"))
            self.assertIsNone(session.call("SessionEnd"))
        self.assertEqual(self.client.call("ProfileList").keys(), {"profiles"})

    def test_errors_are_the_service_error_classes_of_their_codes(self) -> None:
        with self.assertRaises(SessionNotFound) as caught:
            self.client.call("SessionGet", session_id="no-such-session")
        self.assertEqual((caught.exception.code, caught.exception.status), ("session_not_found", 404))
        with self.assertRaisesRegex(ValueError, "No operation 'Nope'.*SessionNavigate"):
            self.client.call("Nope")

    def test_the_document_is_fetched_once_however_many_threads_call_at_first(self) -> None:
        calls: List[str] = []
        with Client() as client:
            client._transport.request = counting(calls, client._transport.request)  # type: ignore[method-assign]
            barrier = threading.Barrier(6)

            def first_call() -> None:
                barrier.wait()
                client.call("SessionList")

            threads = [threading.Thread(target=first_call) for _ in range(6)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            client.call("ProfileList")
        self.assertEqual(calls.count("GET /v1/openapi.json"), 1, calls)
        self.assertEqual(calls.count("GET /v1/sessions"), 6, calls)


@unittest.skipUnless(HAVE_SERVER, NEEDS_SERVER)
class AsyncCallTest(unittest.IsolatedAsyncioTestCase):
    async def test_concurrent_first_calls_fetch_the_document_once_and_session_call_works(self) -> None:
        async with AsyncClient() as client:
            calls: List[str] = []
            request = client._transport.request

            async def counted(method: str, path: str, body: Any = None) -> Any:
                calls.append(f"{method} {path}")
                return await request(method, path, body)

            client._transport.request = counted  # type: ignore[method-assign]
            answers = await asyncio.gather(*(client.call("SessionList") for _ in range(5)))
            self.assertEqual(calls.count("GET /v1/openapi.json"), 1, calls)
            self.assertTrue(all("sessions" in answer for answer in answers))
            async with await client.sessions.start() as session:
                data = await session.call("SessionNavigate", {"url": site("/index.html")})
                self.assertEqual(data["result"]["status"], 200)
                self.assertEqual((await client.operations())["SessionNavigate"].path, "/v1/sessions/{id}/navigate")


if __name__ == "__main__":
    unittest.main()
