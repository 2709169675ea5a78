"""Decodes run at once only while their memory fits a budget (``VIT_DECODE_BUDGET_GB``), in turns between clients,
admitted from the header's cost before any pixel is decoded. Blocking: call from a worker thread."""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from PIL import Image

from vit.errors import InputError
from vit.images import ImageSource, PendingDecode, load_image, read_encoded
from vit.serve.sessions import positive_number

BUDGET_ENV = "VIT_DECODE_BUDGET_GB"
DEFAULT_BUDGET_GB = 1.0
DEFAULT_TIMEOUT_S = 60.0  # a decode takes ~1 s; a minute's wait means the server is flooded
_POLL_S = 0.1  # how often ``give_up`` is asked while waiting


class DecodeTooLarge(InputError):
    """The decode alone would need more than the whole budget."""


class DecodeWaitedTooLong(InputError):
    """The decode waited for memory longer than its timeout, or its request gave up."""


def budget_bytes(environ: Mapping[str, str] = os.environ) -> int:
    """The decode budget in bytes from ``VIT_DECODE_BUDGET_GB`` (1.0 if unset); ValueError if not a positive number."""
    return int(positive_number(environ, BUDGET_ENV, DEFAULT_BUDGET_GB, "gigabytes") * 1e9)


@dataclass(eq=False)
class _Waiter:
    cost: int
    client: str | None
    tag: int  # its turn: one after the client's previous decode, and not before the decode admitted last


class DecodeBudget:
    """A thread-safe admission gate: the decodes running at once hold at most ``max_bytes`` together. Clients take
    turns (round robin), each client's decodes keep their order, and a small one never overtakes: none starves."""

    def __init__(self, max_bytes: int | None = None):
        self.max_bytes = budget_bytes() if max_bytes is None else int(max_bytes)
        if self.max_bytes <= 0:
            raise ValueError(f"the decode budget must be more than 0 bytes, got {self.max_bytes}")
        self._cond = threading.Condition()
        self._line: deque[_Waiter] = deque()
        self._in_use = 0
        self._clock = 0  # the turn of the decode admitted last
        self._last: dict[str | None, int] = {}  # a client -> the turn of its latest decode

    @property
    def in_use(self) -> int:
        """Bytes held by the decodes admitted now."""
        with self._cond:
            return self._in_use

    @property
    def waiting(self) -> int:
        """Decodes waiting for their turn now."""
        with self._cond:
            return len(self._line)

    @contextmanager
    def admit(self, cost_bytes: int, *, timeout: float | None = DEFAULT_TIMEOUT_S,
              give_up: Callable[[], bool] | None = None, client: str | None = None) -> Iterator[None]:
        """Hold ``cost_bytes`` (``DecodeCost.peak_bytes``) of the budget for the block, after waiting for them;
        ``client``: an address (None: one anonymous client); ``give_up()`` stops the wait."""
        cost = max(0, int(cost_bytes))
        if cost > self.max_bytes:
            raise DecodeTooLarge(
                f"this image would take about {cost / 1e9:.2f} GB of memory to decode, more than the "
                f"server's decode budget of {self.max_bytes / 1e9:.2f} GB: send a smaller image"
            )
        self._acquire(cost, client, timeout, give_up)
        try:
            yield
        finally:
            with self._cond:
                self._in_use -= cost
                self._cond.notify_all()

    def _next(self) -> _Waiter:
        """The waiting decode with the smallest turn (``min`` keeps the earliest of equals)."""
        return min(self._line, key=lambda w: w.tag)

    def _acquire(self, cost: int, client: str | None, timeout: float | None,
                 give_up: Callable[[], bool] | None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            me = _Waiter(cost, client, max(self._clock, self._last.get(client, 0)) + 1)
            self._last[client] = me.tag
            self._line.append(me)
            try:
                while not (self._next() is me and self._in_use + cost <= self.max_bytes):
                    self._cond.wait(self._wait_slice(deadline, give_up, timeout))
                self._in_use += cost
                self._clock = max(self._clock, me.tag)
            finally:
                self._line.remove(me)
                if all(w.client != client for w in self._line):
                    self._last.pop(client, None)  # nothing of this client waits: its next decode starts afresh
                self._cond.notify_all()  # the next in line may fit now, or move to the front

    @staticmethod
    def _wait_slice(deadline: float | None, give_up: Callable[[], bool] | None, timeout: float | None) -> float | None:
        """How long to wait before looking again; raises when the wait is over."""
        if give_up is not None and give_up():
            raise DecodeWaitedTooLong("the request was given up while its image waited to be decoded")
        if deadline is None:
            return _POLL_S if give_up is not None else None
        left = deadline - time.monotonic()
        if left <= 0:
            raise DecodeWaitedTooLong(
                f"the server is decoding other images and this one waited {timeout:g} s for memory: "
                "try again in a moment"
            )
        return min(left, _POLL_S) if give_up is not None else left


_DEFAULT: DecodeBudget | None = None
_DEFAULT_LOCK = threading.Lock()


def default_budget() -> DecodeBudget:
    """The process's budget, made on first use from ``VIT_DECODE_BUDGET_GB``."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = DecodeBudget()
        return _DEFAULT


def load_image_bounded(source: ImageSource, budget: DecodeBudget | None = None, *,
                       timeout: float | None = DEFAULT_TIMEOUT_S,
                       give_up: Callable[[], bool] | None = None, client: str | None = None):
    """:func:`vit.images.load_image`, admitted against ``budget`` (the process's if None) after the header's checks
    (a bad file fails before waiting); a PIL image or an array is converted at once."""
    if isinstance(source, (Image.Image, np.ndarray)):
        return load_image(source)
    data, label = read_encoded(source)
    with PendingDecode(data, label) as pending:
        with (budget or default_budget()).admit(pending.cost.peak_bytes, timeout=timeout, give_up=give_up,
                                                client=client):
            return pending.decode()
