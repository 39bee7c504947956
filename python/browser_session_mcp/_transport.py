"""HTTP with the standard library: one connection per call, JSON in and out, errors as ServiceError subclasses,
and the retries of refused calls. ``_async_transport.py`` is the same over asyncio and shares the helpers here."""

from __future__ import annotations

import codecs
import email.utils
import http.client
import json
import logging
import socket
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple, TypeVar
from urllib.parse import urlsplit

from ._operations import OPENAPI_PATH, Operation, data_of, find, operations_of
from .errors import ServiceError, error_for
from .sse import SseParser
from .types import StreamEvent

USER_AGENT = "browser-session-mcp-python/0.1.0"
TERMINAL_EVENTS = ("finished", "error")
#: Statuses whose answer may say, with Retry-After, that the call was refused before anything ran.
RETRY_STATUSES = (429, 503)
#: The most the client waits before a retry, whatever Retry-After says.
MAX_RETRY_WAIT_S = 30.0
DEFAULT_RETRIES = 2

logger = logging.getLogger("browser_session_mcp")
T = TypeVar("T")


def compact(values: Dict[str, Any]) -> Dict[str, Any]:
    """A request body without the keys whose value is None: options not given are left to the server's defaults."""
    return {key: value for key, value in values.items() if value is not None}


def retry_delay(error: ServiceError, attempt: int, retries: int) -> Optional[float]:
    """Seconds to wait before sending a refused call again, or None when it must not be sent again.

    Only an answer that says nothing ran is retried: a 429 or 503 with Retry-After, which the server sends for a
    refusal made before any work (session_limit today). Any other error, and every failure without an
    answer (the call may have run), is raised. The wait is Retry-After, at least a doubling backoff, at most
    MAX_RETRY_WAIT_S."""
    if attempt > retries or error.status not in RETRY_STATUSES or error.retry_after is None:
        return None
    return min(MAX_RETRY_WAIT_S, max(error.retry_after, 0.25 * 2 ** (attempt - 1)))


def log_retry(error: ServiceError, what: str, delay: float, attempt: int) -> None:
    logger.info("%s answered %s (%s); retrying in %.2f s (retry %d)", what, error.status, error.code, delay, attempt)


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After as seconds: delta-seconds or an HTTP date (RFC 9110 10.2.3); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


class Endpoint:
    """Where the service is and how to address it: what both transports share."""

    def __init__(self, base_url: str, api_key: Optional[str], timeout: float, retries: int) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) URL such as http://127.0.0.1:8931, not {base_url!r}")
        if retries < 0:
            raise ValueError(f"retries must be 0 or more, not {retries!r}")
        self.base_url = base_url.rstrip("/")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._api_key = api_key
        self.timeout = timeout
        self.retries = retries
        #: The server's operations by operationId, read from /v1/openapi.json on the first ``call``.
        self._operations: Optional[Dict[str, Operation]] = None

    def use_openapi(self, document: Mapping[str, Any]) -> None:
        """Takes the operations of ``call`` from this OpenAPI document instead of fetching the server's."""
        self._operations = operations_of(document)

    def _what(self, method: str, path: str) -> str:
        return f"{method} {self.base_url}{path}"

    def _headers(self, body: Optional[Dict[str, Any]], stream: bool, accept: Optional[str]) -> Tuple[Dict[str, str], Optional[bytes]]:
        headers = {"accept": accept or ("text/event-stream" if stream else "application/json"), "user-agent": USER_AGENT}
        payload: Optional[bytes] = None
        if body is not None:
            payload = json.dumps(body).encode("utf-8")
            headers["content-type"] = "application/json"
        if stream:
            headers["x-stream-response"] = "true"
        if self._api_key:
            headers["x-svc-api-key"] = self._api_key
        return headers, payload


