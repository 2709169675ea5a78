"""Weights fetched in a thread of their own, for requests to wait on: one download of a model at a time, whose
failure answers every waiting page at once. Why waiting is bounded: docs/reliability.md, "Turns by address".
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from vit.errors import InputError

log = logging.getLogger("vit.prefetch")

Progress = Callable[[int, int], None]  # progress(bytes done, bytes in all: 0 until the server says)
POLL_S = 0.25  # how often a waiting request reports progress and asks whether to step aside
FETCH_SHARE = 4  # of the model's handlers (vit.ui.tabs.parts.MODEL_WAITERS), those that wait on downloads while
# another request waits for a handler
STEP_ASIDE = "refusal-fetch-share"  # vit.i18n.refusals


class Prefetch:
    """One download in a thread of its own: ``fetch(progress)``, by default the checkpoint of the family ``name``;
    ``error`` says why it failed, for a web page ("" otherwise)."""

    def __init__(self, name: str, fetch: Callable[[Progress], None] | None = None):
        self.name, self.fetch = name, fetch
        self.done = 0
        self.total = 0
        self.error = ""
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"prefetch-{name}", daemon=True)

    def start(self) -> Prefetch:
        self._thread.start()
        return self

    @property
    def in_flight(self) -> bool:
        return self._thread.is_alive() and not self._finished.is_set()

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    def wait(self, report: Progress | None = None, poll_s: float = POLL_S,
             stay: Callable[[], None] | None = None) -> bool:
        """Block until the download has ended, meanwhile calling ``report(done, total)`` once bytes come and ``stay()``
        (which raises to stop waiting); whether the weights are now in the cache."""
        if self._thread.ident is None:  # never started: nothing to wait for
            return False
        while not self._finished.wait(poll_s):
            if report is not None and (self.done or self.total):
                report(self.done, self.total)
            if stay is not None:
                stay()
        return not self.error

    def _progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    def _run(self) -> None:
        try:
            if self.fetch is not None:
                self.fetch(self._progress)
            else:
                self._checkpoint()
        except Exception as exc:  # a request will try again and report it
            self.error = f"the download of the {self.name} weights failed ({type(exc).__name__})"
            log.exception("prefetch of %s failed", self.name)
        finally:
            self._finished.set()

    def _checkpoint(self) -> None:
        # imports torch: in this thread, not the caller's
        from vit.model.checkpoints import CHECKPOINTS, fetch_checkpoint  # noqa: PLC0415

        if self.name not in CHECKPOINTS:  # a family that ships its own weights: nothing to download
            return
        path, public, detail = fetch_checkpoint(self.name, progress=self._progress)
        if path is None:
            self.error = public
            log.warning("prefetch of %s failed: %s", self.name, detail)
        else:
            self.done = self.total = path.stat().st_size
            log.info("prefetch of %s: %s is in the cache (%.0f MB)", self.name, path.name, self.done / 1e6)


@dataclass
class Fetches:
    """The downloads requests wait on, one :class:`Prefetch` per name at a time. While ``crowded()`` (a request
    waits for a model handler), those waiting beyond the ``share`` oldest step aside; the download goes on."""

    share: int = FETCH_SHARE
    crowded: Callable[[], bool] | None = None
    _jobs: dict[str, Prefetch] = field(default_factory=dict)
    _waiting: list[object] = field(default_factory=list)  # the requests waiting here, oldest first
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def wait(self, name: str, fetch: Callable[[Progress], None], report: Progress | None = None,
             poll_s: float = POLL_S) -> bool:
        """``fetch(progress)``, run once for every request for ``name`` meanwhile; whether it succeeded."""
        me = object()
        with self._lock:
            job = self._jobs.get(name)
            if job is None or job.finished:
                job = self._jobs[name] = Prefetch(name, fetch).start()
            self._waiting.append(me)
        try:
            return job.wait(report, poll_s, stay=lambda: self._stay(me))
        finally:
            with self._lock:
                self._waiting.remove(me)
                if job.finished and self._jobs.get(name) is job:
                    del self._jobs[name]

    def _stay(self, me: object) -> None:
        with self._lock:
            beyond = self._waiting.index(me) >= self.share
        if beyond and self.crowded is not None and self.crowded():
            raise InputError(key=STEP_ASIDE)

    @property
    def waiting(self) -> int:
        with self._lock:
            return len(self._waiting)


FETCHES = Fetches()  # this server's
