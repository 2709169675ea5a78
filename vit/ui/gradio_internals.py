"""Every use of gradio's private objects, in this one module, checked when the server starts: gradio offers no
public way to do what a shared server's protections need (:data:`NEEDED`). Where anything is missing the app
refuses to start, naming it; nothing falls back silently. Why each is kept: docs/reliability.md."""

from __future__ import annotations

import asyncio
import datetime
import errno
import logging
import time
import weakref
from copy import copy
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import gradio
from gradio import context, queueing, state_holder
from gradio.components import State
from gradio.exceptions import Error, InvalidPathError
from pydantic import ValidationError
from starlette.routing import Match  # gradio's server: starlette's routes

from vit import i18n
from vit.serve.files import UPLOAD_AGAIN
from vit.serve.limits import ROUTES, Streams, client_address

TESTED = "6.28 to 6.31"  # the gradio releases these are tested on (requirements.txt; .ci/run tests the lowest)


class GradioInternalsMissing(RuntimeError):
    """The installed gradio lacks a private object one of the server's protections uses."""


# What each protection uses, and where: (what it protects, a private name, the object that must have it).
NEEDED = (
    ("lean sessions", "StateHolder.update, .delete_state, .set_blocks", lambda: [
        state_holder.StateHolder.update, state_holder.StateHolder.delete_state, state_holder.StateHolder.set_blocks]),
    ("lean sessions", "SessionState._update_config, ._update_value_in_config", lambda: [
        state_holder.SessionState._update_config, state_holder.SessionState._update_value_in_config]),
    ("whether a job is read", "gradio.context.LocalContext.blocks, .event_id", lambda: [
        context.LocalContext.blocks, context.LocalContext.event_id]),
    ("each client's jobs", "Queue.clean_events", lambda: [queueing.Queue.clean_events]),
    ("each client's jobs", "Event.request, .session_hash, ._id, .alive, .enqueue_time", lambda: [_sets(
        queueing.Event(None, SimpleNamespace(concurrency_id=None), None, None),
        "request", "session_hash", "_id", "alive", "enqueue_time")]),
    ("quiet refusals", "Blocks.preprocess_data", lambda: [gradio.Blocks.preprocess_data, InvalidPathError]),
    ("the language switch", "changeLocale in gradio's page bundle", lambda: [_page_exports("changeLocale")]),
)
LAUNCHED = (  # on the running server
    ("lean sessions", "server_app.state_holder (a StateHolder with session_data, time_last_used, lock)",
     lambda demo: [demo.server_app.state_holder.session_data, demo.server_app.state_holder.time_last_used,
                   demo.server_app.state_holder.lock]),
    ("each client's jobs", "Blocks._queue (a Queue with event_queue_per_concurrency_id, active_jobs, ...)",
     lambda demo: [_sets(demo._queue, "event_queue_per_concurrency_id", "active_jobs", "pending_event_ids_session",
                         "pending_messages_per_session", "stopped")]),
    ("lean sessions", "SessionState's attributes, each re-created by LeanSessionState", lambda demo: [_sets(
        LeanSessionState(demo), *vars(state_holder.SessionState(demo)))]),
    ("private events", "get_config_file()'s dependencies, each with api_name and api_visibility", lambda demo: [
        _sets(SimpleNamespace(**d), "api_name", "api_visibility") for d in demo.get_config_file()["dependencies"]]),
    ("request limits", "each route the middleware reads (vit.serve.limits.ROUTES)", lambda demo: [
        _routes(demo.server_app.routes)]),
)


def _sets(obj, *names: str):
    """``obj``, if it has an attribute of each of ``names`` of its own (not its class's)."""
    missing = [n for n in names if n not in vars(obj)]
    if missing:
        raise AttributeError(f"{type(obj).__name__} sets no {', '.join(missing)}")
    return obj


