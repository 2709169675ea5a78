"""gradio's side of the server's limits (issue 26): lean session state, evictions, each client's jobs.

* :class:`LeanStateHolder`: gradio's ``StateHolder`` whose sessions keep no copy of every component's
  config (gradio 6.31 makes one per session, ~0.5 MB here, for deep links, which the app does not
  serve): a session holds gradio's values of its own ``gr.State``\\ s and the components its events updated.
* :func:`install`: put it in place of gradio's after ``launch``; :func:`forget` drops an evicted session.
* :func:`jobs_of`: how many jobs of a client are queued or running in gradio's queue.
* :func:`reap_unread`: jobs whose client never opened their event stream leave gradio's queue.

Everything here reads gradio internals (6.x); where they have moved it does nothing, and gradio's own
bounds (its capacity, its queue's size) still hold.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
from copy import copy

from gradio.components import State
from gradio.state_holder import SessionState, StateHolder

from vit.serve.limits import Streams, client_address

log = logging.getLogger("vit.app")

UNREAD_S = 10.0  # a queued job whose stream nobody opened for this long is dropped (a page opens it at once)


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


async def reap_unread(demo, streams: Streams, every_s: float = 1.0, unread_s: float = UNREAD_S) -> None:
    """Forever, on the server's event loop: drop waiting jobs whose event stream was never opened.

    A page and gradio_client open the stream as they join; a job nobody will read (a flood that joins
    and never listens) would otherwise run for nobody. gradio itself drops a job whose stream closed.
    """
    queue = getattr(demo, "_queue", None)
    while queue is not None and not getattr(queue, "stopped", True):
        await asyncio.sleep(every_s)
        now = time.monotonic()
        for event in _events(demo, queued_only=True):
            if now - event.enqueue_time > unread_s and not streams.seen(event.session_hash, event._id):
                await queue.clean_events(event_id=event._id)
                log.info("dropped a queued job whose client never opened its stream")
