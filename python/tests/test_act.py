"""page.act, page.observe and page.screenshot: a login form by refs and by instruction, images, errors, a stream."""

import json
import re
import struct
from typing import Tuple

from browser_session_mcp import ActResult, ObserveAction, ObserveResult, Screenshot, ServiceError

from .support import SessionTestCase, model_requests, script_model, site

SECRET = "correct horse battery"


def find(actions: ObserveResult, pattern: str) -> ObserveAction:
    found = [action for action in actions if re.search(pattern, action.description)]
    assert found, f"no action matching {pattern!r} in {[a.description for a in actions]}"
    return found[0]


def png_size(data: bytes) -> Tuple[int, int]:
    """Width and height from the IHDR chunk, which a PNG must start with."""
    assert data[12:16] == b"IHDR", data[:16]
    return struct.unpack(">II", data[16:24])


def jpeg_size(data: bytes) -> Tuple[int, int]:
    """Width and height from the first start-of-frame segment, walking the segments from the SOI marker."""
    index = 2
    while index + 9 < len(data):
        assert data[index] == 0xFF, f"no marker at byte {index}"
        marker, length = data[index + 1], struct.unpack(">H", data[index + 2 : index + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[index + 5 : index + 9])
            return width, height
        index += 2 + length
    raise AssertionError("no start-of-frame segment")


class ActTest(SessionTestCase):
    def test_a_list_of_actions_runs_in_order_in_one_call_and_stops_at_the_first_that_fails(self) -> None:
        self.session.navigate(site("/act/one-call.html"))
        plus = find(self.session.page.observe(), r"Add one")
        done = self.session.page.act([plus, plus, plus])
        self.assertEqual((done.success, done.message, done.failed), (True, "Did 3 actions.", None))
        assert done.steps is not None and done.diff is not None
        self.assertEqual([step.method for step in done.steps], ["click"] * 3)
        self.assertEqual(done.diff.added, ["Count: 3"])
        stopped = self.session.page.act([plus, {"ref": "9999", "method": "click"}, plus])
        self.assertFalse(stopped.success)
        assert stopped.failed is not None
        self.assertEqual((stopped.failed.step, stopped.failed.code), (2, "ref_not_found"))

    def test_observe_then_act_by_its_results_fills_and_submits_a_login_form(self) -> None:
        self.session.navigate(site("/agent/login.html"))
        actions = self.session.page.observe()
        self.assertIsInstance(actions, ObserveResult)
        self.assertIsNone(actions.usage)
        username = find(actions, r"textbox: Username")
        self.assertEqual(username.method, "fill")
        self.assertRegex(username.ref, r"^\d+(?:-\d+)?$")

        filled = self.session.page.act(username.with_arguments(value="alice"))
        self.assertIsInstance(filled, ActResult)
        self.assertEqual((filled.success, filled.page_changed, filled.navigated), (True, True, False))
        self.assertEqual((filled.action.ref, filled.action.method, filled.action.arguments), (username.ref, "fill", {"value": "alice"}))
        self.assertIn("alice", "\n".join(filled.diff.added if filled.diff else []))
        self.assertIsInstance(filled.action_id, str)
        self.assertIsNone(filled.usage)
        assert filled.settled is not None
        self.assertGreaterEqual(filled.settled.waited_ms, 0)
        self.assertIn(filled.settled.waited_for, ("nothing", "navigation", "network", "timers", "animations", "dom", "timeout"))
        self.assertEqual(filled.page_events, [])

        password = find(actions, r"textbox: Password")
        self.session.page.act({"ref": password.ref, "method": "fill", "arguments": {"value": SECRET}})
        signed_in = self.session.page.act(find(actions, r"button: Sign in"))
        self.assertTrue(signed_in.navigated)
        self.assertEqual(signed_in.url, site("/agent/account.html"))
        self.assertIn("Signed in as alice", signed_in.page_text or "")
        self.assertEqual(model_requests(), [])

    def test_act_by_instruction_fills_a_secret_the_model_never_receives(self) -> None:
        self.session.navigate(site("/agent/login.html"))
        actions = self.session.page.observe()
        password = find(actions, r"textbox: Password")
        script_model(
            {
                "json": {"ref": password.ref, "method": "fill", "arguments": {"value": "%password%"}, "description": "password field"},
                "usage": {"input": 210, "output": 12},
            }
        )
        filled = self.session.page.act("type the password %password%", variables={"password": SECRET})
        self.assertTrue(filled.success)
        self.assertEqual((filled.action.ref, filled.action.arguments), (password.ref, {"value": "%password%"}))
        self.assertIsNotNone(filled.usage)
        self.assertEqual((filled.usage.input_tokens, filled.usage.output_tokens), (210, 12))  # type: ignore[union-attr]

        self.session.page.act(find(actions, r"textbox: Username").with_arguments(value="alice"))
        sign_in = find(actions, r"button: Sign in")
        script_model({"json": {"ref": sign_in.ref, "method": "click", "arguments": {}, "description": "sign in"}})
        submitted = self.session.page.act(instruction="sign in", variables={"password": SECRET})
        # The page got the real password: the site only lets alice in with it.
        self.assertEqual(submitted.url, site("/agent/account.html"))

        requests = model_requests()
        self.assertEqual(len(requests), 2)
        self.assertIn("type the password %password%", json.dumps(requests[0]["body"]))
        self.assertNotIn(SECRET, json.dumps(requests))
        self.assertNotIn(SECRET, repr([filled, submitted]))

    def test_observe_by_instruction_keeps_the_refs_that_are_on_the_page(self) -> None:
        self.session.navigate(site("/act/widgets.html"))
        add = find(self.session.page.observe(), r"button: Add one")
        invented = {"ref": "0-4242", "method": "click", "arguments": {}, "description": "an invented element"}
        script_model({"json": {"elements": [{**add.with_arguments().to_json(), "description": "the add button"}, invented]}})
        observed = self.session.page.observe("buttons that add things")
        self.assertEqual(observed.actions, [ObserveAction(ref=add.ref, description="the add button", method="click", arguments={})])
        self.assertIsNotNone(observed.usage)
        self.assertIn("buttons that add things", json.dumps(model_requests()[0]["body"]))
        clicked = self.session.page.act(observed[0])
        self.assertIn("Clicked 1 times", clicked.diff.added if clicked.diff else [])

    def test_screenshots_are_png_or_jpeg_bytes_whose_size_matches(self) -> None:
        self.session.navigate(site("/agent/login.html"))
        png = self.session.page.screenshot()
        self.assertIsInstance(png, Screenshot)
        self.assertIsInstance(png, bytes)
        self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
        self.assertEqual(png.mime_type, "image/png")
        self.assertEqual(png_size(png), (png.width, png.height))
        self.assertEqual((png.width, png.height), (1280, 800))

        jpeg = self.session.page.screenshot(format="jpeg", quality=50)
        self.assertEqual((jpeg[:2], jpeg.mime_type), (b"\xff\xd8", "image/jpeg"))
        self.assertEqual(jpeg_size(jpeg), (jpeg.width, jpeg.height))

        button = self.session.page.screenshot(ref=find(self.session.page.observe(), r"button: Sign in").ref)
        self.assertEqual(png_size(button), (button.width, button.height))
        self.assertLess(button.width, 400)

        self.assertIsNone(png.annotated)
        # annotate=True draws the page text's refs (the form's two fields and its button at least) on the image.
        self.assertGreaterEqual(self.session.page.screenshot(annotate=True).annotated or 0, 3)

    def test_bad_actions_raise_service_errors_and_the_session_stays_usable(self) -> None:
        self.session.navigate(site("/act/widgets.html"))
        add = find(self.session.page.observe(), r"button: Add one")
        with self.assertRaises(ServiceError) as unknown:
            self.session.page.act({"ref": "0-9999", "method": "click"})
        self.assertEqual((unknown.exception.code, unknown.exception.status), ("ref_not_found", 404))
        self.assertIn("read the page again", unknown.exception.message)
        with self.assertRaises(ServiceError) as misfit:
            self.session.page.act({"ref": add.ref, "method": "check"})
        self.assertEqual((misfit.exception.code, misfit.exception.status), ("invalid_argument", 400))
        with self.assertRaises(ServiceError) as both:
            self.session.page.act(add, instruction="click it")
        self.assertEqual((both.exception.code, both.exception.status), ("invalid_argument", 400))
        with self.assertRaises(ServiceError) as gif:
            self.session.page.screenshot(format="gif")  # type: ignore[arg-type]
        self.assertEqual((gif.exception.code, gif.exception.status), ("invalid_argument", 400))
        with self.assertRaises(TypeError):
            self.session.page.act("click it", instruction="click it")
        self.assertIn("Clicked 1 times", self.session.page.act(add).diff.added)  # type: ignore[union-attr]

    def test_timeout_ms_and_max_tokens_reach_the_server(self) -> None:
        self.session.navigate(site("/act/widgets.html"))
        actions = self.session.page.observe()
        with self.assertRaises(ServiceError) as covered:
            self.session.page.act(find(actions, r"button: Pay now"), timeout_ms=500)
        self.assertEqual((covered.exception.code, covered.exception.status), ("element_covered", 409))
        with self.assertRaises(ServiceError) as waited:
            self.session.page.act({"method": "wait", "arguments": {"text": "never there"}}, timeout_ms=300)
        self.assertEqual((waited.exception.code, waited.exception.status), ("action_timeout", 408))
        self.assertIn("within 300 ms", waited.exception.message)
        many = self.session.page.act(find(actions, r"button: Load many"), max_tokens=100)
        self.assertRegex(many.truncated or "", r"^Cut to maxTokens 100: added: \d+ of 300 lines shown")
        [tab] = self.session.refresh().tabs
        self.assertEqual((tab.url, tab.active), (site("/act/widgets.html"), True))
        self.assertIsNone(many.tabs)  # act results list tabs only when the session has more than one

    def test_a_streamed_act_yields_its_events_and_the_result(self) -> None:
        self.session.navigate(site("/act/widgets.html"))
        add = find(self.session.page.observe(), r"button: Add one")
        with self.session.page.act(add, stream=True) as stream:
            events = list(stream)
        seen = [event.event for event in events]
        self.assertEqual(seen[:2], ["starting", "connected"])
        self.assertEqual(seen[-1], "finished")
        self.assertTrue(all(name == "log" for name in seen[2:-1]), seen)
        self.assertEqual(events[0].data["operation"], "SessionAct")
        result = ActResult.from_json(events[-1].data["data"])
        self.assertIn("Clicked 1 times", result.diff.added if result.diff else [])
