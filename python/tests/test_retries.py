"""Retries: a call the server refused before doing anything (429 with Retry-After) is sent again after the wait it
asks for, a bounded number of times; retries=0 raises the refusal as RateLimited with retry_after. Against a second
test server that lets a key hold one session (its session_limit answers carry Retry-After)."""

import time
import unittest

from browser_session_mcp import AsyncClient, Client, RateLimited, ServiceError, SessionLimit

from .support import HAVE_LIMITED, LIMITED_KEY, LIMITED_URL, NEEDS_SERVER, RetryLog


@unittest.skipUnless(HAVE_LIMITED, NEEDS_SERVER)
class RetryTest(unittest.TestCase):
    def test_a_refused_start_is_retried_after_retry_after_and_succeeds(self) -> None:
        with Client(LIMITED_URL, api_key=LIMITED_KEY) as client:
            holder = client.sessions.start()
            # The slot frees while the client waits for its first retry: the second attempt gets it.
            with RetryLog(on_retry=holder.end) as log:
                started = time.monotonic()
                second = client.sessions.start()
                waited = time.monotonic() - started
            self.assertEqual(len(log.records), 1, [r.getMessage() for r in log.records])
            self.assertIn("429 (session_limit)", log.records[0].getMessage())
            self.assertGreaterEqual(waited, 2.0)  # the server's Retry-After: 2
            self.assertEqual([s.id for s in client.sessions.list()], [second.id])
            second.end()

    def test_with_retries_0_the_refusal_raises_rate_limited_with_retry_after(self) -> None:
        with Client(LIMITED_URL, api_key=LIMITED_KEY, retries=0) as client:
            with client.sessions.start():
                with RetryLog() as log, self.assertRaises(RateLimited) as caught:
                    client.sessions.start()
            self.assertEqual(log.records, [])
            error = caught.exception
            self.assertIsInstance(error, SessionLimit)
            self.assertIsInstance(error, ServiceError)
            self.assertEqual((error.code, error.status, error.retry_after), ("session_limit", 429, 2.0))

    def test_retries_are_bounded_then_the_refusal_is_raised(self) -> None:
        with Client(LIMITED_URL, api_key=LIMITED_KEY, retries=1) as client:
            with client.sessions.start():
                with RetryLog() as log, self.assertRaises(SessionLimit):
                    client.sessions.start()
            self.assertEqual(len(log.records), 1)

    def test_an_error_without_retry_after_is_not_retried(self) -> None:
        with Client(LIMITED_URL, api_key=LIMITED_KEY) as client, RetryLog() as log:
            with self.assertRaises(ServiceError) as caught:
                client.sessions.get("no-such-session")
            self.assertEqual((caught.exception.code, caught.exception.retry_after), ("session_not_found", None))
            self.assertEqual(log.records, [])

    def test_a_negative_retries_is_a_value_error(self) -> None:
        with self.assertRaises(ValueError):
            Client(LIMITED_URL, api_key=LIMITED_KEY, retries=-1)


@unittest.skipUnless(HAVE_LIMITED, NEEDS_SERVER)
class AsyncRetryTest(unittest.IsolatedAsyncioTestCase):
    async def test_the_async_client_retries_a_refused_start_and_raises_with_retries_0(self) -> None:
        async with AsyncClient(LIMITED_URL, api_key=LIMITED_KEY) as client:
            holder = await client.sessions.start()
            async with AsyncClient(LIMITED_URL, api_key=LIMITED_KEY, retries=0) as impatient:
                with self.assertRaises(RateLimited) as caught:
                    await impatient.sessions.start()
                self.assertEqual(caught.exception.retry_after, 2.0)
            # Ended from the retry log, in this thread, while the client sleeps before its retry.
            with Client(LIMITED_URL, api_key=LIMITED_KEY) as sync, RetryLog(on_retry=lambda: sync.sessions.get(holder.id).end()) as log:
                second = await client.sessions.start()
            self.assertEqual(len(log.records), 1)
            self.assertEqual([s.id for s in await client.sessions.list()], [second.id])


if __name__ == "__main__":
    unittest.main()