def _routes(routes) -> None:
    """Every route of vit.serve.limits.ROUTES is one of ``routes`` (starlette's), and read by its pattern."""
    for method, path, pattern in ROUTES:
        scope = {"type": "http", "method": method, "path": path, "root_path": ""}
        if not pattern.search(path) or all(r.matches(scope)[0] is not Match.FULL for r in routes):
            raise AttributeError(f"no route {method} {path}")


def _page_exports(name: str) -> bool:
    """Whether gradio's page bundle exports ``name`` (vit/ui/page.js imports it from there)."""
    assets = Path(gradio.__file__).parent / "templates" / "frontend" / "assets"
    if not any(name in f.read_text(errors="ignore") for f in assets.glob("core-*.js")):
        raise AttributeError(f"no {name} in {assets}/core-*.js")
    return True


# The page's language switch (vit/ui/page.js calls it with gradio's locale): gradio reads the browser's language once,
# when the page loads; only its page bundle's changeLocale changes it after that.
LOCALE_JS = """async (locale) => {
  const core = performance.getEntriesByType("resource").map((e) => e.name)
    .find((name) => /\\/assets\\/core-[\\w-]+\\.js$/.test(name));
  if (core) (await import(core)).changeLocale(locale);
}"""


def check(demo=None) -> None:
    """Everything this module uses is there (and, given a launched ``demo``, on its server, with the routes the
    middleware reads and the config fields :func:`private_events` reads); else :class:`GradioInternalsMissing`."""
    for what, name, reach in (*NEEDED, *(((w, n, lambda r=r: r(demo)) for w, n, r in LAUNCHED) if demo else ())):
        try:
            reach()
        except (AttributeError, TypeError, KeyError, OSError) as exc:
            raise GradioInternalsMissing(
                f"gradio {gradio.__version__} lacks {name} ({exc}), which the server's {what} use; this app is "
                f"tested on gradio {TESTED}: install one of those (pip install -r requirements.txt)") from None


log = logging.getLogger("vit.app")

UNREAD_S = 10.0  # a job whose stream has not been open for this long since it joined is dropped (a page opens
# it at once; read at each use, so a test may shorten it)
POLL_S = 0.05  # how often a job waiting for its client to open its stream looks again

_WATCHED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # a launched demo -> its Streams
_TRUSTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # a launched demo -> trust X-Forwarded-For


class LeanSessionState(state_holder.SessionState):
    """A gradio session without the deep-link copy of every component's config."""

    def __init__(self, blocks):  # noqa: D107 - what gradio's does, less config_values
        self.blocks_config = copy(blocks.default_config)
        self.config_values = {}
        self.state_data = {}
        self._state_ttl = {}
        self.is_closed = False
        self.STATE_TTL_WHEN_CLOSED = 3600

    def __setitem__(self, key: int, value) -> None:
        block = self.blocks_config.blocks.get(key)
        if isinstance(block, State):
            self._state_ttl[key] = (block.time_to_live, datetime.datetime.now())
            self.state_data[key] = value
        else:
            self.blocks_config.blocks[key] = value

    def _update_config(self, key: int) -> None:
        pass  # only deep links read config_values

    def _update_value_in_config(self, key: int, value) -> None:
        pass  # the request's own values: gradio kept them (5 MB values, 5 MB each), nothing reads them here


class LeanStateHolder(state_holder.StateHolder):
    """gradio's sessions, each a :class:`LeanSessionState`."""

    def __getitem__(self, session_id: str) -> state_holder.SessionState:
        if session_id not in self.session_data:
            self.session_data[session_id] = LeanSessionState(self.blocks)
        self.update(session_id)
        self.time_last_used[session_id] = datetime.datetime.now()
        return self.session_data[session_id]

    def forget(self, session_id: str) -> None:
        """Drop a session: its ``gr.State`` delete callbacks run (the app's analysis keys go), then it goes."""
        try:
            self.delete_state(session_id)
        except Exception:  # a callback's bug must not stop the eviction
            log.exception("a session's state callbacks failed")
        with self.lock:
            self.session_data.pop(session_id, None)
            self.time_last_used.pop(session_id, None)


