"""page.evaluate: a script's JSON value, its typed errors and timeout; ``call("SessionEvaluate")`` reaches it too."""

from browser_session_mcp import EvaluateResult, EvaluationFailed, Timeout

from .support import SessionTestCase, site


class EvaluateTest(SessionTestCase):
    def test_evaluate_answers_the_json_value_and_raises_typed_errors(self) -> None:
        self.session.navigate(site("/evaluate/index.html"))
        title = self.session.page.evaluate("document.title")
        self.assertIsInstance(title, EvaluateResult)
        self.assertEqual((title.result, title.truncated), ("Evaluate", False))
        self.assertIsInstance(title.action_id, str)
        self.assertEqual(self.session.page.evaluate("async (n) => n * 2", 21).result, 42)
        self.assertIsNone(self.session.page.evaluate("undefined").result)

        with self.assertRaises(EvaluationFailed) as caught:
            self.session.page.evaluate('() => { throw new Error("boom") }')
        self.assertEqual((caught.exception.status, caught.exception.message), (422, "The script threw Error: boom"))
        with self.assertRaises(Timeout):
            self.session.page.evaluate("() => new Promise(() => {})", timeout_ms=300)

        long = self.session.page.evaluate('"x".repeat(70000)')
        self.assertTrue(long.truncated)
        self.assertEqual(len(long.result), 65536)

        called = self.client.call("SessionEvaluate", {"expression": "document.title"}, session_id=self.session.id)
        self.assertEqual(called["result"], {"result": "Evaluate"})
