"""The result classes against the server's /v1/openapi.json: every property of a response a class mirrors is a field
(or said why not), every server error code has its ServiceError subclass, the check fails when a mirrored response
grows; and every operation of the document, a new one included, is reachable through ``call`` with no Python edit."""

import copy
import sys
import unittest
from typing import Any, Dict

from browser_session_mcp import errors
from browser_session_mcp import Client
from browser_session_mcp._mirrors import Mirror, answered_as_dicts, check, mirrored_components, response_components, snake
from browser_session_mcp._operations import operations_of
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
        self.assertEqual(check(document_with({"TabsResponse": TABS}), TAB_MIRRORS), [])

    def test_a_property_the_server_adds_is_reported_with_the_class_and_the_place(self) -> None:
        doc = document_with({"TabsResponse": copy.deepcopy(TABS)})
        doc["components"]["schemas"]["TabsResponse"]["properties"]["data"]["properties"]["tabs"]["items"]["properties"]["pinnedAt"] = {"type": "string"}
        self.assertEqual(check(doc, TAB_MIRRORS), ["TabInfo lacks 'pinned_at': the server sends 'pinnedAt' at TabsResponse/data/tabs/items"])

    def test_a_field_the_server_does_not_send_is_reported(self) -> None:
        doc = document_with({"TabsResponse": copy.deepcopy(TABS)})
        del doc["components"]["schemas"]["TabsResponse"]["properties"]["data"]["properties"]["tabs"]["items"]["properties"]["active"]
        self.assertEqual(check(doc, TAB_MIRRORS), ["TabInfo.active: no such property at */tabs/items (a field the server does not send)"])

    def test_a_response_no_class_mirrors_is_no_problem_and_is_listed_as_answered_as_dicts(self) -> None:
        clock = {"type": "object", "properties": {"success": {"type": "boolean"}, "data": {"type": "object", "properties": {"now": {"type": "string"}}}}}
        doc = document_with({"TabsResponse": TABS, "ClockResponse": clock})
        doc["paths"]["/clock"] = {"get": {"operationId": "Clock", "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ClockResponse"}}}}}}}
        self.assertEqual(check(doc, TAB_MIRRORS), [])
        self.assertEqual(answered_as_dicts(doc, TAB_MIRRORS), ["Clock"])

    def test_an_object_no_class_mirrors_inside_a_mirrored_response_is_still_reported(self) -> None:
        doc = document_with({"TabsResponse": copy.deepcopy(TABS)})
        tab = doc["components"]["schemas"]["TabsResponse"]["properties"]["data"]["properties"]["tabs"]["items"]
        tab["properties"]["url"] = {"type": "object", "properties": {"href": {"type": "string"}}}
        self.assertEqual(check(doc, TAB_MIRRORS), ["TabsResponse/data/tabs/items/url: an object with href that no class mirrors"])

    def test_a_mirrored_response_the_server_no_longer_answers_is_reported_field_by_field(self) -> None:
        doc = document_with({"OtherResponse": TABS})
        self.assertIn("TabInfo.tab_id: no such property at */tabs/items (a field the server does not send)", check(doc, TAB_MIRRORS))

    def test_the_components_a_mirror_names(self) -> None:
        self.assertEqual(mirrored_components(TAB_MIRRORS), {"TabsResponse"})

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

    def test_every_operation_of_the_document_is_reachable_through_call(self) -> None:
        documented = {
            spec["operationId"]: (method.upper(), path) for path, item in self.document["paths"].items() for method, spec in item.items()
        }
        self.assertIn("SessionAct", documented)
        operations = self.client.operations()
        self.assertEqual({name: (op.method, op.path) for name, op in operations.items()}, documented)
        for name, operation in operations.items():
            method, path, _ = operation.target(None, "s-1" if operation.takes_session else None)
            self.assertEqual((method, path), (documented[name][0], documented[name][1].replace("{id}", "s-1")), name)
        # Two harmless ones, live: the session list, and one session by id.
        with self.client.sessions.start() as session:
            listed = self.client.call("SessionList")
            self.assertIn(session.id, [raw["id"] for raw in listed["sessions"]])
            self.assertEqual(self.client.call("SessionGet", session_id=session.id)["id"], session.id)
        # What no class mirrors: reported, not a failure (each is answered as dicts by call).
        dicts = answered_as_dicts(self.document)
        self.assertTrue(set(dicts) <= set(operations), dicts)
        sys.stderr.write(f"\n  answered as dicts only (no mirror class): {', '.join(dicts) or 'none'}\n")

    def test_a_new_operation_on_the_server_needs_no_python_edit(self) -> None:
        # What a new operation in src/core/operations/ adds to the document: a path, an operationId, a response.
        self.assertNotIn("SessionWave", operations_of(self.document))
        doc = copy.deepcopy(self.document)
        doc["paths"]["/v1/sessions/{id}/wave"] = {
            "post": {
                "operationId": "SessionWave",
                "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionWaveResponse"}}}}},
            }
        }
        hand = {"type": "object", "properties": {"side": {"type": "string"}, "height": {"type": "number"}}}
        data = {"type": "object", "properties": {"result": {"type": "object", "properties": {"waved": {"type": "boolean"}, "hand": hand}}, "actionId": {"type": "string"}}}
        doc["components"]["schemas"]["SessionWaveResponse"] = {"type": "object", "properties": {"success": {"type": "boolean"}, "data": data}}
        # (a) the mirror check has nothing to say, and reports the operation as answered with dicts.
        self.assertEqual(check(doc), [])
        self.assertIn("SessionWave", answered_as_dicts(doc))
        # (b) call resolves it from the document (injected into the client's cache; the server is unchanged).
        with Client() as client:
            client._transport.use_openapi(doc)
            wave = client.operations()["SessionWave"]
            self.assertEqual((wave.method, wave.path), ("POST", "/v1/sessions/{id}/wave"))
            self.assertEqual(wave.target({"side": "left"}, "s 1"), ("POST", "/v1/sessions/s%201/wave", {"side": "left"}))
            # Sent as resolved: this server has no such route, and says so for that method and path.
            with self.assertRaises(errors.NotFound) as caught:
                client.call("SessionWave", {"side": "left"}, session_id="s-1")
            self.assertEqual((caught.exception.code, caught.exception.status), ("not_found", 404))
            self.assertIn("POST /v1/sessions/s-1/wave", caught.exception.message)

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
