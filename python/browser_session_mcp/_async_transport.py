"""HTTP/1.1 over asyncio streams, standard library only: the async twin of ``_transport.Transport``.

One connection per call (``Connection: close``), as the sync transport does: no pool to share between event loops,
and a cancelled call closes its own connection, which the server takes as the client going away (it cancels the
operation). Requests and answers are read and written with the helpers of ``_transport`` so that both clients send
the same headers, raise the same errors and retry the same refusals.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, Mapping, Optional, Tuple, TypeVar

from ._transport import (
    DEFAULT_RETRIES,
    Endpoint,
    StreamDecoder,
    log_retry,
    parse_answer,
    retry_delay,
    stream_cut_short,
    transport_error,
)
from ._operations import OPENAPI_PATH, Operation, data_of, find
from .errors import ServiceError, error_for
from .types import StreamEvent

T = TypeVar("T")
_MAX_HEAD_LINES = 200


class AsyncResponse:
    """The status and headers of an answer (what ``request_bytes`` returns beside the bytes)."""

    def __init__(self, status: int, headers: Dict[str, str]) -> None:
        self.status = status
        self.headers = headers

    def getheader(self, name: str, default: Any = None) -> Any:
        """A header's value, as ``http.client.HTTPResponse.getheader`` answers it."""
        return self.headers.get(name.lower(), default)


