"""One model run at a time for the whole server, fairly: at most one waiting run per browser session
(a newer request replaces it) and none while the session's own run is going, and cheap runs served
before a line of expensive ones (shortest expected finish first)."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

from vit.errors import InputError


class Busy(InputError):
    """The session already has a model run going."""


class Replaced(InputError):
    """A newer request from the same session took this waiting request's place."""


BUSY = ("Your previous analysis is still running: this one was not started. "
        "Wait for the pictures, then change the setting again.")
REPLACED = "Replaced by a newer request from the same tab."
RETRY_S = 0.05  # how often take_turn looks again while the session's previous run is finishing


@dataclass(eq=False)
class _Ticket:
    session: str
    key: tuple[float, int]  # (expected finish, arrival order): the smallest goes first
    replaced: bool = False
    running: bool = False


@dataclass
class FairQueue:
    """Who runs the model next, among the requests of every session.

    ``with queue.turn(session, seconds):`` blocks until it is this request's turn.
    A session has at most one run going and at most one waiting: a request that
    finds its session's run going is refused (:class:`Busy`); one that finds an
    earlier request of its session waiting takes that one's place (the earlier one
    raises :class:`Replaced`). Waiting requests are served by expected finish,
    arrival time + estimated seconds, so a 0.5 s request overtakes a line of 12 s
    ones that arrived less than 12 s before it, and an expensive request still gets
    its turn once it has waited as long as it will take.
    """

    slots: int = 1
    _waiting: list[_Ticket] = field(default_factory=list)
    _running: list[_Ticket] = field(default_factory=list)
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _order: Iterator[int] = field(default_factory=itertools.count)

    @contextmanager
    def turn(self, session: str, seconds: float):
        ticket = self._enter(session, seconds)
        try:
            with self._cond:
                while not self._my_turn(ticket):
                    if ticket.replaced:
                        raise Replaced(REPLACED)
                    self._cond.wait()
                self._waiting.remove(ticket)
                ticket.running = True
                self._running.append(ticket)
            yield
        finally:
            with self._cond:
                for line in (self._waiting, self._running):
                    if ticket in line:
                        line.remove(ticket)
                self._cond.notify_all()

    def _enter(self, session: str, seconds: float) -> _Ticket:
        with self._cond:
            if any(t.session == session for t in self._running):
                raise Busy(BUSY)
            for old in [t for t in self._waiting if t.session == session]:
                old.replaced = True
                self._waiting.remove(old)
            ticket = _Ticket(session, (time.monotonic() + max(0.0, seconds), next(self._order)))
            self._waiting.append(ticket)
            self._cond.notify_all()
            return ticket

    def _my_turn(self, ticket: _Ticket) -> bool:
        return (not ticket.replaced and len(self._running) < self.slots
                and ticket is min(self._waiting, key=lambda t: t.key))

    @property
    def waiting(self) -> int:
        with self._cond:
            return len(self._waiting)


@contextmanager
def take_turn(queue: FairQueue, session: str, seconds: float, give_up: Callable[[], bool]):
    """``with take_turn(...):`` the model's turn in ``queue``, waiting while the session's previous run finishes.

    ``queue.turn`` refuses a session whose own run is going (:class:`Busy`): a page request then looks
    again every :data:`RETRY_S` until that run is done, unless ``give_up()`` says to stop waiting, and
    then the :class:`Busy` is raised. A request replaced meanwhile raises :class:`Replaced`, as in ``turn``.
    """
    with ExitStack() as stack:
        while True:
            try:
                stack.enter_context(queue.turn(session, seconds))
                break
            except Busy:
                if give_up():
                    raise
                time.sleep(RETRY_S)
        yield
