"""HTTP with the standard library: one connection per call, JSON in and out, errors as ServiceError."""

from __future__ import annotations

import codecs
import http.client
import json
import socket
from typing import Any, Dict, Iterator, Optional
from urllib.parse import urlsplit

from .errors import ServiceError
from .sse import SseParser
from .types import StreamEvent

USER_AGENT = "browser-session-mcp-python/0.1.0"
_TERMINAL_EVENTS = ("finished", "error")


def compact(values: Dict[str, Any]) -> Dict[str, Any]:
    """A request body without the keys whose value is None: options not given are left to the server's defaults."""
    return {key: value for key, value in values.items() if value is not None}


class Transport:
    """Sends requests to one service address with one API key."""

    def __init__(self, base_url: str, api_key: Optional[str], timeout: float) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) URL such as http://127.0.0.1:8931, not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._api_key = api_key
        self.timeout = timeout

    def request(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        """One call; returns the parsed JSON of a 2xx answer, raises ServiceError for anything else."""
        conn, response = self._open(method, path, body, stream=False)
        try:
            raw = self._read(response, path)
        finally:
            conn.close()
        return _parse(response.status, response.getheader("content-type", ""), raw, self._what(method, path))

    def request_bytes(self, path: str, body: Dict[str, Any], accept: str) -> "tuple[bytes, http.client.HTTPResponse]":
        """POSTs and returns the raw bytes of a 2xx answer whose content type is not JSON (an image) with the response
        for its headers; an error body raises ServiceError as ``request`` does."""
        conn, response = self._open("POST", path, body, stream=False, accept=accept)
        try:
            raw = self._read(response, path)
        finally:
            conn.close()
        content_type = response.getheader("content-type", "")
        if 200 <= response.status < 300 and not content_type.startswith("application/json"):
            return raw, response
        parsed = _parse(response.status, content_type, raw, self._what("POST", path))
        raise ServiceError("invalid_response", f"Expected {accept} from {path}, got JSON: {str(parsed)[:200]}", response.status)

    def stream(self, path: str, body: Dict[str, Any]) -> "EventStream":
        """POSTs with ``x-stream-response: true``; errors found before the stream opens raise here."""
        conn, response = self._open("POST", path, body, stream=True)
        content_type = response.getheader("content-type", "")
        if response.status == 200 and content_type.startswith("text/event-stream"):
            return EventStream(conn, response, self._what("POST", path))
        try:
            raw = self._read(response, path)
        finally:
            conn.close()
        parsed = _parse(response.status, content_type, raw, self._what("POST", path))
        raise ServiceError("invalid_response", f"Expected an event stream from {path}, got JSON: {str(parsed)[:200]}", response.status)

    def _what(self, method: str, path: str) -> str:
        return f"{method} {self.base_url}{path}"

    def _open(
        self, method: str, path: str, body: Optional[Dict[str, Any]], stream: bool, accept: Optional[str] = None
    ) -> "tuple[http.client.HTTPConnection, http.client.HTTPResponse]":
        accept = accept or ("text/event-stream" if stream else "application/json")
        headers = {"accept": accept, "user-agent": USER_AGENT}
        payload: Optional[bytes] = None
        if body is not None:
            payload = json.dumps(body).encode("utf-8")
            headers["content-type"] = "application/json"
        if stream:
            headers["x-stream-response"] = "true"
        if self._api_key:
            headers["x-svc-api-key"] = self._api_key
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = cls(self._host, self._port, timeout=self.timeout)
        try:
            conn.request(method, self._prefix + path, body=payload, headers=headers)
            return conn, conn.getresponse()
        except (OSError, http.client.HTTPException) as err:
            conn.close()
            raise _transport_error(err, self._what(method, path)) from err
        except BaseException:
            conn.close()
            raise

    def _read(self, response: http.client.HTTPResponse, path: str) -> bytes:
        try:
            return response.read()
        except (OSError, http.client.HTTPException) as err:
            raise _transport_error(err, f"reading the answer of {path}") from err


class EventStream:
    """The events of a streamed operation, parsed as they arrive. Iterate it (once); use it as a context manager,
    or call ``close()``, to drop the connection early, which cancels the operation on the server."""

    def __init__(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse, what: str) -> None:
        self._conn = conn
        self._response = response
        self._what = what
        self._closed = False

    def __iter__(self) -> Iterator[StreamEvent]:
        parser = SseParser()
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        try:
            while not self._closed:
                try:
                    chunk = self._response.read1(65536)
                except (OSError, http.client.HTTPException) as err:
                    if self._closed:
                        return
                    raise _transport_error(err, f"reading the event stream of {self._what}") from err
                if not chunk:
                    raise ServiceError("invalid_response", f"The event stream of {self._what} ended without a finished or error event.")
                for message in parser.feed(decoder.decode(chunk)):
                    event = StreamEvent(event=message.event, data=_json_or_text(message.data))
                    yield event
                    if event.event in _TERMINAL_EVENTS:
                        return
        finally:
            self.close()

    def close(self) -> None:
        """Closes the connection; an operation still running on the server is cancelled."""
        if not self._closed:
            self._closed = True
            self._conn.close()

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _json_or_text(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data


def _parse(status: int, content_type: str, raw: bytes, what: str) -> Any:
    try:
        body = json.loads(raw.decode("utf-8")) if raw else None
    except ValueError:
        snippet = raw[:200].decode("utf-8", errors="replace")
        raise ServiceError(
            "invalid_response", f"{what} answered HTTP {status} ({content_type or 'no content type'}), not JSON: {snippet!r}", status
        ) from None
    if 200 <= status < 300:
        return body
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), str):
        details = error.get("details")
        raise ServiceError(error["code"], str(error.get("message", "")), status, details if isinstance(details, dict) else None)
    raise ServiceError("invalid_response", f"{what} answered HTTP {status} without an error body: {str(body)[:200]}", status)


def _transport_error(err: BaseException, what: str) -> ServiceError:
    """Socket and protocol failures as ServiceError: ``timeout``, else ``unreachable``."""
    if isinstance(err, ServiceError):
        return err
    if isinstance(err, (socket.timeout, TimeoutError)):
        return ServiceError("timeout", f"No answer in time from {what}: {err}")
    return ServiceError("unreachable", f"Cannot reach the service ({what}): {err.__class__.__name__}: {err}")
