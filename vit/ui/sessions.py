"""gradio's side of the server's limits (issue 26): lean session state, evictions, each client's jobs.

* :class:`LeanStateHolder`: gradio's ``StateHolder`` whose sessions keep no copy of every component's
  config (gradio 6.31 makes one per session, ~0.5 MB here, for deep links, which the app does not
  serve): a session holds gradio's values of its own ``gr.State``\\ s and the components its events updated.
* :func:`install`: put it in place of gradio's after ``launch``; :func:`forget` drops an evicted session.
* :func:`jobs_of`: how many jobs of a client are queued or running in gradio's queue.
* :func:`watch` and :func:`reader`: whether the client of the job being handled reads its event stream
  (a run nobody reads is not started, and stops once its client has gone).
* :func:`refuse_quietly`: a payload gradio itself refuses (a path it did not upload, a value of the wrong
  shape) is one line in the log and one sentence to its sender, not a traceback per request.
* :func:`reap_unread`: waiting jobs whose client never opened their event stream, or closed it, leave
  gradio's queue.

Everything here reads gradio internals (6.x); where they have moved it does nothing, and gradio's own
bounds (its capacity, its queue's size) still hold.
"""

from __future__ import annotations

import asyncio
import datetime
import errno
import logging
import time
import weakref
from copy import copy
from dataclasses import dataclass

from gradio.components import State
from gradio.context import LocalContext
from gradio.exceptions import Error, InvalidPathError
from gradio.state_holder import SessionState, StateHolder
from pydantic import ValidationError

from vit.serve.files import UPLOAD_AGAIN
from vit.serve.limits import Streams, client_address

log = logging.getLogger("vit.app")

UNREAD_S = 10.0  # a job whose stream has not been open for this long since it joined is dropped (a page opens
# it at once; read at each use, so a test may shorten it)
POLL_S = 0.05  # how often a job waiting for its client to open its stream looks again

_WATCHED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # a launched demo -> its Streams
_TRUSTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # a launched demo -> trust X-Forwarded-For


class LeanSessionState(SessionState):
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


class LeanStateHolder(StateHolder):
    """gradio's sessions, each a :class:`LeanSessionState`."""

    def __getitem__(self, session_id: str) -> SessionState:
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


def install(demo, capacity: int) -> bool:
    """Replace the launched server's ``StateHolder`` by a :class:`LeanStateHolder` of ``capacity``."""
    app = getattr(demo, "server_app", None)
    old = getattr(app, "state_holder", None)
    if not isinstance(old, StateHolder) or not hasattr(old, "session_data"):
        log.warning("gradio's session state has moved: sessions keep gradio's own (larger) state")
        return False
    holder = LeanStateHolder()
    holder.session_data.update(old.session_data)  # any session opened while the server started
    holder.set_blocks(demo)
    holder.capacity = capacity
    app.state_holder = holder
    return True


def forget(demo, session_hash: str) -> None:
    """What gradio keeps for an evicted session goes (the app's own Session: :func:`vit.ui.state.end_session`)."""
    holder = getattr(demo, "state_holder", None)
    if isinstance(holder, LeanStateHolder):
        holder.forget(session_hash)


MISFIT = "This request's values do not fit the event it names."
# what a path a client named can make gradio's checks raise (a 20,000-character name: ENAMETOOLONG)
PATH_ERRORS = (errno.ENAMETOOLONG, errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EACCES, errno.EPERM, errno.EINVAL)
LOGGED_CHARS = 200  # of a refused payload's reason in the log (a 10 MB path is not logged whole)


def refuse_quietly(demo) -> bool:
    """gradio's own refusals of a payload, before any handler runs, as one log line each.

    gradio 6.31 prints a full traceback for every payload its ``preprocess_data`` refuses (a ``FileData``
    naming a path it did not upload or one too long to look up, a bare string for an image): the review's
    7,392 crafted requests wrote 9.4 MB of log. Here that refusal is logged in one line (the reason cut to
    :data:`LOGGED_CHARS`) and its sender gets one sentence, the same for every path (no oracle). Anything
    else preprocessing raises (a full disk, gradio's own bug) keeps its traceback.
    """
    original = getattr(demo, "preprocess_data", None)
    if original is None:
        log.warning("gradio's preprocess_data has moved: refused payloads keep gradio's tracebacks")
        return False

    async def preprocess_data(block_fn, inputs, state, *args, **kwargs):
        try:
            return await original(block_fn, inputs, state, *args, **kwargs)
        except (InvalidPathError, ValidationError, ValueError, TypeError, KeyError, OSError) as exc:
            if isinstance(exc, OSError) and exc.errno not in PATH_ERRORS:
                raise  # a full disk, say: the operator's to see in full
            reason = " ".join(str(exc).split())
            log.info("%s refused by gradio: %s: %s", getattr(block_fn, "api_name", None) or "an event",
                     type(exc).__name__, ascii(reason[:LOGGED_CHARS]) + ("..." if len(reason) > LOGGED_CHARS else ""))
            sentence = UPLOAD_AGAIN if isinstance(exc, (InvalidPathError, OSError)) else MISFIT
            raise Error(sentence, title="Please check", print_exception=False) from None

    demo.preprocess_data = preprocess_data
    return True


def _events(demo, queued_only: bool = False) -> list:
    queue = getattr(demo, "_queue", None)
    try:
        events = [e for q in queue.event_queue_per_concurrency_id.values() for e in list(q.queue)]
        if not queued_only:
            events += [e for job in list(queue.active_jobs) if job for e in job]
        return events
    except (AttributeError, TypeError):
        return []


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
    blocks, event_id = LocalContext.blocks.get(None), LocalContext.event_id.get(None)
    if blocks is None or event_id is None:
        return Reader()
    streams = _WATCHED.get(blocks)
    try:
        jobs = list(blocks._queue.active_jobs)
    except (AttributeError, TypeError):
        return Reader()
    event = next((e for job in jobs if job for e in job if getattr(e, "_id", None) == event_id), None)
    return Reader(event, streams if event is not None else None, _TRUSTED.get(blocks, False))


async def reap_unread(demo, streams: Streams, every_s: float = 1.0) -> None:
    """Forever, on the server's event loop: drop waiting jobs whose event stream has not been open for
    :data:`UNREAD_S` seconds since they joined (never opened, or closed: their client has gone).

    A page and gradio_client open the stream as they join; a job nobody will read (a flood that joins
    and never listens) would otherwise wait for a handler and run for nobody. gradio drops the jobs of
    a stream it sees close; a job already with its handler stops there (:meth:`Reader.there`).
    """
    queue = getattr(demo, "_queue", None)
    while queue is not None and not getattr(queue, "stopped", True):
        await asyncio.sleep(every_s)
        for event in _events(demo, queued_only=True):
            if streams.unread_s(event.enqueue_time, event.session_hash, event._id) > UNREAD_S:
                await queue.clean_events(event_id=event._id)
                _forget_pending(queue, streams, event)
                log.info("dropped a queued job whose client is not reading its stream")


def _forget_pending(queue, streams: Streams, event) -> None:
    """gradio's per-session bookkeeping of a dropped job (``clean_events`` by id leaves it: a leak per minted
    session), unless the session still has jobs or an open stream."""
    try:
        ids = queue.pending_event_ids_session.get(event.session_hash)
        if ids is not None:
            ids.discard(event._id)
            if not ids and event.session_hash not in streams:
                queue.pending_event_ids_session.pop(event.session_hash, None)
                queue.pending_messages_per_session.pop(event.session_hash, None)
    except (AttributeError, TypeError, KeyError):
        pass
