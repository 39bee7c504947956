"""session.agent(model, instructions, options).execute(...): the string and dict forms, snake_case options."""

import json
import unittest

from browser_session_mcp import AgentResult, ServiceError

from .support import SessionTestCase, model_requests, script_model, site


def done(message: str) -> dict:
    return {"toolCalls": [{"name": "done", "arguments": {"success": True, "message": message}}]}


class AgentTest(SessionTestCase):
    def test_execute_a_string_with_model_instructions_and_options(self) -> None:
        script_model(
            {"toolCalls": [{"name": "goto", "arguments": {"url": site("/page2.html")}}], "text": "Opening it."},
            done("Opened the second page"),
        )
        agent = self.session.agent(
            "openai/gpt-4.1-nano",
            instructions="OPERATOR-RULE-17: be brief.",
            options={"apiKey": "sk-agent", "baseURL": self._fake_base_url()},
        )
        result = agent.execute("Open the second page")
        self.assertIsInstance(result, AgentResult)
        self.assertEqual((result.success, result.completed, result.message), (True, True, "Opened the second page"))
        self.assertEqual([a.type for a in result.actions], ["goto", "done"])
        self.assertEqual(result.actions[0].reasoning, "Opening it.")
        self.assertEqual(result.actions[0].arguments, {"url": site("/page2.html")})
        self.assertIsNone(result.actions[0].error)
        assert result.usage is not None
        self.assertEqual((result.usage.input_tokens, result.usage.output_tokens), (200, 40))
        self.assertEqual(self.session.refresh().url, site("/page2.html"))

        requests = model_requests()
        self.assertEqual(len(requests), 2)
        self.assertEqual({r["body"]["model"] for r in requests}, {"gpt-4.1-nano"})
        self.assertEqual({r["authorization"] for r in requests}, {"Bearer sk-agent"})
        self.assertIn("OPERATOR-RULE-17", json.dumps(requests[0]["body"]["messages"][0]))
        self.assertIn("Open the second page", json.dumps(requests[0]["body"]["messages"]))

    def test_snake_case_options_reach_the_agent(self) -> None:
        self.session.navigate(site("/index.html"))
        # One goto with a %who% placeholder; max_steps=1 stops the run right after it.
        script_model({"toolCalls": [{"name": "goto", "arguments": {"url": site("/status?code=200&who=%who%")}}]})
        result = self.session.agent("openai/gpt-4.1-mini").execute(
            {
                "instruction": "Visit the status page as %who%",
                "max_steps": 1,
                "auto_screenshot": False,
                "wait_between_actions": 5,
                "context": "CONTEXT-MARK-42",
                "variables": {"who": "secret-visitor"},
            }
        )
        self.assertEqual((result.completed, result.success), (False, False))
        self.assertEqual([a.type for a in result.actions], ["goto"])
        self.assertEqual(result.metadata["maxSteps"], 1)
        self.assertIs(result.metadata["autoScreenshot"], False)
        self.assertEqual(result.metadata["waitBetweenActions"], 5)
        # The variable was filled in inside the browser, never shown to the model, and SessionInfo shows it masked.
        self.assertEqual(self.session.refresh().url, site("/status?code=200&who=%who%"))
        [request] = model_requests()
        sent = json.dumps(request["body"])
        self.assertIn("CONTEXT-MARK-42", sent)
        self.assertNotIn("secret-visitor", sent)
        self.assertNotIn("image_url", sent)

    def test_auto_screenshot_defaults_to_on(self) -> None:
        self.session.navigate(site("/index.html"))
        script_model(done("nothing to do"))
        result = self.session.agent("openai/gpt-4.1-mini").execute({"instruction": "Look at the page"})
        self.assertTrue(result.completed)
        self.assertIs(result.metadata["autoScreenshot"], True)
        self.assertIn("image_url", json.dumps(model_requests()[0]["body"]))

    def test_bad_options_are_invalid_argument(self) -> None:
        agent = self.session.agent("openai/gpt-4.1-mini")
        for options, field in (
            ({"instruction": "x", "max_steps": 0}, "maxSteps"),
            ({"instruction": "x", "wait_between_actions": -1}, "waitBetweenActions"),
            ({"instruction": "x", "bogus": 1}, "bogus"),
            ({"max_steps": 3}, "executeOptions"),
        ):
            with self.assertRaises(ServiceError, msg=str(options)) as caught:
                agent.execute(options)
            self.assertEqual((caught.exception.code, caught.exception.status), ("invalid_argument", 400), options)
            self.assertIn(field, caught.exception.message, options)
        self.assertEqual(model_requests(), [])

    def test_a_failing_model_is_model_error(self) -> None:
        script_model({"error": {"status": 400, "message": "bad request to the model"}})
        with self.assertRaises(ServiceError) as caught:
            self.session.agent("openai/gpt-4.1-mini").execute("Do something")
        self.assertEqual((caught.exception.code, caught.exception.status), ("model_error", 422))

    @staticmethod
    def _fake_base_url() -> str:
        import os

        return os.environ["FAKE_LLM_OPENAI_BASE_URL"]


if __name__ == "__main__":
    unittest.main()
