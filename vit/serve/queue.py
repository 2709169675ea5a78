"""One model run at a time for the whole server: turns between addresses, then between the pages of an address.
The rules, why, and the figures: docs/reliability.md, "Turns by address".
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

from vit.errors import InputError
from vit.serve.files import OWNER


class Busy(InputError):
    """The session already has a model run going."""


class Replaced(InputError):
    """A newer request from the same session took this waiting request's place."""


class Crowded(InputError):
    """The request's address holds more than its share of the model's handlers while another address waits for one."""


class Withdrawn(Exception):  # noqa: N818 - a state, as Busy and Replaced are
    """The request was no longer wanted while it waited (its page is gone, or it sent a newer one)."""


BUSY, REPLACED, CROWDED = "refusal-busy", "refusal-replaced", "refusal-address-share"  # keys of vit.i18n.refusals
RETRY_S = 0.05  # how often take_turn looks again while the session's previous run is finishing
REPORT_S = 1.0  # how often a waiting request's place and estimate are reported again
MAX_PAUSED = 2  # runs paused at once: each keeps its partial trace in memory while a quicker one runs
ADDRESSES = 4096  # addresses whose last turn is remembered (a forgotten one ranks as new: first)

Report = Callable[[int, float], None]  # report(place in line, 1 = next; seconds until its turn, estimated)


@dataclass(eq=False)
class _Ticket:
    session: str
    address: str  # the client's address as the server's limits read it ("": unknown; all such share one)
    key: tuple[float, int]  # (expected finish, arrival order): the smallest goes first
    seconds: float  # the estimated run time
    resource: Hashable | None  # what its run holds while paused (a setting: one LoadedModel); None: anything
    replaced: bool = False
    paused: bool = False  # gave its slot away at a layer boundary; back in line, its place (key) kept
    held_s: float = 0.0  # seconds it held a slot before its last pause
    since: float | None = None  # when it last took a slot (None while in line)

    def left_s(self, now: float) -> float:
        """Its estimated seconds still to run."""
        held = self.held_s + (now - self.since if self.since is not None else 0.0)
        return max(0.0, self.seconds - held)


@dataclass(frozen=True)
class Turn:
    """A request's hold on the model, from :meth:`FairQueue.turn`."""

    queue: FairQueue
    ticket: _Ticket

    def give_way(self, wanted: Callable[[], bool] | None = None, report: Report | None = None) -> bool:
        """At a layer boundary: pause for a waiting request ranked first, keeping its place; whether it paused. It
        gives way only to another ``resource``: a paused run keeps the tracer's hooks and the model's lock."""
        return self.queue._give_way(self.ticket, wanted, report)


