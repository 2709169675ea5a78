"""Which browser sessions a server remembers, and for whom: bounded per client and in all. One client minting
sessions evicts only its own, and never an open page. The ledger only decides; its owner forgets what it evicts.
"""

from __future__ import annotations

import itertools
import math
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

MAX_SESSIONS = 2000  # sessions remembered in all (gradio's state_session_capacity and the app's Sessions)
PER_CLIENT = 64  # sessions one address keeps: a browser has one per open tab; a class behind one NAT needs more
IDLE_S = 3600.0  # a session unused for an hour is forgotten (the page's analysis key lives as long)
MAX_HASH_CHARS = 64  # gradio's page makes ~11 characters, gradio_client a 36-character uuid4
HASH = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_HASH_CHARS}}}")

SESSIONS_ENV, PER_CLIENT_ENV = "VIT_MAX_SESSIONS", "VIT_SESSIONS_PER_CLIENT"


def valid_hash(value: object) -> bool:
    """Whether ``value`` could be a session hash gradio or its client made (short, URL-safe)."""
    return isinstance(value, str) and HASH.fullmatch(value) is not None


def positive_int(environ: Mapping[str, str], name: str, default: int) -> int:
    """A whole number >= 1 from ``environ[name]``, ``default`` when unset; ValueError (one sentence) otherwise."""
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        number = float(raw)
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number >= 1 and number == int(number)):
        raise ValueError(f"{name} must be a whole number of at least 1, got {raw!r}")
    return int(number)


def positive_number(environ: Mapping[str, str], name: str, default: float, unit: str) -> float:
    """A finite number > 0 of ``unit`` from ``environ[name]``, ``default`` when unset; ValueError otherwise."""
    raw = environ.get(name, "").strip()
    try:
        number = float(raw) if raw else float(default)
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number > 0):
        raise ValueError(f"{name} must be a number of {unit} greater than 0, got {raw!r}")
    return number


@dataclass
class _Entry:
    client: str
    last: float


class SessionLedger:
    """Sessions by last use, each with its client; :meth:`seen` returns the sessions to forget. A ``live(session)``
    one (its page open) is never forgotten for ``per_client`` or idleness, for ``max_sessions`` only last."""

    def __init__(self, max_sessions: int = MAX_SESSIONS, per_client: int = PER_CLIENT, idle_s: float = IDLE_S,
                 clock: Callable[[], float] = time.monotonic, live: Callable[[str], bool] = lambda session: False):
        if max_sessions < 1 or per_client < 1:
            raise ValueError(f"the session limits must be at least 1, got {max_sessions} and {per_client}")
        self.max_sessions, self.per_client, self.idle_s, self.clock = max_sessions, per_client, idle_s, clock
        self.live = live
        self._all: OrderedDict[str, _Entry] = OrderedDict()  # least recently seen first
        self._by_client: dict[str, OrderedDict[str, None]] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> SessionLedger:
        """Limits from ``VIT_MAX_SESSIONS`` and ``VIT_SESSIONS_PER_CLIENT``."""
        return cls(positive_int(environ, SESSIONS_ENV, MAX_SESSIONS), positive_int(environ, PER_CLIENT_ENV, PER_CLIENT))

    def __len__(self) -> int:
        with self._lock:
            return len(self._all)

    def __contains__(self, session: str) -> bool:
        with self._lock:
            return session in self._all

    def seen(self, session: str, client: str) -> list[str]:
        """``session`` was used now by ``client``; the sessions to forget (never ``session``): idle past ``idle_s``,
        the client's least recently seen beyond ``per_client``, the server's beyond ``max_sessions``; open ones kept."""
        now = self.clock()
        with self._lock:
            entry = self._all.get(session)
            if entry is None:
                self._all[session] = _Entry(client, now)
                self._by_client.setdefault(client, OrderedDict())[session] = None
            else:  # a session keeps the client that opened it (a phone moving between networks stays one user)
                entry.last = now
                self._all.move_to_end(session)
                self._by_client[entry.client].move_to_end(session)
            idle = itertools.takewhile(lambda item: now - item[1].last > self.idle_s, self._all.items())
            gone = [s for s, _ in idle if not self.live(s)]
            for s in gone:
                self._drop(s)
            mine = self._by_client[self._all[session].client]
            gone += self._drop_oldest(mine, len(mine) - self.per_client, session, live_too=False)
            return gone + self._drop_oldest(self._all, len(self._all) - self.max_sessions, session, live_too=True)

    def _drop_oldest(self, sessions, n: int, keep: str, live_too: bool) -> list[str]:
        """Drop the ``n`` least recently seen of ``sessions`` but ``keep``: those whose page is closed first."""
        if n <= 0:
            return []
        closed, open_ = [], []
        for s in sessions:
            if len(closed) >= n:
                break
            if s != keep:
                (open_ if self.live(s) else closed).append(s)
        oldest = (closed + (open_ if live_too else []))[:n]
        for s in oldest:
            self._drop(s)
        return oldest

    def _drop(self, session: str) -> None:
        entry = self._all.pop(session, None)
        if entry is None:
            return
        mine = self._by_client.get(entry.client)
        if mine is not None:
            mine.pop(session, None)
            if not mine:
                del self._by_client[entry.client]
