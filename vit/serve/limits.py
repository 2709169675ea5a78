"""What one request may carry, checked before gradio reads it: ASGI middleware, gradio-free. Each route read here is
in :data:`ROUTES`, which vit.ui.gradio_internals.check finds among the launched server's. The attacks behind each
refusal: docs/reliability.md.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from starlette.exceptions import HTTPException  # what gradio raises inside an event stream it started
from starlette.requests import ClientDisconnect  # gradio's server: starlette's exception for a client gone

from vit import i18n
from vit.serve.sessions import SessionLedger, valid_hash
from vit.serve.uploads import UploadSpace

log = logging.getLogger("vit.app")

MAX_BODY = 64 * 1024  # the app's largest event (the page's measurements, ~2 kB) with room to spare
UPLOAD_SLACK = 64 * 1024  # multipart headers around the one file
UNUSED = re.compile(r"/gradio_api/(?:deep_link|dev/reload)/?$")
UPLOAD = re.compile(r"/gradio_api/upload/?$")
BY_NAME = re.compile(r"/gradio_api/(?:call/v2|call|run|api)/(?P<name>[^/]+)")  # an event called by its name
JOBS = re.compile(r"/gradio_api/(?:queue/join|call/(?!v2/)[^/]+|call/v2/[^/]+|run/[^/]+|api/[^/]+)/?$")
STREAM = re.compile(r"/gradio_api/(?:queue/data|call/(?:v2/)?[^/]+/(?P<event>[A-Za-z0-9_-]{1,64}))/?$")
FILE = re.compile(r"/gradio_api/file[=/]")  # gradio's file route (and its older spelling)
HEARTBEAT = re.compile(r"/gradio_api/heartbeat/(?P<hash>[^/]*)/?$")
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
HEARTBEAT_KEY = "heartbeat:"  # a page's heartbeat in Streams: this, then its session hash
# Every route the middleware reads, as a request to it, with the pattern that reads it: a route gradio moves stops
# the start (vit.ui.gradio_internals.check) instead of going unlimited.
ROUTES = (("GET", "/gradio_api/deep_link", UNUSED), ("GET", "/gradio_api/dev/reload", UNUSED),
          ("POST", "/gradio_api/upload", UPLOAD), ("POST", "/gradio_api/queue/join", JOBS),
          *(("POST", f"/gradio_api/{route}/x", BY_NAME) for route in ("call/v2", "call", "run", "api")),
          *(("POST", f"/gradio_api/{route}/x", JOBS) for route in ("call/v2", "call", "run", "api")),
          ("GET", "/gradio_api/queue/data", STREAM), ("GET", "/gradio_api/call/x/1", STREAM),
          ("GET", "/gradio_api/call/v2/x/1", STREAM), ("GET", "/gradio_api/file=x", FILE),
          ("GET", "/gradio_api/file/x", FILE), ("GET", "/gradio_api/heartbeat/x", HEARTBEAT))

# Each refusal's message key (vit.i18n.refusals): written in the language of the page that sent the request.
BAD_HASH = "refusal-bad-hash"
TOO_BIG = "refusal-request-too-big"
ONE_FILE = "refusal-one-file"
FOREIGN = "refusal-foreign"
TOO_MANY_JOBS = "refusal-too-many-jobs"
FULL = "refusal-upload-full"
SHARE = "refusal-upload-share"
NOT_FOUND = "refusal-not-found"
FILE_GONE = "refusal-file-gone"


class LogQuota:
    """At most ``lines`` log lines per client in each ``window_s``, then one line saying how many were left out: one
    client's bad input cannot grow the log without bound."""

    def __init__(self, lines: int = 20, window_s: float = 60.0, clients: int = 4096):
        self.lines, self.window_s = lines, window_s
        self._seen: OrderedDict[str, list] = OrderedDict()  # client -> [window start, lines written, left out]
        self._clients = clients
        self._lock = threading.Lock()

    def allow(self, client: str) -> tuple[bool, int]:
        """(whether to write this client's line, how many of its lines were left out before it)."""
        now = time.monotonic()
        with self._lock:
            seen = self._seen.pop(client, None) or [now, 0, 0]
            left_out = 0
            if now - seen[0] > self.window_s:
                left_out, seen = seen[2], [now, 0, 0]
            seen[1] += 1
            write = seen[1] <= self.lines
            seen[2] += not write
            self._seen[client] = seen
            while len(self._seen) > self._clients:
                self._seen.popitem(last=False)
            return write, left_out

    def info(self, logger: logging.Logger, client: str, message: str, *args) -> None:
        """``logger.info(message, *args)`` within ``client``'s quota, after a line saying how many were left out."""
        write, left_out = self.allow(client)
        if left_out:
            logger.info("(%d more lines of this client were left out of the log)", left_out)
        if write:
            logger.info(message, *args)


