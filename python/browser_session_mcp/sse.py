"""An incremental Server-Sent Events parser, after the WHATWG HTML "event stream interpretation" rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional


@dataclass(frozen=True)
class SseMessage:
    """One dispatched event: its type (``message`` when the stream named none), its data and the last event id."""

    event: str
    data: str
    id: Optional[str] = None


class SseParser:
    """Feed it text as it arrives; it returns the events completed so far.

    Lines end with CRLF, LF or CR (a CRLF split across two chunks counts once). Comment lines (``: keepalive``)
    are skipped, ``data`` lines are joined with newlines, an event is dispatched at a blank line, and an event
    left unfinished when the stream ends is dropped, as the standard says.
    """

    def __init__(self) -> None:
        self._buffer = ""
        self._skip_lf = False
        self._event = ""
        self._data: List[str] = []
        self._has_data = False
        self._last_id: Optional[str] = None
        self.retry: Optional[int] = None

    def feed(self, text: str) -> List[SseMessage]:
        """Parses ``text`` (any slice of the stream) and returns the events it completed."""
        out: List[SseMessage] = []
        if self._skip_lf and text.startswith("\n"):
            text = text[1:]
        self._skip_lf = False
        self._buffer += text
        start = 0
        buffer = self._buffer
        length = len(buffer)
        while start < length:
            cr = buffer.find("\r", start)
            lf = buffer.find("\n", start)
            if cr == -1 and lf == -1:
                break
            end = lf if cr == -1 else cr if lf == -1 else min(cr, lf)
            line = buffer[start:end]
            if buffer[end] == "\r":
                if end + 1 < length:
                    start = end + 2 if buffer[end + 1] == "\n" else end + 1
                else:
                    # The LF of this CRLF may come with the next chunk.
                    self._skip_lf = True
                    start = end + 1
            else:
                start = end + 1
            message = self._line(line)
            if message is not None:
                out.append(message)
        self._buffer = buffer[start:]
        return out

    def _line(self, line: str) -> Optional[SseMessage]:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "event":
            self._event = value
        elif field == "data":
            self._data.append(value)
            self._has_data = True
        elif field == "id":
            if "\0" not in value:
                self._last_id = value
        elif field == "retry":
            if value.isdigit():
                self.retry = int(value)
        return None

    def _dispatch(self) -> Optional[SseMessage]:
        event, data, has_data = self._event, "\n".join(self._data), self._has_data
        self._event, self._data, self._has_data = "", [], False
        if not has_data:
            return None
        return SseMessage(event=event or "message", data=data, id=self._last_id)
