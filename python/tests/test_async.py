"""AsyncClient: the sync surface over asyncio, generated from the sync source; real calls against the test server,
two sessions driven at once with asyncio.gather, and a streamed call cancelled by cancelling its task."""

import ast
import asyncio
import importlib.util
import unittest
import urllib.request
from pathlib import Path
from typing import List

from browser_session_mcp import AsyncClient, AsyncEventStream, AsyncSession, ClientTimeout, SessionNotFound, Timeout
from browser_session_mcp import _async_client

from .support import HAVE_SERVER, NEEDS_SERVER, OTHER_KEY, model_requests, reset_model, script_model, site

ROOT = Path(__file__).resolve().parent.parent


class GeneratedTest(unittest.TestCase):
    def test_the_async_client_is_what_the_generator_writes_from_the_sync_source(self) -> None:
        spec = importlib.util.spec_from_file_location("make_async", ROOT / "tools" / "make_async.py")
        assert spec is not None and spec.loader is not None
        make_async = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(make_async)
        committed = Path(_async_client.__file__).read_text(encoding="utf-8")
        self.assertEqual(
            ast.dump(ast.parse(committed)),
            ast.dump(ast.parse(make_async.generate())),
            "browser_session_mcp/_async_client.py is stale: run `python3 tools/make_async.py` in python/",
        )

    def test_every_public_method_of_the_sync_classes_is_there_and_awaitable_where_it_calls_the_server(self) -> None:
        import inspect

        from browser_session_mcp import Agent, Client, Page, Profiles, Session, Sessions

        for sync_cls in (Client, Sessions, Session, Agent, Page, Profiles):
            async_cls = getattr(_async_client, "Async" + sync_cls.__name__)
            public = {name for name in vars(sync_cls) if not name.startswith("_")}
            self.assertEqual(public, {name for name in vars(async_cls) if not name.startswith("_")}, sync_cls.__name__)
        for name in ("navigate", "end", "refresh", "live_view", "state", "log", "trace", "recording", "call"):
            self.assertTrue(inspect.iscoroutinefunction(getattr(AsyncSession, name)), name)
        self.assertTrue(inspect.iscoroutinefunction(AsyncClient.call) and inspect.iscoroutinefunction(AsyncClient.operations))
        self.assertFalse(inspect.iscoroutinefunction(AsyncSession.agent))