TRUST_ENV = "VIT_TRUST_FORWARDED"


def trusts_forwarded(environ=os.environ) -> bool:
    """Whether ``X-Forwarded-For`` names the client: on a Space, or with ``VIT_TRUST_FORWARDED=1`` (a proxy that appends
    the address stands in front); never otherwise, as a client could name any address."""
    return environ.get(TRUST_ENV, "").strip() == "1" or bool(environ.get("SPACE_ID"))


def client_address(scope, trust_forwarded: bool) -> str:
    """The request's client: the address that connected, or, behind a trusted proxy (a Space), the last address
    of its ``X-Forwarded-For`` lines joined in order (RFC 9110 5.3): the proxy's own (a client can forge the rest)."""
    if trust_forwarded:
        lines = [value.decode("latin-1") for name, value in scope.get("headers", ()) if name == b"x-forwarded-for"]
        entries = [e.strip() for e in ",".join(lines).split(",") if e.strip()]
        if entries:
            return entries[-1]
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


def _host_of(authority: str) -> str:
    """'127.0.0.1:7860' -> '127.0.0.1'; '[::1]:7860' -> '[::1]'."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        return authority[:authority.find("]") + 1]
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


@dataclass
class Streams:
    """The event streams and heartbeats clients hold open, by session hash or event id, and when each was last open."""

    remember: int = 50_000  # keys whose last time open is kept (the oldest forgotten first)
    clock: Callable[[], float] = time.monotonic  # gradio's queue stamps its jobs with time.monotonic too
    _open: dict[str, int] = field(default_factory=dict)
    _last: OrderedDict[str, float] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def opened(self, key: str) -> None:
        with self._lock:
            self._open[key] = self._open.get(key, 0) + 1
            self._stamp(key)

    def closed(self, key: str) -> None:
        with self._lock:
            left = self._open.get(key, 0) - 1
            if left > 0:
                self._open[key] = left
            else:
                self._open.pop(key, None)
            self._stamp(key)

    def _stamp(self, key: str) -> None:
        self._last[key] = self.clock()
        self._last.move_to_end(key)
        if len(self._last) > self.remember:
            self._last.popitem(last=False)

    def is_open(self, *keys: str) -> bool:
        with self._lock:
            return any(k in self._open for k in keys)

    def page_open(self, session: str) -> bool:
        """Whether the page of ``session`` holds its heartbeat or its event stream open."""
        return self.is_open(session, HEARTBEAT_KEY + session)

    def unread_s(self, since: float, *keys: str) -> float:
        """Seconds since ``since`` (a job's arrival) that no stream of ``keys`` has been open: 0 while one is."""
        with self._lock:
            if any(k in self._open for k in keys):
                return 0.0
            last = max((self._last[k] for k in keys if k in self._last), default=since)
            return max(0.0, self.clock() - max(since, last))

    def __contains__(self, key: str) -> bool:
        return self.is_open(key)


class Refused(Exception):  # noqa: N818 - a reply, not a failure
    """A request answered at the door: its HTTP status and its message's key (vit.i18n.refusals)."""

    def __init__(self, status: int, key: str):
        super().__init__(key)
        self.status, self.key = status, key


class RequestLimits:
    """ASGI middleware answering at the door, in one sentence in the page's language: unused routes (404), a foreign
    Host or Origin on a private server (403), a bad session hash (400), a body or upload too large or of more than
    one file (413), an upload over its address's share (429) or the folder's cap (507), a job beyond ``max_jobs``
    (429), an event stream with nothing ``pending`` (404), gradio's refusal of a file (no path). It tells the
    ``ledger`` who uses which session; ``background`` coroutines start with the first request.
    """

    def __init__(self, app, ledger: SessionLedger | None = None, forget: Callable[[str], None] | None = None,
                 private_hosts: Iterable[str] | None = None, uploads: UploadSpace | None = None,
                 max_upload: int = 20 * 10**6, jobs_of: Callable[[str], int] | None = None, max_jobs: int = 8,
                 trust_forwarded: bool = False, streams: Streams | None = None,
                 pending: Callable[[str], bool] | None = None, background: Iterable[Callable[[], Awaitable]] = ()):
        self.app, self.ledger, self.forget = app, ledger, forget
        self.private_hosts = None if private_hosts is None else {_host_of(h) for h in private_hosts}
        self.uploads, self.max_upload = uploads, max_upload
        self.jobs_of, self.max_jobs, self.trust_forwarded = jobs_of, max_jobs, trust_forwarded
        self.streams, self.pending = streams, pending
        self.quota = LogQuota()  # this middleware's lines in the log, per client
        self._background, self._tasks = list(background), []
        self._joining: dict[str, int] = {}  # a client's joins on their way into gradio's queue (not yet counted there)

    async def __call__(self, scope, receive, send):
        while self._background:  # on the server's own event loop, with its first request
            self._tasks.append(asyncio.get_running_loop().create_task(self._background.pop()()))
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            await self._handle(scope, receive, send)
        except Refused as refused:
            await _reply(send, refused.status, i18n.text(refused.key, _language(scope)))
        except ClientDisconnect:  # an aborted upload: uvicorn would log starlette's whole traceback
            log.info("a client left before its request to %s was read", ascii(scope.get("path", "")[:80]))

    async def _handle(self, scope, receive, send):
        path = scope.get("path", "")
        if UNUSED.search(path):
            raise Refused(404, "refusal-not-found")
        self._check_host(scope)
        session = self._query_hash(scope, path)
        length = _header(scope, b"content-length")
        try:
            length = int(length) if length is not None else None
        except ValueError:
            raise Refused(400, TOO_BIG) from None
        client = client_address(scope, self.trust_forwarded)
        if UPLOAD.search(path) and scope.get("method") == "POST":
            await self._upload(scope, receive, send, length, client)
            return
        if length is not None and length > MAX_BODY:
            raise Refused(413, TOO_BIG)
        if scope.get("method") == "POST":
            body = await _read(receive, MAX_BODY)
            session = self._body_hash(body) or session
            if session is not None:
                self._seen(session, client)
            receive = _replay(body, receive)
            if JOBS.search(path):
                await self._join(client, scope, receive, send)
                return
        elif session is not None:
            self._seen(session, client)
        if session is not None and scope.get("method") == "GET" and HEARTBEAT.search(path):
            await self._stream(scope, receive, send, HEARTBEAT_KEY + session, client)
            return
        stream = STREAM.search(path) if scope.get("method") == "GET" else None
        if stream:
            event = stream.group("event")
            if not event and session is not None and self.pending is not None and not self.pending(session):
                raise Refused(404, NOT_FOUND)
            await self._stream(scope, receive, send, event or session, client)
            return
        if FILE.search(path) and scope.get("method") in ("GET", "HEAD"):
            await self._file(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _stream(self, scope, receive, send, key: str | None, client: str) -> None:
        """An event stream, noted in ``streams`` while open; an HTTP error gradio raises inside it is one log line."""
        state = {"started": False, "ended": False}

        async def noted(message):
            state["started"] = state["started"] or message["type"] == "http.response.start"
            state["ended"] = message["type"] == "http.response.body" and not message.get("more_body", False)
            await send(message)

        if key and self.streams is not None:
            self.streams.opened(key)
        try:
            await self.app(scope, receive, noted)
        except Exception as exc:
            refusal = exc if isinstance(exc, HTTPException) else exc.__cause__
            if not state["started"] or not isinstance(refusal, HTTPException):
                raise
            self.quota.info(log, client, "an event stream at %s ended: gradio answered %s inside it",
                            ascii(scope.get("path", "")[:80]), refusal.status_code)
            if not state["ended"]:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            if key and self.streams is not None:
                self.streams.closed(key)

    async def _file(self, scope, receive, send) -> None:
        """gradio's file route; its refusal (403, 404) becomes one sentence naming no path, the same for every file."""
        refused: list[int] = []

        async def answer(message):
            if message["type"] == "http.response.start" and message["status"] in (403, 404):
                refused.append(message["status"])
            if not refused:
                await send(message)

        await self.app(scope, receive, answer)
        if refused:
            raise Refused(refused[0], FILE_GONE)

    def _check_host(self, scope) -> None:
        if self.private_hosts is None:
            return
        host = _header(scope, b"host")
        if host is None or _host_of(host) not in self.private_hosts:
            raise Refused(403, FOREIGN)
        origin = _header(scope, b"origin")
        if origin is not None and origin != "null":
            if _host_of(urlsplit(origin).netloc) not in self.private_hosts:
                raise Refused(403, FOREIGN)

    @staticmethod
    def _query_hash(scope, path: str) -> str | None:
        beat = HEARTBEAT.search(path)
        hashes = [beat.group("hash")] if beat else []
        query = scope.get("query_string", b"").decode("latin-1")
        if "session_hash" in query:
            hashes += parse_qs(query, keep_blank_values=True).get("session_hash", [])
        for value in hashes:
            if not valid_hash(value):
                raise Refused(400, BAD_HASH)
        return hashes[0] if hashes else None

    @staticmethod
    def _body_hash(body: bytes) -> str | None:
        if b"session_hash" not in body:
            return None
        try:
            data = json.loads(body)
        except ValueError:
            return None  # gradio answers a body that is not JSON itself
        value = data.get("session_hash") if isinstance(data, dict) else None
        if value is None:
            return None
        if not valid_hash(value):
            raise Refused(400, BAD_HASH)
        return value

    def _seen(self, session: str, client: str) -> None:
        if self.ledger is None:
            return
        for gone in self.ledger.seen(session, client):
            if self.forget is not None:
                self.forget(gone)

    async def _join(self, client: str, scope, receive, send) -> None:
        """A job joins gradio's queue if its client has fewer than ``max_jobs`` there or on their way (the check and
        the count are one step of the event loop, so a burst is counted as it arrives)."""
        if self.jobs_of is not None and self.jobs_of(client) + self._joining.get(client, 0) >= self.max_jobs:
            raise Refused(429, TOO_MANY_JOBS)
        self._joining[client] = self._joining.get(client, 0) + 1
        try:
            await self.app(scope, receive, send)
        finally:
            self._joining[client] -= 1
            if not self._joining[client]:
                del self._joining[client]

    async def _upload(self, scope, receive, send, length: int | None, client: str) -> None:
        limit = self.max_upload + UPLOAD_SLACK
        if length is not None and length > limit:
            raise Refused(413, TOO_BIG)
        boundary = _boundary(_header(scope, b"content-type") or "")
        reserve = length if length is not None else limit
        if self.uploads is not None:
            why = await asyncio.to_thread(self.uploads.reserve, reserve, client)
            if why is not None:
                raise Refused(429 if why == SHARE else 507, why)  # the keys: vit.serve.uploads
        counter = _PartCounter(boundary, limit)
        refused: list[Refused] = []

        async def counted():
            message = await receive()
            if message["type"] == "http.request" and not refused:
                problem = counter.feed(message.get("body", b""))
                if problem is not None:
                    refused.append(problem)
                    return {"type": "http.disconnect"}  # gradio stops reading; its partial file is swept
            return message

        started: list[bool] = []
        answer: list[bytes] = []  # gradio's answer: the stored file's path, which counts against the client's share

        async def quiet(message):  # once refused, gradio's own answer is not sent: ours is
            if refused:
                return
            started.append(True)
            if message["type"] == "http.response.start":
                answer.append(b"" if message["status"] == 200 else b"-")
            elif answer and answer[0] != b"-" and len(answer) < 64:
                answer.append(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, counted, quiet)
        except Exception:
            if not refused:
                raise
        finally:
            if self.uploads is not None:
                self.uploads.release(reserve, received=counter.size, client=client)
        if self.uploads is not None and answer and answer[0] != b"-":
            self.uploads.owned(_paths(b"".join(answer)), client)
        if refused and not started:
            raise refused[0]


class _PartCounter:
    """Counts the bytes and the parts of a multipart body as it streams (a delimiter may span chunks)."""

    def __init__(self, boundary: bytes | None, limit: int):
        self.delimiter = b"--" + boundary if boundary else None
        self.limit, self.size, self.parts, self._tail = limit, 0, 0, b""

    def feed(self, chunk: bytes) -> Refused | None:
        self.size += len(chunk)
        if self.size > self.limit:
            return Refused(413, TOO_BIG)
        if self.delimiter is None:
            return None
        data = self._tail + chunk
        self.parts += data.count(self.delimiter)
        self._tail = data[-(len(self.delimiter) - 1):]
        # one file and gradio's closing delimiter: two delimiters; a third starts another part
        return Refused(413, ONE_FILE) if self.parts > 2 else None


def _paths(body: bytes) -> list[str]:
    """The paths of gradio's answer to an upload (a JSON list of them); [] for anything else."""
    try:
        paths = json.loads(body)
    except ValueError:
        return []
    return [p for p in paths if isinstance(p, str)] if isinstance(paths, list) else []


def _boundary(content_type: str) -> bytes | None:
    match = re.search(r'boundary="?([^";]+)"?', content_type)
    return match.group(1).encode("latin-1") if match else None


async def _read(receive, limit: int) -> bytes:
    """The whole body, refused as soon as it passes ``limit`` bytes."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise Refused(413, TOO_BIG)
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive):
    """A ``receive`` that gives the app the body already read, then whatever the client sends next."""
    sent = False

    async def again():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


def _language(scope) -> str:
    """The language of the page that sent a request: its ``vit_lang`` cookie, else Accept-Language (as
    :func:`vit.ui.lang.of` reads it)."""
    headers = dict(scope.get("headers") or ())
    cookie = re.search(r"(?:^|;)\s*vit_lang=([A-Za-z-]{1,16})", headers.get(b"cookie", b"").decode("latin-1"))
    return i18n.language(cookie.group(1) if cookie else headers.get(b"accept-language", b"").decode("latin-1"))


async def _reply(send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class PrivateEventGuard:
    """ASGI middleware: the app's private events (``private``: their api names) answer the page only, never a by-name
    call: gradio 6.31 routes ``/gradio_api/call/<name>`` to every event, ``api_visibility="private"`` ones too. The
    page calls them by number through the queue; every event that takes an image checks it as well."""

    def __init__(self, app, private: frozenset[str]):
        self.app, self.private = app, private

    async def __call__(self, scope, receive, send):
        match = BY_NAME.search(scope.get("path", "")) if scope["type"] == "http" else None
        if match and match.group("name") in self.private:
            await _reply(send, 404, "Not Found")
            return
        await self.app(scope, receive, send)
