"""Every use of gradio's private objects, in this one module, checked when the server starts (issue 38).

gradio (tested: 6.28 to 6.31, requirements.txt) offers no public way to do what these protections of a server shared
by a class need (issue 26's review); each is worth keeping, so each stays, here and only here:

* lean sessions: :class:`LeanStateHolder`, whose sessions keep no copy of every component's config (gradio makes one
  per session, ~0.5 MB, for deep links, which the app does not serve): :func:`install`, :func:`forget`;
* each client's jobs in gradio's queue, for the per-address job limit (:func:`jobs_of`), and whether another address's
  job waits for a ``model`` handler, for an address's share of them (:func:`waiting_elsewhere`);
* whether gradio's queue holds messages for a session, so that an event stream with nothing to read is a plain 404
  before gradio starts it (:func:`pending`);
* whether anyone reads a job's event stream: a run nobody reads is not started and stops once its client has gone
  (:func:`watch`, :func:`reader`), and waiting jobs nobody reads leave the queue (:func:`reap_unread`);
* gradio's own refusals of a payload as one log line and one sentence, not a traceback (:func:`refuse_quietly`);
* the page's language switch calls the ``changeLocale`` export of gradio's page bundle (:data:`LOCALE_JS`, which
  vit/ui/layout.py puts into the page's script).

:func:`check` runs before the server starts (app.launch) and after: where gradio lacks any of these, the app refuses to
start with one sentence naming it (tests/test_gradio_internals.py takes each away). Nothing falls back silently.
"""

from __future__ import annotations

import asyncio
import datetime
import errno
import inspect
import logging
import time
import weakref
from copy import copy
from dataclasses import dataclass
from pathlib import Path

import gradio
from gradio import context, queueing, state_holder
from gradio.components import State
from gradio.exceptions import Error, InvalidPathError
from pydantic import ValidationError

from vit import i18n
from vit.serve.files import UPLOAD_AGAIN
from vit.serve.limits import Streams, client_address

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
    ("each client's jobs", "Queue.event_queue_per_concurrency_id, .active_jobs, .clean_events", lambda: [
        _in_init(queueing.Queue, "event_queue_per_concurrency_id", "active_jobs", "pending_event_ids_session",
                 "pending_messages_per_session", "stopped"), queueing.Queue.clean_events]),
    ("each client's jobs", "Event.request, .session_hash, ._id, .alive, .enqueue_time", lambda: [
        _in_init(queueing.Event, "request", "session_hash", "_id", "alive", "enqueue_time")]),
    ("quiet refusals", "Blocks.preprocess_data", lambda: [gradio.Blocks.preprocess_data, InvalidPathError]),
    ("the language switch", "changeLocale in gradio's page bundle", lambda: [_page_exports("changeLocale")]),
)
LAUNCHED = (  # on the running server
    ("lean sessions", "server_app.state_holder (a StateHolder with session_data, time_last_used, lock)",
     lambda demo: [demo.server_app.state_holder.session_data, demo.server_app.state_holder.time_last_used,
                   demo.server_app.state_holder.lock]),
    ("each client's jobs", "Blocks._queue", lambda demo: [demo._queue.event_queue_per_concurrency_id]),
)


def _in_init(cls, *names: str) -> bool:
    """Whether ``cls.__init__`` sets every attribute of ``names`` (instance attributes exist only on instances)."""
    source = inspect.getsource(cls.__init__)
    missing = [n for n in names if f"self.{n}" not in source]
    if missing:
        raise AttributeError(f"{cls.__name__} sets no {', '.join(missing)}")
    return True


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
    """Everything this module uses is there (and, given a launched ``demo``, on its server).

    Raises:
        GradioInternalsMissing: one sentence naming what is missing and what it is for.
    """
    for what, name, reach in (*NEEDED, *(((w, n, lambda r=r: r(demo)) for w, n, r in LAUNCHED) if demo else ())):
        try:
            reach()
        except (AttributeError, TypeError, OSError) as exc:
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
    """gradio's own refusals of a payload, before any handler runs, as one log line each.

    gradio 6.31 prints a full traceback for every payload its ``preprocess_data`` refuses (a ``FileData``
    naming a path it did not upload or one too long to look up, a bare string for an image): the review's
    7,392 crafted requests wrote 9.4 MB of log. Here that refusal is logged in one line (the reason cut to
    :data:`LOGGED_CHARS`) and its sender gets one sentence, the same for every path (no oracle). Anything
    else preprocessing raises (a full disk, gradio's own bug) keeps its traceback.
    """
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
    """``waiting(address)``: whether a job of another address waits in gradio's queue for a handler of
    ``concurrency_id`` (vit.serve.queue.FairQueue.crowded: an address over its share then gives handlers back)."""

    def waiting(address: str) -> bool:
        line = demo._queue.event_queue_per_concurrency_id.get(concurrency_id)
        for event in list(line.queue) if line is not None else ():
            request = getattr(event, "request", None)
            if request is not None and client_address(request.scope, trust_forwarded) != address:
                return True
        return False

    return waiting


def pending(demo):
    """``pending(session_hash)``: whether gradio's queue holds messages for that session (it has joined, and its
    stream has not been dropped). gradio 6.31 starts a ``queue/data`` stream for any session and raises its 404 inside
    it, which uvicorn logs as a traceback (vit.serve.limits answers 404 first)."""

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
        """Whether the job is still wanted: gradio has not dropped it (its stream closed) and its stream has
        been open at some time in the last :data:`UNREAD_S` seconds since it joined."""
        if self.event is None:
            return True
        if not getattr(self.event, "alive", True):
            return False
        return self.streams is None or self.streams.unread_s(self.event.enqueue_time, *self._keys()) <= UNREAD_S

    def arrives(self, poll_s: float = POLL_S) -> bool:
        """Wait until the job's stream is open: True then, False once the client is no longer :meth:`there`.

        A page and gradio_client open the stream as they join (they wait here a few ms at most); a job that
        nobody reads never gets further.
        """
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
    :data:`UNREAD_S` seconds since they joined (never opened, or closed: their client has gone).

    A page and gradio_client open the stream as they join; a job nobody will read (a flood that joins
    and never listens) would otherwise wait for a handler and run for nobody. gradio drops the jobs of
    a stream it sees close; a job already with its handler stops there (:meth:`Reader.there`).
    """
    queue = demo._queue
    while not queue.stopped:
        await asyncio.sleep(every_s)
        for event in _events(demo, queued_only=True):
            if streams.unread_s(event.enqueue_time, event.session_hash, event._id) > UNREAD_S:
                await queue.clean_events(event_id=event._id)
                _forget_pending(queue, streams, event)
                log.info("dropped a queued job whose client is not reading its stream")


def _forget_pending(queue, streams: Streams, event) -> None:
    """gradio's per-session bookkeeping of a dropped job (``clean_events`` by id leaves it: a leak per minted
    session), unless the session still has jobs or an open stream."""
    ids = queue.pending_event_ids_session.get(event.session_hash)
    if ids is not None:
        ids.discard(event._id)
        if not ids and event.session_hash not in streams:
            queue.pending_event_ids_session.pop(event.session_hash, None)
            queue.pending_messages_per_session.pop(event.session_hash, None)
