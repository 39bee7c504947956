"""Recording: the trace zip and the action log of a recorded session, and the error of one that is not."""

import io
import zipfile

from browser_session_mcp import ServiceError

from .support import ServerTestCase, site


class RecordingTest(ServerTestCase):
    def test_a_recorded_session_answers_its_trace_zip_and_log(self) -> None:
        with self.client.sessions.start(record={"screenshots": False}) as session:
            response = session.navigate(site("/recording/statements.html"))
            archive = zipfile.ZipFile(io.BytesIO(session.trace()))
            self.assertIsNone(archive.testzip())
            self.assertIn("trace.trace", archive.namelist())
            trace = archive.read("trace.trace").decode("utf-8")
            self.assertIn(f"navigate {response.data.action_id}", trace)
            entries = session.log()["entries"]
            self.assertEqual([(e["operation"], e["actionId"], e["outcome"]) for e in entries], [("navigate", response.data.action_id, "ok")])

    def test_a_session_without_record_answers_recording_not_enabled(self) -> None:
        with self.client.sessions.start() as session:
            with self.assertRaises(ServiceError) as caught:
                session.trace()
            self.assertEqual((caught.exception.code, caught.exception.status), ("recording_not_enabled", 409))
            self.assertEqual(session.log(), {"entries": [], "dropped": 0})
