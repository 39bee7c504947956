"""session.live_view(): the signed link of REST liveView; the page it names loads (docs/live-view.md)."""

import unittest
import urllib.error
import urllib.request
from datetime import datetime, timezone

from browser_session_mcp import LiveView

from .support import SessionTestCase, site


class LiveViewTest(SessionTestCase):
    def test_the_link_is_a_page_that_loads_without_the_api_key(self) -> None:
        self.session.navigate(site("/index.html"))
        view = self.session.live_view()
        self.assertIsInstance(view, LiveView)
        self.assertTrue(view.interactive)
        self.assertRegex(view.url, r"/live/[^/?]+\?token=")
        self.assertNotIn("py-key", view.url)
        expires = datetime.fromisoformat(view.expires_at.replace("Z", "+00:00"))
        self.assertGreater(expires, datetime.now(timezone.utc))
        with urllib.request.urlopen(view.url, timeout=30) as page:
            self.assertEqual(page.status, 200)
            self.assertTrue(page.headers.get("content-type", "").startswith("text/html"))
            self.assertIn(b"<", page.read(200))

    def test_a_read_only_link_and_a_forged_token(self) -> None:
        view = self.session.live_view(interactive=False, expires_in_ms=60_000)
        self.assertFalse(view.interactive)
        forged = view.url.split("token=")[0] + "token=forged"
        with self.assertRaises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(forged, timeout=30)
        self.assertEqual(caught.exception.code, 401)


if __name__ == "__main__":
    unittest.main()
