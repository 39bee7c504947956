"""Replay: a session's run as a script and a runId, done again in a new session without a model; the run is the key's.
A cached agent run (``cache_key``) is done again with no model call."""

import json
from typing import Any, Dict, List

from browser_session_mcp import AgentCache, Client, InvalidArgument, RunNotFound

from .support import OTHER_KEY, ServerTestCase, model_requests, reset_model, script_model, site

SECRET = "correct horse battery"


class ReplayTest(ServerTestCase):
    """One sign-in recorded by hand (observe, then act by ref), then replayed by the tests in sessions of their own."""

    answer: Dict[str, Any]
    steps: List[Dict[str, Any]]
    action_ids: List[str]
    python_script: str

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        with cls.client.sessions.start() as session:
            session.navigate(site("/agent/signin.html"))
            actions = session.page.observe()

            def element(word: str) -> Any:
                return next(action for action in actions if word in action.description)

            done = [
                session.page.act(element("Username").with_arguments(value="alice")),
                session.page.act(element("Password").with_arguments(value="%password%"), variables={"password": SECRET}),
                session.page.act(element("Sign in")),
            ]
            cls.action_ids = [result.action_id or "" for result in done]
            cls.answer = session.script(format="json")
            cls.steps = json.loads(cls.answer["script"])["steps"]
            cls.python_script = session.script(format="python")["script"]

    def test_the_json_script_holds_each_step_with_its_locator_and_action_id_and_no_secret(self) -> None:
        self.assertEqual((self.answer["format"], self.answer["steps"], self.answer["dropped"]), ("json", 4, 0))
        self.assertTrue(self.answer["runId"].startswith("run_"), self.answer["runId"])
        self.assertEqual([step["method"] for step in self.steps], ["goto", "fill", "fill", "click"])
        self.assertEqual(self.steps[0]["url"], site("/agent/signin.html"))
        self.assertEqual(self.steps[2]["arguments"], {"value": "%password%"})
        # Targets are Playwright's own locators (what codegen writes), each step named by the act call that did it.
        self.assertEqual([step["target"]["selector"].split("=")[0] for step in self.steps[1:]], ["internal:role"] * 3)
        self.assertEqual([step["actionId"] for step in self.steps[1:]], self.action_ids)
        self.assertNotIn(SECRET, self.answer["script"] + self.python_script)
        # The Python script reads the password from the environment and finds the button by its role and name.
        self.assertIn('"PASSWORD"', self.python_script)
        self.assertIn('get_by_role("button", name="Sign in")', self.python_script)

    def test_the_run_id_replays_the_sign_in_in_a_new_session_with_no_model_call(self) -> None:
        with self.client.sessions.start() as session:
            result = session.replay(run_id=self.answer["runId"], variables={"password": SECRET})
            self.assertEqual((result.success, result.steps, result.replayed, result.healed), (True, 4, 4, []))
            self.assertIsNone(result.failed)
            self.assertEqual((result.url, result.title), (site("/agent/account.html"), "Your account"))
            self.assertEqual(result.run_id, self.answer["runId"])
            self.assertIsNotNone(result.action_id)
            self.assertIsNone(result.usage)
            self.assertIn("alice", session.page.extract()["pageText"])
        self.assertEqual(model_requests(), [])

    def test_a_run_that_needs_a_variable_is_refused_before_any_step_without_it(self) -> None:
        with self.client.sessions.start() as session:
            with self.assertRaises(InvalidArgument) as caught:
                session.replay(run_id=self.answer["runId"])
            self.assertEqual((caught.exception.code, caught.exception.status), ("invalid_argument", 400))
            self.assertEqual(caught.exception.details, {"missing": ["password"]})
            self.assertEqual(session.refresh().url, "about:blank")

    def test_another_key_cannot_replay_the_run_id_but_can_replay_its_steps(self) -> None:
        with Client(api_key=OTHER_KEY) as other:
            with other.sessions.start() as session:
                with self.assertRaises(RunNotFound) as caught:
                    session.replay(run_id=self.answer["runId"], variables={"password": SECRET})
                self.assertEqual((caught.exception.code, caught.exception.status), ("run_not_found", 404))
                result = session.replay(steps=self.steps, variables={"password": SECRET}, heal=False)
                self.assertEqual((result.success, result.replayed, result.run_id), (True, 4, None))
                self.assertEqual(result.url, site("/agent/account.html"))


class CachedAgentRunTest(ServerTestCase):
    def test_a_run_kept_by_cache_key_is_done_again_in_a_new_session_with_no_model_call(self) -> None:
        task = {"instruction": "Sign in as alice with %password%.", "variables": {"password": SECRET}, "cache_key": "py-sign-in"}
        with self.client.sessions.start() as first:
            first.navigate(site("/agent/signin.html"))
            refs = {word: next(a.ref for a in first.page.observe() if word in a.description) for word in ("Username", "Password", "Sign in")}
            acts = [
                {"method": "fill", "ref": refs["Username"], "value": "alice"},
                {"method": "fill", "ref": refs["Password"], "value": "%password%"},
                {"method": "click", "ref": refs["Sign in"]},
            ]
            script_model(
                {"toolCalls": [{"name": "act", "arguments": act} for act in acts]},
                {"toolCalls": [{"name": "done", "arguments": {"success": True, "message": "Signed in as alice."}}]},
            )
            fresh = first.agent(None).execute(task)
            self.assertEqual(fresh.cache, AgentCache(hit=False, replayed=0, healed=0, inferred=4, stored=True))
            self.assertEqual(len(model_requests()), 2)

        reset_model()
        with self.client.sessions.start() as second:
            second.navigate(site("/agent/signin.html"))
            again = second.agent(None).execute(task)
            self.assertEqual(model_requests(), [])
            self.assertEqual(again.cache, AgentCache(hit=True, replayed=3, healed=0, inferred=0, stored=True))
            self.assertEqual((again.success, again.completed, again.message), (True, True, "Signed in as alice."))
            self.assertEqual([action.type for action in again.actions], ["fill", "fill", "click"])
            assert again.usage is not None
            self.assertEqual((again.usage.input_tokens, again.usage.output_tokens), (0, 0))
            self.assertEqual(again.metadata["url"], site("/agent/account.html"))
            self.assertNotIn(SECRET, json.dumps(second.log()))