class _Connection:
    """One HTTP/1.1 exchange on one connection; every read is bounded by the client's timeout."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, timeout: float, what: str) -> None:
        self._reader = reader
        self._writer = writer
        self._timeout = timeout
        self._what = what
        self._chunked = False
        self._left: Optional[int] = None
        self._done = False
        self.response = AsyncResponse(0, {})

    async def _bounded(self, step: Awaitable[T]) -> T:
        try:
            return await asyncio.wait_for(step, self._timeout)
        except asyncio.TimeoutError as err:
            raise error_for("client_timeout", f"No answer in time from {self._what}: nothing received for {self._timeout} s") from err
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as err:
            raise transport_error(err, f"reading the answer of {self._what}") from err

    async def read_head(self) -> AsyncResponse:
        status_line = await self._bounded(self._reader.readline())
        parts = status_line.decode("latin-1").split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
            raise error_for("invalid_response", f"{self._what} did not answer HTTP: {status_line[:100]!r}")
        headers: Dict[str, str] = {}
        for _ in range(_MAX_HEAD_LINES):
            line = (await self._bounded(self._reader.readline())).decode("latin-1").rstrip("\r\n")
            if not line:
                break
            name, _, value = line.partition(":")
            key = name.strip().lower()
            headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
        else:
            raise error_for("invalid_response", f"{self._what} answered more than {_MAX_HEAD_LINES} header lines")
        self.response = AsyncResponse(int(parts[1]), headers)
        self._chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        length = headers.get("content-length")
        self._left = int(length) if length and length.isdigit() and not self._chunked else None
        return self.response

    async def read_chunk(self) -> bytes:
        """The next piece of the body as it arrives; b"" at its end."""
        if self._done:
            return b""
        if self._chunked:
            size_line = await self._bounded(self._reader.readline())
            size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                self._done = True
                return b""
            data = await self._bounded(self._reader.readexactly(size + 2))
            return data[:-2]
        if self._left is not None:
            if self._left == 0:
                self._done = True
                return b""
            data = await self._bounded(self._reader.read(min(self._left, 65536)))
            if not data:
                raise error_for("unreachable", f"The connection of {self._what} closed before the answer was complete.")
            self._left -= len(data)
            return data
        data = await self._bounded(self._reader.read(65536))
        self._done = not data
        return data

    async def read_body(self) -> bytes:
        parts = []
        while True:
            part = await self.read_chunk()
            if not part:
                return b"".join(parts)
            parts.append(part)

    def close(self) -> None:
        """Drops the connection (synchronous, so that it also runs while a cancellation unwinds)."""
        self._writer.close()


class AsyncTransport(Endpoint):
    """``Transport`` over asyncio: the same calls, awaited."""

    def __init__(self, base_url: str, api_key: Optional[str], timeout: float, retries: int = DEFAULT_RETRIES) -> None:
        super().__init__(base_url, api_key, timeout, retries)
        # Made on first use, inside the event loop (an asyncio.Lock made outside one is bound to the wrong loop on 3.9).
        self._operations_lock: Optional[asyncio.Lock] = None

    async def operations(self) -> Dict[str, Operation]:
        """The server's operations by operationId: its /v1/openapi.json, fetched once (concurrent tasks wait for one fetch)."""
        if self._operations is None:
            if self._operations_lock is None:
                self._operations_lock = asyncio.Lock()
            async with self._operations_lock:
                if self._operations is None:
                    self.use_openapi(await self.request("GET", OPENAPI_PATH))
        assert self._operations is not None
        return self._operations

    async def call(self, operation_id: str, body: Optional[Mapping[str, Any]], session_id: Optional[str]) -> Any:
        """Any operation by its operationId; answers the JSON ``data`` (see ``_operations.data_of``)."""
        method, path, payload = find(await self.operations(), operation_id, self.base_url).target(body, session_id)
        return data_of(await self.request(method, path, payload))

    async def _retrying(self, what: str, send: Callable[[], Awaitable[T]]) -> T:
        attempt = 0
        while True:
            try:
                return await send()
            except ServiceError as err:
                attempt += 1
                delay = retry_delay(err, attempt, self.retries)
                if delay is None:
                    raise
                log_retry(err, what, delay, attempt)
                await asyncio.sleep(delay)

    async def request(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        return await self._retrying(self._what(method, path), lambda: self._request(method, path, body))

    async def _request(self, method: str, path: str, body: Optional[Dict[str, Any]]) -> Any:
        conn = await self._open(method, path, body, stream=False)
        try:
            raw = await conn.read_body()
        finally:
            conn.close()
        return parse_answer(conn.response.status, conn.response.getheader, raw, self._what(method, path))

    async def request_bytes(self, path: str, body: Dict[str, Any], accept: str) -> Tuple[bytes, AsyncResponse]:
        return await self._retrying(self._what("POST", path), lambda: self._request_bytes(path, body, accept))

    async def _request_bytes(self, path: str, body: Dict[str, Any], accept: str) -> Tuple[bytes, AsyncResponse]:
        conn = await self._open("POST", path, body, stream=False, accept=accept)
        try:
            raw = await conn.read_body()
        finally:
            conn.close()
        response = conn.response
        if 200 <= response.status < 300 and not (response.getheader("content-type") or "").startswith("application/json"):
            return raw, response
        parsed = parse_answer(response.status, response.getheader, raw, self._what("POST", path))
        raise error_for("invalid_response", f"Expected {accept} from {path}, got JSON: {str(parsed)[:200]}", response.status)

    async def stream(self, path: str, body: Dict[str, Any]) -> "AsyncEventStream":
        return await self._retrying(self._what("POST", path), lambda: self._stream(path, body))

    async def _stream(self, path: str, body: Dict[str, Any]) -> "AsyncEventStream":
        conn = await self._open("POST", path, body, stream=True)
        response = conn.response
        if response.status == 200 and (response.getheader("content-type") or "").startswith("text/event-stream"):
            return AsyncEventStream(conn, self._what("POST", path))
        try:
            raw = await conn.read_body()
        finally:
            conn.close()
        parsed = parse_answer(response.status, response.getheader, raw, self._what("POST", path))
        raise error_for("invalid_response", f"Expected an event stream from {path}, got JSON: {str(parsed)[:200]}", response.status)

    async def _open(
        self, method: str, path: str, body: Optional[Dict[str, Any]], stream: bool, accept: Optional[str] = None
    ) -> _Connection:
        """Connects, sends the request and reads the answer's head."""
        headers, payload = self._headers(body, stream, accept)
        what = self._what(method, path)
        port = self._port or (443 if self._https else 80)
        host = f"[{self._host}]" if ":" in self._host else self._host
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(
                    self._host,
                    port,
                    ssl=ssl.create_default_context() if self._https else None,
                    server_hostname=self._host if self._https else None,
                ),
                self.timeout,
            )
        except asyncio.TimeoutError as err:
            raise error_for("client_timeout", f"No connection in time to {what}") from err
        except OSError as err:
            raise transport_error(err, what) from err
        conn = _Connection(reader, writer, self.timeout, what)
        try:
            lines = [f"{method} {self._prefix + path} HTTP/1.1", f"host: {host}" + ("" if self._port is None else f":{self._port}")]
            lines += [f"{name}: {value}" for name, value in headers.items()]
            lines += ["connection: close", f"content-length: {len(payload or b'')}"]
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (payload or b""))
            await conn._bounded(writer.drain())
            await conn.read_head()
            return conn
        except BaseException:
            conn.close()
            raise


class AsyncEventStream:
    """The events of a streamed operation, parsed as they arrive: ``async for event in stream``. Use it with
    ``async with``, or ``await stream.close()``, to drop the connection early, which cancels the operation on the
    server; cancelling the task that reads it does the same."""

    def __init__(self, conn: _Connection, what: str) -> None:
        self._conn = conn
        self._what = what
        self._closed = False

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self._events()

    async def _events(self) -> AsyncIterator[StreamEvent]:
        decoder = StreamDecoder()
        try:
            while not self._closed and not decoder.finished:
                try:
                    chunk = await self._conn.read_chunk()
                except ServiceError:
                    if self._closed:
                        return
                    raise
                if not chunk:
                    raise stream_cut_short(self._what)
                for event in decoder.feed(chunk):
                    yield event
        finally:
            self._close_now()

    def _close_now(self) -> None:
        if not self._closed:
            self._closed = True
            self._conn.close()

    async def close(self) -> None:
        """Closes the connection; an operation still running on the server is cancelled."""
        self._close_now()

    aclose = close

    async def __aenter__(self) -> "AsyncEventStream":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._close_now()