@unittest.skipUnless(HAVE_SERVER, NEEDS_SERVER)
class AsyncClientTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        await asyncio.to_thread(reset_model)
        self.client = AsyncClient()
        await self.client.__aenter__()

    async def asyncTearDown(self) -> None:
        await self.client.__aexit__(None, None, None)

    async def test_a_session_through_every_call(self) -> None:
        async with await self.client.sessions.start() as session:
            navigated = await session.navigate(site("/agent/login.html"))
            assert navigated.data.result is not None
            self.assertEqual(navigated.data.result.status, 200)
            self.assertTrue(navigated.data.action_id)
            self.assertIn("Username", (await session.page.extract())["pageText"])
            actions = await session.page.observe()
            field = next(a for a in actions if "Username" in a.description)
            acted = await session.page.act(field.with_arguments(value="alice"))
            self.assertTrue(acted.success)
            shot = await session.page.screenshot()
            self.assertEqual((shot.mime_type, shot[:4]), ("image/png", b"\x89PNG"))
            self.assertGreater(shot.width, 0)
            self.assertEqual((await session.refresh()).url, site("/agent/login.html"))
            self.assertEqual((await self.client.sessions.get(session.id)).id, session.id)
            self.assertIn(session.id, [s.id for s in await self.client.sessions.list()])
            self.assertIn("cookies", await session.state())
            saved = await session.save_profile("async-test")
            self.assertEqual(saved.name, "async-test")
            self.assertIn("async-test", (await self.client.profiles.list()).names())
            await self.client.profiles.delete("async-test")
            self.assertNotIn("async-test", (await self.client.profiles.list()).names())
            self.assertEqual([e["operation"] for e in (await session.log())["entries"]][:2], ["navigate", "extract"])
            self.assertTrue(acted.settled is not None and acted.action_id)
        with self.assertRaises(SessionNotFound):
            await self.client.sessions.get(session.id)

    async def test_the_agent_and_a_stream(self) -> None:
        async with await self.client.sessions.start() as session:
            script_model({"toolCalls": [{"name": "done", "arguments": {"success": True, "message": "nothing to do"}}]})
            result = await session.agent("openai/gpt-4.1-mini").execute({"instruction": "stop", "auto_screenshot": False})
            self.assertEqual((result.completed, result.message), (True, "nothing to do"))
            self.assertTrue(result.action_id)
            stream = await session.navigate(site("/page2.html"), stream=True)
            self.assertIsInstance(stream, AsyncEventStream)
            events = [event async for event in stream]
            self.assertEqual([events[0].event, events[-1].event], ["starting", "finished"])
            self.assertEqual(events[-1].data["data"]["result"]["status"], 200)

    async def test_two_sessions_driven_at_once_with_gather(self) -> None:
        first, second = await asyncio.gather(self.client.sessions.start(), self.client.sessions.start())
        async with first, second:

            async def read(session: AsyncSession, path: str) -> str:
                await session.navigate(site(path))
                return str((await session.page.extract())["pageText"])

            one, two = await asyncio.gather(read(first, "/index.html"), read(second, "/page2.html"))
            self.assertIn("Test site", one)
            self.assertNotIn("Test site", two)
            self.assertEqual([(await s.refresh()).url for s in (first, second)], [site("/index.html"), site("/page2.html")])

    async def test_cancelling_a_streamed_call_cancels_it_on_the_server_while_another_session_runs(self) -> None:
        slow, other = await asyncio.gather(self.client.sessions.start(), self.client.sessions.start())
        async with slow, other:
            under_way = asyncio.Event()
            seen: List[str] = []

            async def follow() -> None:
                async with await slow.navigate(site("/slow?ms=20000"), timeout=30000, stream=True) as stream:
                    async for event in stream:
                        seen.append(event.event)
                        if event.event == "log":
                            under_way.set()

            task = asyncio.create_task(follow())
            await asyncio.wait_for(under_way.wait(), 60)
            # The other session is served while the slow navigation still runs.
            answered = await other.navigate(site("/index.html"))
            assert answered.data.result is not None
            self.assertEqual(answered.data.result.status, 200)
            self.assertFalse(task.done())
            task.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task
            self.assertNotIn("finished", seen)
            # The server cancelled the navigation: the session's queue is free for the next call, long before 20 s.
            again = await asyncio.wait_for(slow.navigate(site("/page2.html")), 15)
            assert again.data.result is not None
            self.assertEqual(again.data.result.status, 200)
            entries = (await slow.log())["entries"]
            self.assertEqual(entries[0]["errorCode"], "cancelled")

    async def test_cancelling_a_plain_call_cancels_it_on_the_server(self) -> None:
        async with await self.client.sessions.start() as session:
            # The model takes 20 s to answer: the agent run is under way on the server once the model has the request.
            script_model({"delayMs": 20000, "then": {"toolCalls": [{"name": "done", "arguments": {"success": True, "message": "late"}}]}})
            task = asyncio.create_task(session.agent("openai/gpt-4.1-mini").execute({"instruction": "wait", "auto_screenshot": False}))
            for _ in range(300):
                if await asyncio.to_thread(model_requests):
                    break
                await asyncio.sleep(0.1)
            self.assertEqual(len(await asyncio.to_thread(model_requests)), 1)
            task.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task
            # The run stopped when the connection closed: the session answers the next call long before 20 s.
            again = await asyncio.wait_for(session.navigate(site("/index.html")), 15)
            assert again.data.result is not None
            self.assertEqual(again.data.result.status, 200)
            entries = (await session.log())["entries"]
            self.assertEqual((entries[0]["operation"], entries[0]["errorCode"]), ("agent_execute", "cancelled"))

    async def test_the_client_timeout_is_client_timeout_not_the_servers_timeout(self) -> None:
        async with await self.client.sessions.start() as session:
            async with AsyncClient(timeout=1) as impatient:
                theirs = await impatient.sessions.get(session.id)
                with self.assertRaises(ClientTimeout) as caught:
                    await theirs.navigate(site("/slow?ms=5000"), timeout=30000)
            self.assertEqual((caught.exception.code, caught.exception.status), ("client_timeout", None))
            self.assertNotIsInstance(caught.exception, Timeout)

    async def test_live_view_link_loads(self) -> None:
        async with await self.client.sessions.start() as session:
            view = await session.live_view(interactive=False)
            self.assertFalse(view.interactive)
            with await asyncio.to_thread(urllib.request.urlopen, view.url, None, 30) as page:
                self.assertEqual(page.status, 200)
                self.assertTrue(page.headers.get("content-type", "").startswith("text/html"))

    async def test_another_keys_session_is_not_found(self) -> None:
        async with AsyncClient(api_key=OTHER_KEY) as other:
            async with await other.sessions.start() as theirs:
                with self.assertRaises(SessionNotFound):
                    await self.client.sessions.get(theirs.id)


if __name__ == "__main__":
    unittest.main()
