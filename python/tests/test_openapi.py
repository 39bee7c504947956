"""The result classes against the server's /v1/openapi.json: every response property is a field (or said why not),
every server error code has its ServiceError subclass; and the check fails when the document grows."""

import copy
import unittest
from typing import Any, Dict

from browser_session_mcp import errors
from browser_session_mcp._mirrors import MIRRORS, NOT_MODELLED, Mirror, check, response_components, snake
from browser_session_mcp.types import TabInfo

from .support import ServerTestCase


def document_with(components: Dict[str, Any]) -> Dict[str, Any]:
    """A minimal OpenAPI document whose one path answers each component."""
    responses = {str(200 + i): {"content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}}}} for i, name in enumerate(components)}
    return {"openapi": "3.1.0", "paths": {"/x": {"get": {"responses": responses}}}, "components": {"schemas": components}}


TAB = {"type": "object", "properties": {"tabId": {"type": "string"}, "url": {"type": "string"}, "active": {"type": "boolean"}}}
TABS = {"type": "object", "properties": {"success": {"type": "boolean"}, "data": {"type": "object", "properties": {"tabs": {"type": "array", "items": TAB}}}}}
TAB_MIRRORS = (Mirror(TabInfo, ("*/tabs/items",)), Mirror(None, ("TabsResponse/data",), flattened=("tabs",)))


class MirrorCheckTest(unittest.TestCase):
    """The check itself, on small documents: no server needed."""

    def test_a_document_the_classes_match_has_no_problem(self) -> None:
        self.assertEqual(check(document_with({"TabsResponse": TABS}), TAB_MIRRORS, {}), [])

    def test_a_property_the_server_adds_is_reported_with_the_class_and_the_place(self) -> None:
        doc = document_with({"TabsResponse": copy.deepcopy(TABS)})
        doc["components"]["schemas"]["TabsResponse"]["properties"]["data"]["properties"]["tabs"]["items"]["properties"]["pinnedAt"] = {"type": "string"}
        self.assertEqual(check(doc, TAB_MIRRORS, {}), ["TabInfo lacks 'pinned_at': the server sends 'pinnedAt' at TabsResponse/data/tabs/items"])

    def test_a_field_the_server_does_not_send_is_reported(self) -> None:
        doc = document_with({"TabsResponse": copy.deepcopy(TABS)})
        del doc["components"]["schemas"]["TabsResponse"]["properties"]["data"]["properties"]["tabs"]["items"]["properties"]["active"]
        self.assertEqual(check(doc, TAB_MIRRORS, {}), ["TabInfo.active: no such property at */tabs/items (a field the server does not send)"])

    def test_a_response_no_class_mirrors_is_reported_unless_listed_as_not_modelled(self) -> None:
        doc = document_with({"TabsResponse": TABS, "ClockResponse": {"type": "object", "properties": {"data": {"type": "object", "properties": {"now": {"type": "string"}}}}}})
        self.assertEqual(check(doc, TAB_MIRRORS, {}), ["ClockResponse/data: an object with now that no class mirrors"])
        self.assertEqual(check(doc, TAB_MIRRORS, {"ClockResponse": "not called by the client"}), [])

    def test_wire_names_in_snake_case(self) -> None:
        cases = {"mainFrameId": "main_frame_id", "extraHTTPHeaders": "extra_http_headers", "input_tokens": "input_tokens", "url": "url"}
        self.assertEqual({name: snake(name) for name in cases}, cases)


class OpenApiTest(ServerTestCase):
    """The live document of the test server."""

    document: Dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.document = cls.client._transport.request("GET", "/v1/openapi.json")

    def test_every_response_property_of_the_server_is_known_to_the_client(self) -> None:
        self.assertEqual(check(self.document), [])

    def test_every_response_schema_is_mirrored_or_listed_as_not_modelled(self) -> None:
        places = [place for mirror in MIRRORS for place in mirror.at] + list(NOT_MODELLED)
        schemas = self.document["components"]["schemas"]
        components = response_components(self.document)
        self.assertIn("SessionActResponse", components)
        for name in components:
            # {success} alone (session end, profile delete) has nothing to mirror.
            bare = set(schemas[name].get("properties", {})) <= {"success"}
            self.assertTrue(bare or any(place == name or place.startswith(name + "/") for place in places), name)

    def test_a_field_added_on_the_server_fails_the_check(self) -> None:
        doc = copy.deepcopy(self.document)
        doc["components"]["schemas"]["SessionGetResponse"]["properties"]["data"]["properties"]["pinned"] = {"type": "boolean"}
        act = doc["components"]["schemas"]["SessionActResponse"]["properties"]["data"]["properties"]
        act["retries"] = {"type": "integer"}
        self.assertCountEqual(
            check(doc),
            [
                "SessionInfo lacks 'pinned': the server sends 'pinned' at SessionGetResponse/data",
                "ActResult lacks 'retries': the server sends 'retries' at SessionActResponse/data",
            ],
        )

    def test_every_server_error_code_has_its_class(self) -> None:
        body = self.document["components"]["schemas"]["ErrorBody"]
        codes = body["properties"]["error"]["properties"]["code"]["enum"]
        self.assertIn("session_not_found", codes)
        for code in codes:
            cls = errors.ERROR_CLASSES.get(code)
            self.assertIsNotNone(cls, f"no ServiceError subclass for the server's code {code!r}")
            assert cls is not None
            self.assertIn(code, cls.codes)
            self.assertTrue(issubclass(cls, errors.ServiceError))
        self.assertEqual(set(errors.ERROR_CLASSES) - set(codes), set(errors.CLIENT_CODES))


if __name__ == "__main__":
    unittest.main()
