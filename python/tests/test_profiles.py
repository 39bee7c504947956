"""Storage state and named profiles: session.state(), start(storage_state=/profile=), save_profile, end(save_profile=)."""

import unittest
import uuid

from browser_session_mcp import Client, ProfileInfo, ServiceError, Session

from .support import OTHER_KEY, ServerTestCase, site


def sign_in(session: Session) -> None:
    """Signs in on the test site by refs (no model): username, password, then the Sign in button."""
    session.navigate(site("/auth/login.html"))
    actions = session.page.observe().actions

    def find(text: str):
        return next(action for action in actions if text in action.description)

    session.page.act(find("textbox: Username").with_arguments(value="alice"))
    session.page.act(find("textbox: Password").with_arguments(value="correct horse battery"))
    session.page.act(find("button: Sign in"))


def signed_in(session: Session) -> bool:
    session.navigate(site("/auth/home"))
    return "Signed in as alice" in session.page.extract()["pageText"]


class ProfilesTest(ServerTestCase):
    def test_state_out_and_in_and_a_profile_saved_listed_loaded_and_deleted(self) -> None:
        name = f"py-{uuid.uuid4().hex[:8]}"
        with self.client.sessions.start() as first:
            sign_in(first)
            state = first.state()
            self.assertEqual([cookie["name"] for cookie in state["cookies"]], ["ledger_session"])
            self.assertEqual(state["origins"][0]["origin"], site(""))
            self.assertNotIn("indexedDB", state["origins"][0])
            self.assertEqual(first.state(indexed_db=True)["origins"][0].get("indexedDB"), [])
            saved = first.save_profile(name)
            self.assertIsInstance(saved, ProfileInfo)
            self.assertEqual((saved.name, saved.cookies, saved.origins), (name, 1, 1))

        with self.client.sessions.start(storage_state=state) as from_state:
            self.assertTrue(signed_in(from_state))
        with self.client.sessions.start(profile=name) as from_profile:
            self.assertTrue(signed_in(from_profile))
            from_profile.end(save_profile=True)
        self.assertIn(name, self.client.profiles.list().names())

        # Another key neither sees nor loads this key's profile: 404 as for a name never saved.
        with Client(api_key=OTHER_KEY) as other:
            self.assertNotIn(name, other.profiles.list().names())
            with self.assertRaises(ServiceError) as caught:
                other.sessions.start(profile=name)
            self.assertEqual((caught.exception.code, caught.exception.status), ("profile_not_found", 404))

        self.client.profiles.delete(name)
        self.assertNotIn(name, self.client.profiles.list().names())
        with self.assertRaises(ServiceError) as caught:
            self.client.profiles.delete(name)
        self.assertEqual(caught.exception.code, "profile_not_found")

    def test_profiles_save_takes_a_session_or_its_id(self) -> None:
        name = f"py-{uuid.uuid4().hex[:8]}"
        with self.client.sessions.start() as session:
            self.assertEqual(self.client.profiles.save(session, name).name, name)
            self.assertEqual(self.client.profiles.save(session.id).name, name)  # the name it was last saved under
        self.client.profiles.delete(name)

    def test_a_bad_storage_state_names_the_field(self) -> None:
        bad = {"cookies": [{"name": "a", "value": "kept-secret", "domain": "x.test", "path": "/"}], "origins": []}
        with self.assertRaises(ServiceError) as caught:
            self.client.sessions.start(storage_state=bad)
        self.assertEqual((caught.exception.code, caught.exception.status), ("invalid_argument", 400))
        self.assertIn("storageState.cookies.0.expires", caught.exception.message)
        self.assertNotIn("kept-secret", caught.exception.message)
        with self.assertRaises(ServiceError) as caught:
            self.client.sessions.start(profile="no such profile here")
        self.assertEqual(caught.exception.code, "profile_not_found")


if __name__ == "__main__":
    unittest.main()