@dataclass
class FairQueue:
    """Who runs the model next: ``with queue.turn(session, seconds) as turn:`` blocks until it is this request's turn.
    The address served least recently goes first; within an address the earliest expected finish. A session is
    :class:`Busy` while its run goes; a newer request :class:`Replaced` its waiting one; an address over ``share``
    while another waits has its last-ranked request refused (:class:`Crowded`)."""

    slots: int = 1
    max_paused: int = MAX_PAUSED
    share: int = 0  # requests one address may hold here while another waits for a handler; 0: no limit
    refusal: str = CROWDED  # the key of Crowded's sentence (vit.i18n.refusals): what was not started
    crowded: Callable[[str], bool] | None = None  # crowded(address): another address waits for a handler
    pauses: int = 0  # how many times a run gave way (the log and the tests read it)
    clock: Callable[[], float] = time.monotonic  # seconds (tests give their own)
    _waiting: list[_Ticket] = field(default_factory=list)  # in line, paused runs among them
    _running: list[_Ticket] = field(default_factory=list)
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _order: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _served: OrderedDict = field(default_factory=OrderedDict)  # address -> order number of its latest turn
    _retrying: Counter = field(default_factory=Counter)  # address -> its requests waiting for their page's run

    @contextmanager
    def turn(self, session: str, seconds: float, resource: Hashable | None = None,
             wanted: Callable[[], bool] | None = None, report: Report | None = None, address: str | None = None):
        """The model's turn; ``resource``: what a paused run of it holds; ``wanted()`` turning False raises
        :class:`Withdrawn`; ``address``: by default the handler's (vit.serve.files.OWNER)."""
        with self._turn(session, seconds, resource, wanted, report, address) as turn:
            yield turn

    @contextmanager
    def retrying(self, address: str):
        """A handler of ``address`` waits for its page's previous run (:func:`take_turn`): counted in its share."""
        with self._cond:
            self._retrying[address] += 1
        try:
            yield
        finally:
            with self._cond:
                self._retrying[address] -= 1
                if not self._retrying[address]:
                    del self._retrying[address]

    def over_share(self, address: str) -> bool:
        """Whether ``address`` holds more than its share of handlers (its requests in line, running, paused or
        retrying) while another address waits for one."""
        with self._cond:
            if not self.share or self.crowded is None:
                return False
            held = sum(t.address == address and not t.replaced for t in (*self._waiting, *self._running))
            return held + self._retrying[address] > self.share and self.crowded(address)

    @contextmanager
    def _turn(self, session: str, seconds: float, resource: Hashable | None, wanted, report, address: str | None):
        """:meth:`turn`, as :func:`take_turn` enters it."""
        address = OWNER.get()[1] if address is None else address
        ticket = self._enter(session, seconds, resource, address)
        try:
            with self._cond:
                self._wait_for_turn(ticket, wanted, report)
            yield Turn(self, ticket)
        finally:
            with self._cond:
                for line in (self._waiting, self._running):
                    if ticket in line:
                        line.remove(ticket)
                self._cond.notify_all()

    def _enter(self, session: str, seconds: float, resource: Hashable | None, address: str = "") -> _Ticket:
        with self._cond:
            if any(t.session == session for t in self._running) or any(
                    t.session == session and t.paused for t in self._waiting):
                self._cond.notify_all()  # its paused run, if no longer wanted, hears it now
                raise Busy(key=BUSY)
            for old in [t for t in self._waiting if t.session == session]:
                old.replaced = True
                self._waiting.remove(old)
            seconds = max(0.0, seconds)
            ticket = _Ticket(session, address, (self.clock() + seconds, next(self._order)), seconds, resource)
            self._waiting.append(ticket)
            self._cond.notify_all()
            return ticket

    def _wait_for_turn(self, ticket: _Ticket, wanted: Callable[[], bool] | None, report: Report | None) -> None:
        """Under the lock: wait in line until ``ticket`` may take a slot, then take it."""
        said = None
        while not self._my_turn(ticket):
            if ticket.replaced:
                raise Replaced(key=REPLACED)
            if wanted is not None and not wanted():
                raise Withdrawn
            if not ticket.paused and self._last_of_crowded(ticket):
                self._waiting.remove(ticket)
                self._cond.notify_all()
                raise Crowded(key=self.refusal)
            if report is not None:
                place, seconds = self._place(ticket)
                if (place, round(seconds)) != said:
                    said = (place, round(seconds))
                    report(place, seconds)
            self._cond.wait(REPORT_S if report is not None or wanted is not None or self.crowded is not None else None)
        self._waiting.remove(ticket)
        ticket.paused, ticket.since = False, self.clock()
        self._running.append(ticket)
        self._served[ticket.address] = next(self._order)  # its address's latest turn: the others' go first now
        self._served.move_to_end(ticket.address)
        while len(self._served) > ADDRESSES:
            self._served.popitem(last=False)
        self._cond.notify_all()  # the others' places changed

    def _held(self) -> set:
        """What the paused runs hold."""
        return {t.resource for t in self._waiting if t.paused}

    def _runnable(self, ticket: _Ticket, held: set) -> bool:
        """A paused run may resume; another may run unless it may touch what a paused run holds."""
        if ticket.paused:
            return True
        return not ticket.replaced and (not held or (ticket.resource is not None and ticket.resource not in held))

    def _rank(self, ticket: _Ticket) -> tuple:
        """Who goes first (the smallest): the address served least recently, then the earliest expected finish."""
        return self._served.get(ticket.address, 0), ticket.key

    def _last_of_crowded(self, ticket: _Ticket) -> bool:
        """Whether ``ticket`` is its address's last-ranked request in line while over its share."""
        if not self.over_share(ticket.address):
            return False
        mine = [t for t in self._waiting if t.address == ticket.address and not t.paused and not t.replaced]
        return ticket is max(mine, key=self._rank, default=None)

    def _my_turn(self, ticket: _Ticket) -> bool:
        if ticket.replaced or len(self._running) >= self.slots:
            return False
        held = self._held()
        return ticket is min((t for t in self._waiting if self._runnable(t, held)), key=self._rank, default=None)

    def _overtakes(self, waiting: _Ticket, running: _Ticket) -> bool:
        """Whether ``running`` gives way to ``waiting`` at its next layer boundary: ``waiting`` ranks first and, of
        another address, that address has no run paused already (its line does not pause others' runs in turn)."""
        if running.resource is None or waiting.paused or self._rank(waiting) >= self._rank(running):
            return False
        if waiting.address != running.address and any(
                t.paused and t.address == waiting.address for t in self._waiting):
            return False
        held = self._held()
        return len(held) < self.max_paused and self._runnable(waiting, held | {running.resource})

    def _give_way(self, ticket: _Ticket, wanted: Callable[[], bool] | None, report: Report | None) -> bool:
        with self._cond:
            if ticket not in self._running or not any(self._overtakes(t, ticket) for t in self._waiting):
                return False
            self._running.remove(ticket)
            ticket.held_s += self.clock() - ticket.since
            ticket.paused, ticket.since = True, None
            self._waiting.append(ticket)
            self.pauses += 1
            self._cond.notify_all()
            self._wait_for_turn(ticket, wanted, report)
            return True

    def _place(self, ticket: _Ticket) -> tuple[int, float]:
        """(place in line, 1 = next; estimated seconds until its turn) of a ticket in line."""
        now = self.clock()
        mine = self._rank(ticket)
        ahead = [t for t in self._waiting if t is not ticket and not t.replaced and self._rank(t) < mine]
        seconds = sum(t.left_s(now) for t in ahead)
        seconds += sum(t.left_s(now) for t in self._running if not self._overtakes(ticket, t))
        return 1 + len(ahead), seconds

    def wake(self) -> None:
        """Have every waiting request look again (a session ended: its requests leave the line)."""
        with self._cond:
            self._cond.notify_all()

    @property
    def waiting(self) -> int:
        """Requests in line, paused runs not counted."""
        with self._cond:
            return sum(not t.paused for t in self._waiting)

    @property
    def paused(self) -> int:
        with self._cond:
            return sum(t.paused for t in self._waiting)

    def running(self) -> list[str]:
        """The sessions whose runs hold a slot now."""
        with self._cond:
            return [t.session for t in self._running]


@contextmanager
def take_turn(queue: FairQueue, session: str, seconds: float, give_up: Callable[[], bool],
              resource: Hashable | None = None, wanted: Callable[[], bool] | None = None,
              report: Report | None = None, address: str | None = None):
    """``queue.turn``, waiting (every :data:`RETRY_S`) while the session's own last run finishes, until ``give_up()``;
    while it waits it counts in its address's share."""
    address = OWNER.get()[1] if address is None else address
    with ExitStack() as stack:
        while True:
            try:
                turn = stack.enter_context(queue._turn(session, seconds, resource, wanted, report, address))
                break
            except Busy:
                if give_up():
                    raise
                with queue.retrying(address):
                    if queue.over_share(address):
                        raise Crowded(key=queue.refusal) from None
                    time.sleep(RETRY_S)
        yield turn