class Transport(Endpoint):
    """Sends requests to one service address with one API key; retries the calls the server refused (``retries``)."""

    def __init__(self, base_url: str, api_key: Optional[str], timeout: float, retries: int = DEFAULT_RETRIES) -> None:
        super().__init__(base_url, api_key, timeout, retries)
        self._operations_lock = threading.Lock()

    def operations(self) -> Dict[str, Operation]:
        """The server's operations by operationId: its /v1/openapi.json, fetched once (threads wait for one fetch)."""
        if self._operations is None:
            with self._operations_lock:
                if self._operations is None:
                    self.use_openapi(self.request("GET", OPENAPI_PATH))
        assert self._operations is not None
        return self._operations

    def call(self, operation_id: str, body: Optional[Mapping[str, Any]], session_id: Optional[str]) -> Any:
        """Any operation by its operationId; answers the JSON ``data`` (see ``data_of``)."""
        method, path, payload = find(self.operations(), operation_id, self.base_url).target(body, session_id)
        return data_of(self.request(method, path, payload))

    def _retrying(self, what: str, send: Callable[[], T]) -> T:
        attempt = 0
        while True:
            try:
                return send()
            except ServiceError as err:
                attempt += 1
                delay = retry_delay(err, attempt, self.retries)
                if delay is None:
                    raise
                log_retry(err, what, delay, attempt)
                time.sleep(delay)

    def request(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        """One call; returns the parsed JSON of a 2xx answer, raises ServiceError for anything else."""
        return self._retrying(self._what(method, path), lambda: self._request(method, path, body))

    def _request(self, method: str, path: str, body: Optional[Dict[str, Any]]) -> Any:
        conn, response = self._open(method, path, body, stream=False)
        try:
            raw = self._read(response, path)
        finally:
            conn.close()
        return parse_answer(response.status, response.getheader, raw, self._what(method, path))

    def request_bytes(self, path: str, body: Dict[str, Any], accept: str) -> "tuple[bytes, http.client.HTTPResponse]":
        """POSTs and returns the raw bytes of a 2xx answer whose content type is not JSON (an image) with the response
        for its headers; an error body raises ServiceError as ``request`` does."""
        return self._retrying(self._what("POST", path), lambda: self._request_bytes(path, body, accept))

    def _request_bytes(self, path: str, body: Dict[str, Any], accept: str) -> "tuple[bytes, http.client.HTTPResponse]":
        conn, response = self._open("POST", path, body, stream=False, accept=accept)
        try:
            raw = self._read(response, path)
        finally:
            conn.close()
        if 200 <= response.status < 300 and not response.getheader("content-type", "").startswith("application/json"):
            return raw, response
        parsed = parse_answer(response.status, response.getheader, raw, self._what("POST", path))
        raise error_for("invalid_response", f"Expected {accept} from {path}, got JSON: {str(parsed)[:200]}", response.status)

    def stream(self, path: str, body: Dict[str, Any]) -> "EventStream":
        """POSTs with ``x-stream-response: true``; errors found before the stream opens raise here."""
        return self._retrying(self._what("POST", path), lambda: self._stream(path, body))

    def _stream(self, path: str, body: Dict[str, Any]) -> "EventStream":
        conn, response = self._open("POST", path, body, stream=True)
        if response.status == 200 and response.getheader("content-type", "").startswith("text/event-stream"):
            return EventStream(conn, response, self._what("POST", path))
        try:
            raw = self._read(response, path)
        finally:
            conn.close()
        parsed = parse_answer(response.status, response.getheader, raw, self._what("POST", path))
        raise error_for("invalid_response", f"Expected an event stream from {path}, got JSON: {str(parsed)[:200]}", response.status)

    def _open(
        self, method: str, path: str, body: Optional[Dict[str, Any]], stream: bool, accept: Optional[str] = None
    ) -> "tuple[http.client.HTTPConnection, http.client.HTTPResponse]":
        headers, payload = self._headers(body, stream, accept)
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = cls(self._host, self._port, timeout=self.timeout)
        try:
            conn.request(method, self._prefix + path, body=payload, headers=headers)
            return conn, conn.getresponse()
        except (OSError, http.client.HTTPException) as err:
            conn.close()
            raise transport_error(err, self._what(method, path)) from err
        except BaseException:
            conn.close()
            raise

    def _read(self, response: http.client.HTTPResponse, path: str) -> bytes:
        try:
            return response.read()
        except (OSError, http.client.HTTPException) as err:
            raise transport_error(err, f"reading the answer of {path}") from err


class EventStream:
    """The events of a streamed operation, parsed as they arrive. Iterate it (once); use it as a context manager,
    or call ``close()``, to drop the connection early, which cancels the operation on the server."""

    def __init__(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse, what: str) -> None:
        self._conn = conn
        self._response = response
        self._what = what
        self._closed = False

    def __iter__(self) -> Iterator[StreamEvent]:
        decoder = StreamDecoder()
        try:
            while not self._closed and not decoder.finished:
                try:
                    chunk = self._response.read1(65536)
                except (OSError, http.client.HTTPException) as err:
                    if self._closed:
                        return
                    raise transport_error(err, f"reading the event stream of {self._what}") from err
                if not chunk:
                    raise stream_cut_short(self._what)
                yield from decoder.feed(chunk)
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


class StreamDecoder:
    """The bytes of an event stream in, its events out, up to and including the first finished or error event; the
    sync and async streams feed it the chunks they read."""

    def __init__(self) -> None:
        self._parser = SseParser()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        #: True once the finished or error event was given out: nothing after it is read.
        self.finished = False

    def feed(self, chunk: bytes) -> List[StreamEvent]:
        events: List[StreamEvent] = []
        for message in self._parser.feed(self._decoder.decode(chunk)):
            if self.finished:
                break
            event = StreamEvent(event=message.event, data=json_or_text(message.data))
            events.append(event)
            self.finished = event.event in TERMINAL_EVENTS
        return events


def stream_cut_short(what: str) -> ServiceError:
    return error_for("invalid_response", f"The event stream of {what} ended without a finished or error event.")


def json_or_text(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data


def parse_answer(status: int, header: Callable[[str, str], Optional[str]], raw: bytes, what: str) -> Any:
    """The JSON of a 2xx answer; for any other, the ServiceError subclass of its error code (``retry_after`` from the
    Retry-After header). ``header(name, default)`` reads a response header."""
    content_type = header("content-type", "") or ""
    try:
        body = json.loads(raw.decode("utf-8")) if raw else None
    except ValueError:
        snippet = raw[:200].decode("utf-8", errors="replace")
        raise error_for(
            "invalid_response", f"{what} answered HTTP {status} ({content_type or 'no content type'}), not JSON: {snippet!r}", status
        ) from None
    if 200 <= status < 300:
        return body
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), str):
        details = error.get("details")
        raise error_for(
            error["code"],
            str(error.get("message", "")),
            status,
            details if isinstance(details, dict) else None,
            parse_retry_after(header("retry-after", "")),
        )
    raise error_for("invalid_response", f"{what} answered HTTP {status} without an error body: {str(body)[:200]}", status)


def transport_error(err: BaseException, what: str) -> ServiceError:
    """Socket and protocol failures: ``client_timeout`` (nothing received in time), else ``unreachable``."""
    if isinstance(err, ServiceError):
        return err
    if isinstance(err, (socket.timeout, TimeoutError)):
        return error_for("client_timeout", f"No answer in time from {what}: {err}")
    return error_for("unreachable", f"Cannot reach the service ({what}): {err.__class__.__name__}: {err}")
