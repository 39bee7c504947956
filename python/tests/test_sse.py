"""The SSE parser on its own: line endings, comments, multi-line data, chunk boundaries."""

import unittest

from browser_session_mcp import SseMessage, SseParser


def parse_in_pieces(text: str, size: int):
    parser = SseParser()
    events = []
    for i in range(0, len(text), size):
        events.extend(parser.feed(text[i : i + size]))
    return events


class SseParserTest(unittest.TestCase):
    def test_named_events_with_json_data(self) -> None:
        events = SseParser().feed('event: starting\ndata: {"a":1}\n\nevent: finished\ndata: {"b":2}\n\n')
        self.assertEqual(events, [SseMessage("starting", '{"a":1}'), SseMessage("finished", '{"b":2}')])

    def test_multi_line_data_is_joined_with_newlines(self) -> None:
        events = SseParser().feed("data: first\ndata:second\ndata:  third\n\n")
        self.assertEqual(events, [SseMessage("message", "first\nsecond\n third")])

    def test_comments_and_keepalives_are_skipped(self) -> None:
        events = SseParser().feed(": keepalive\n\nevent: log\n: in between\ndata: x\n\n:\n\n")
        self.assertEqual(events, [SseMessage("log", "x")])

    def test_crlf_and_cr_line_endings(self) -> None:
        crlf = SseParser().feed("event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\r")
        self.assertEqual(crlf, [SseMessage("a", "1"), SseMessage("b", "2")])

    def test_any_chunking_gives_the_same_events(self) -> None:
        text = 'event: log\r\ndata: {"message":"é ü"}\r\n\r\n: keepalive\r\n\r\nid: 7\r\nevent: finished\r\ndata: x\r\ndata: y\r\n\r\n'
        whole = SseParser().feed(text)
        self.assertEqual(len(whole), 2)
        self.assertEqual(whole[1], SseMessage("finished", "x\ny", "7"))
        for size in (1, 2, 3, 5, 7):
            self.assertEqual(parse_in_pieces(text, size), whole, f"chunks of {size}")

    def test_cr_then_lf_in_the_next_chunk_is_one_line_end(self) -> None:
        parser = SseParser()
        self.assertEqual(parser.feed("data: a\r"), [])
        self.assertEqual(parser.feed("\n"), [], "the LF completes the CRLF: no blank line yet")
        self.assertEqual(parser.feed("\r\n"), [SseMessage("message", "a")])

    def test_event_without_data_is_not_dispatched_and_resets_the_type(self) -> None:
        events = SseParser().feed("event: lonely\n\ndata: x\n\n")
        self.assertEqual(events, [SseMessage("message", "x")])

    def test_empty_data_field_dispatches_an_empty_string(self) -> None:
        self.assertEqual(SseParser().feed("data\n\n"), [SseMessage("message", "")])

    def test_unfinished_event_at_the_end_is_not_dispatched(self) -> None:
        parser = SseParser()
        self.assertEqual(parser.feed("event: finished\ndata: {}\n"), [])

    def test_retry_and_unknown_fields(self) -> None:
        parser = SseParser()
        self.assertEqual(parser.feed("retry: 1500\nretry: soon\nfoo: bar\ndata: x\n\n"), [SseMessage("message", "x")])
        self.assertEqual(parser.retry, 1500)


if __name__ == "__main__":
    unittest.main()
