"""page.extract: the three forms, pydantic and dict schemas, every keyword reaching the server."""

import re
import unittest
from typing import List

from browser_session_mcp import ServiceError, Usage

from .support import SessionTestCase, model_requests, script_model, site

try:
    import pydantic
except ImportError:  # the client works without pydantic; only these tests need it
    pydantic = None  # type: ignore[assignment]


def sent_schema(request: dict) -> dict:
    return request["body"]["response_format"]["json_schema"]["schema"]


class ExtractTest(SessionTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.session.navigate(site("/index.html"))

    def test_no_arguments_answers_the_page_text_without_a_model(self) -> None:
        usages: List[Usage] = []
        result = self.session.page.extract(on_usage=usages.append)
        self.assertEqual(list(result), ["pageText"])
        self.assertIn("Test site", result["pageText"])
        self.assertEqual(usages, [])
        self.assertEqual(model_requests(), [])

    def test_instruction_alone_answers_an_extraction_with_usage(self) -> None:
        script_model({"text": "A small test site.", "usage": {"input": 321, "output": 7, "cached": 5}})
        usages: List[Usage] = []
        result = self.session.page.extract("What is this page about?", on_usage=usages.append)
        self.assertEqual(result, {"extraction": "A small test site."})
        self.assertEqual((usages[0].input_tokens, usages[0].output_tokens, usages[0].cached_input_tokens), (321, 7, 5))
        self.assertGreaterEqual(usages[0].inference_time_ms, 0)
        [request] = model_requests()
        self.assertEqual(request["body"]["model"], "gpt-4.1-mini")
        self.assertIn("What is this page about?", str(request["body"]["messages"]))

    def test_dict_schema_answers_a_dict(self) -> None:
        schema = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
        script_model({"json": {"title": "Test site"}})
        self.assertEqual(self.session.page.extract(instruction="the title", schema=schema), {"title": "Test site"})
        self.assertEqual(sent_schema(model_requests()[0])["properties"]["title"], {"type": "string"})

    def test_non_object_dict_schema_answers_the_value_itself(self) -> None:
        script_model({"json": {"value": ["Home", "Second page"]}})
        result = self.session.page.extract("the link texts", schema={"type": "array", "items": {"type": "string"}})
        self.assertEqual(result, ["Home", "Second page"])

    def test_every_keyword_reaches_the_server(self) -> None:
        script_model({"text": "ok"})
        result = self.session.page.extract(
            instruction="what does the heading say",
            selector="//h1",
            iframes=True,
            model_name="openai/gpt-4.1-nano",
            model_client_options={"apiKey": "sk-per-call", "baseURL": self._fake_openai_base_url()},
            dom_settle_timeout_ms=2_000,
        )
        self.assertEqual(result, {"extraction": "ok"})
        [request] = model_requests()
        self.assertEqual(request["body"]["model"], "gpt-4.1-nano")
        self.assertEqual(request["authorization"], "Bearer sk-per-call")
        # The selector limited the page the model saw to the heading.
        page = str(request["body"]["messages"])
        self.assertNotIn("Second page", page)

        with self.assertRaises(ServiceError) as caught:
            self.session.page.extract(selector="//nothing-here")
        self.assertEqual((caught.exception.code, caught.exception.status), ("selector_not_found", 400))
        with self.assertRaises(ServiceError) as caught:
            self.session.page.extract(dom_settle_timeout_ms=-1)
        self.assertEqual((caught.exception.code, caught.exception.status), ("invalid_argument", 400))
        self.assertIn("domSettleTimeoutMs", caught.exception.message)

    @staticmethod
    def _fake_openai_base_url() -> str:
        import os

        return os.environ["FAKE_LLM_OPENAI_BASE_URL"]

    @unittest.skipIf(pydantic is None, "pydantic is not installed")
    def test_pydantic_model_answers_an_instance(self) -> None:
        from pydantic import BaseModel, HttpUrl

        class Link(BaseModel):
            text: str
            url: HttpUrl

        class Links(BaseModel):
            heading: str
            links: List[Link]

        # The model answers a link with its element ref; the server maps it to the page's real href.
        ref = re.search(r"\[Second page\]\((\d+(?:-\d+)?)\)", self.session.page.extract()["pageText"])
        assert ref is not None
        script_model({"json": {"heading": "Test site", "links": [{"text": "Second page", "url": ref.group(1)}]}})
        result = self.session.page.extract("the heading and links", schema=Links)
        self.assertIsInstance(result, Links)
        self.assertEqual(result.heading, "Test site")
        self.assertIsInstance(result.links[0], Link)
        self.assertEqual((result.links[0].text, str(result.links[0].url)), ("Second page", site("/page2.html")))
        # Nested models travel as $defs/$ref, HttpUrl as format uri.
        schema = sent_schema(model_requests()[0])
        self.assertEqual(set(schema["properties"]), {"heading", "links"})

    @unittest.skipIf(pydantic is None, "pydantic is not installed")
    def test_pydantic_validation_failure_is_extraction_invalid(self) -> None:
        assert pydantic is not None

        class Price(pydantic.BaseModel):
            amount: int

            @pydantic.field_validator("amount")
            @classmethod
            def positive(cls, value: int) -> int:
                if value <= 0:
                    raise ValueError("must be positive")
                return value

        script_model({"json": {"amount": -3}})
        with self.assertRaises(ServiceError) as caught:
            self.session.page.extract("the price", schema=Price)
        self.assertEqual(caught.exception.code, "extraction_invalid")
        self.assertIn("must be positive", caught.exception.message)

    def test_schema_of_another_type_is_refused_before_sending(self) -> None:
        with self.assertRaises(TypeError):
            self.session.page.extract("x", schema=int)  # type: ignore[call-overload]


if __name__ == "__main__":
    unittest.main()
