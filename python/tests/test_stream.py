"""stream=True: the SSE events of navigate, extract and the agent, parsed from the live response."""

import unittest

from browser_session_mcp import EventStream, ServiceError

from .support import SessionTestCase, script_model, site


def names(events: list) -> list:
    return [e.event for e in events]


class StreamTest(SessionTestCase):
    def assertShape(self, events: list, last: str) -> None:
        seen = names(events)
        self.assertEqual(seen[:2], ["starting", "connected"])
        self.assertEqual(seen[-1], last)
        self.assertTrue(all(name == "log" for name in seen[2:-1]), seen)

    def test_navigate_stream_events_in_order_and_the_finished_payload(self) -> None:
        stream = self.session.navigate(site("/page2.html"), wait_until="load", stream=True)
        self.assertIsInstance(stream, EventStream)
        events = list(stream)
        self.assertShape(events, "finished")
        self.assertEqual(events[0].data, {"operation": "SessionNavigate", "sessionId": self.session.id})
        self.assertEqual(events[1].data["sessionId"], self.session.id)
        logs = [e.data for e in events if e.event == "log"]
        self.assertGreater(len(logs), 0)
        self.assertEqual(logs[0]["data"]["stage"], "started")
        finished = events[-1].data
        self.assertTrue(finished["success"])
        self.assertEqual(finished["data"]["result"]["status"], 200)
        self.assertEqual(finished["data"]["result"]["url"], site("/page2.html"))

    def test_a_failing_stream_ends_with_one_error_event(self) -> None:
        events = list(self.session.navigate(site("/slow?ms=5000"), timeout=300, stream=True))
        self.assertShape(events, "error")
        self.assertEqual(events[-1].data["error"]["code"], "navigation_timeout")
        self.assertNotIn("finished", names(events))

    def test_extract_stream(self) -> None:
        self.session.navigate(site("/index.html"))
        with self.session.page.extract(stream=True) as stream:
            events = list(stream)
        self.assertShape(events, "finished")
        self.assertEqual(events[0].data["operation"], "SessionExtract")
        self.assertIn("Test site", events[-1].data["data"]["result"]["pageText"])

    def test_agent_stream_logs_each_action(self) -> None:
        script_model(
            {"toolCalls": [{"name": "goto", "arguments": {"url": site("/page2.html")}}]},
            {"toolCalls": [{"name": "done", "arguments": {"success": True, "message": "there"}}]},
        )
        events = list(self.session.agent("openai/gpt-4.1-mini").execute({"instruction": "go", "auto_screenshot": False}, stream=True))
        self.assertShape(events, "finished")
        self.assertEqual(events[0].data["operation"], "SessionAgentExecute")
        self.assertTrue(any("goto" in e.data["message"] for e in events if e.event == "log"))
        result = events[-1].data["data"]["result"]
        self.assertEqual((result["completed"], result["message"]), (True, "there"))

    def test_errors_before_the_stream_opens_raise_at_the_call(self) -> None:
        with self.assertRaises(ServiceError) as caught:
            self.session.navigate(site("/index.html"), timeout=-5, stream=True)
        self.assertEqual((caught.exception.code, caught.exception.status), ("invalid_argument", 400))

    def test_closing_a_stream_early_leaves_the_session_usable(self) -> None:
        with self.session.navigate(site("/slow?ms=4000"), stream=True) as stream:
            for event in stream:
                if event.event == "log":
                    break
        # The server cancelled the slow navigation; the session's queue is free for the next one.
        response = self.session.navigate(site("/index.html"))
        assert response.data.result is not None
        self.assertEqual(response.data.result.status, 200)


if __name__ == "__main__":
    unittest.main()