def private_events(demo) -> frozenset[str]:
    """The api names of every event kept out of the API (``api_visibility="private"``), gradio's own among them."""
    return frozenset(d["api_name"] for d in demo.get_config_file()["dependencies"]
                     if d.get("api_visibility") == "private" and d.get("api_name"))


def install(demo, capacity: int) -> None:
    """Replace the launched server's ``StateHolder`` by a :class:`LeanStateHolder` of ``capacity``."""
    app = demo.server_app
    old = app.state_holder
    holder = LeanStateHolder()
    holder.session_data.update(old.session_data)  # any session opened while the server started
    holder.set_blocks(demo)
    holder.capacity = capacity
    app.state_holder = holder


def forget(demo, session_hash: str) -> None:
    """What gradio keeps for an evicted session goes (the app's own Session: :func:`vit.ui.state.end_session`)."""
    holder = getattr(demo, "state_holder", None)
    if isinstance(holder, LeanStateHolder):
        holder.forget(session_hash)


MISFIT = "This request's values do not fit the event it names."
# what a path a client named can make gradio's checks raise (a 20,000-character name: ENAMETOOLONG)
PATH_ERRORS = (errno.ENAMETOOLONG, errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EACCES, errno.EPERM, errno.EINVAL)
LOGGED_CHARS = 200  # of a refused payload's reason in the log (a 10 MB path is not logged whole)


def refuse_quietly(demo) -> None:
    """gradio's own refusals of a payload as one log line each and one sentence to the sender, the same for every
    path (gradio 6.31 printed a full traceback each); anything else (a full disk) keeps its traceback."""
    original = demo.preprocess_data

    async def preprocess_data(block_fn, inputs, state, *args, **kwargs):
        try:
            return await original(block_fn, inputs, state, *args, **kwargs)
        except (InvalidPathError, ValidationError, ValueError, TypeError, KeyError, OSError) as exc:
            if isinstance(exc, OSError) and exc.errno not in PATH_ERRORS:
                raise  # a full disk, say: the operator's to see in full
            reason = " ".join(str(exc).split())
            log.info("%s refused by gradio: %s: %s", getattr(block_fn, "api_name", None) or "an event",
                     type(exc).__name__, ascii(reason[:LOGGED_CHARS]) + ("..." if len(reason) > LOGGED_CHARS else ""))
            sentence = i18n.text(UPLOAD_AGAIN) if isinstance(exc, (InvalidPathError, OSError)) else MISFIT
            raise Error(sentence, title="Please check", print_exception=False) from None

    demo.preprocess_data = preprocess_data


def _events(demo, queued_only: bool = False) -> list:
    queue = demo._queue
    events = [e for q in queue.event_queue_per_concurrency_id.values() for e in list(q.queue)]
    if not queued_only:
        events += [e for job in list(queue.active_jobs) if job for e in job]
    return events


def jobs_of(demo, trust_forwarded: bool):
    """``count(client)``: that client's jobs in gradio's queue, waiting or running."""

    def count(client: str) -> int:
        found = 0
        for event in _events(demo):
            request = getattr(event, "request", None)
            if request is not None and client_address(request.scope, trust_forwarded) == client:
                found += 1
        return found

    return count


def waiting_elsewhere(demo, trust_forwarded: bool, concurrency_id: str = "model"):
    """``waiting(address)``: whether a job of another address waits in gradio's queue for a ``concurrency_id``
    handler (vit.serve.queue.FairQueue.crowded)."""

    def waiting(address: str) -> bool:
        line = demo._queue.event_queue_per_concurrency_id.get(concurrency_id)
        for event in list(line.queue) if line is not None else ():
            request = getattr(event, "request", None)
            if request is not None and client_address(request.scope, trust_forwarded) != address:
                return True
        return False

    return waiting


def pending(demo):
    """``pending(session_hash)``: whether gradio's queue holds messages for that session; gradio 6.31 raises a
    404 inside any other's stream, which uvicorn logs as a traceback (vit.serve.limits answers 404 first)."""

    def has(session_hash: str) -> bool:
        return session_hash in demo._queue.pending_messages_per_session

    return has


def watch(demo, streams: Streams, trust_forwarded: bool = False) -> None:
    """The launched ``demo``'s event streams are noted in ``streams`` (:class:`vit.serve.limits.RequestLimits`);
    its clients are counted by ``X-Forwarded-For`` where ``trust_forwarded``."""
    _WATCHED[demo] = streams
    _TRUSTED[demo] = trust_forwarded


@dataclass(frozen=True)
class Reader:
    """The client of one queued job, as its handler sees it: is anyone reading the job's event stream?"""

    event: object | None = None  # gradio's queueing.Event; None: not a queued job (then always there)
    streams: Streams | None = None  # None: the server does not note streams (then only gradio's word counts)
    trust_forwarded: bool = False  # the client's address from X-Forwarded-For (behind a trusted proxy)

    def client(self) -> str | None:
        """The job's client address (as the per-client limits count it); None outside a queued job."""
        request = getattr(self.event, "request", None)
        scope = getattr(request, "scope", None)
        return None if scope is None else client_address(scope, self.trust_forwarded)

    def there(self) -> bool:
        """Whether the job is still wanted: gradio kept it and its stream was open in the last :data:`UNREAD_S`."""
        if self.event is None:
            return True
        if not getattr(self.event, "alive", True):
            return False
        return self.streams is None or self.streams.unread_s(self.event.enqueue_time, *self._keys()) <= UNREAD_S

    def arrives(self, poll_s: float = POLL_S) -> bool:
        """Wait until the job's stream is open (a page opens it as it joins): True, or False once not :meth:`there`."""
        while self.there():
            if self.streams is None or self.event is None or self.streams.is_open(*self._keys()):
                return True
            time.sleep(poll_s)
        return False

    def _keys(self) -> tuple[str, str]:
        return self.event.session_hash, self.event._id


def reader() -> Reader:
    """The :class:`Reader` of the job whose handler runs in this thread (gradio's context says which)."""
    blocks, event_id = context.LocalContext.blocks.get(None), context.LocalContext.event_id.get(None)
    if blocks is None or event_id is None:
        return Reader()
    streams = _WATCHED.get(blocks)
    jobs = list(blocks._queue.active_jobs)
    event = next((e for job in jobs if job for e in job if getattr(e, "_id", None) == event_id), None)
    return Reader(event, streams if event is not None else None, _TRUSTED.get(blocks, False))


async def reap_unread(demo, streams: Streams, every_s: float = 1.0) -> None:
    """Forever, on the server's event loop: drop waiting jobs whose event stream has not been open for
    :data:`UNREAD_S` seconds since they joined (a flood that joins and never listens would run for nobody)."""
    queue = demo._queue
    while not queue.stopped:
        await asyncio.sleep(every_s)
        for event in _events(demo, queued_only=True):
            if streams.unread_s(event.enqueue_time, event.session_hash, event._id) > UNREAD_S:
                await queue.clean_events(event_id=event._id)
                _forget_pending(queue, streams, event)
                log.info("dropped a queued job whose client is not reading its stream")


def _forget_pending(queue, streams: Streams, event) -> None:
    """gradio's per-session bookkeeping of a dropped job, which ``clean_events`` by id leaves (a leak per minted
    session), unless the session still has jobs or an open stream."""
    ids = queue.pending_event_ids_session.get(event.session_hash)
    if ids is not None:
        ids.discard(event._id)
        if not ids and event.session_hash not in streams:
            queue.pending_event_ids_session.pop(event.session_hash, None)
            queue.pending_messages_per_session.pop(event.session_hash, None)
