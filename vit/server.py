"""What a server shared by a whole network needs beyond the model: one layer, no gradio.

* :func:`proven_file`: the only way a path that came with a request reaches the
  filesystem. It is resolved (symlinks followed) and must name a regular file
  under one of the server's own folders (its upload folder, its assets);
  anything else is refused with one sentence that says nothing about the path.
* :class:`FairQueue`: one model run at a time for the whole server, at most one
  waiting run per browser session (a newer request replaces it) and none while
  the session's own run is going, and cheap runs served before a line of
  expensive ones (shortest expected finish first).
* :func:`trim_memory`: hand the memory an analysis freed back to the operating
  system (glibc keeps freed heap pages otherwise), and :func:`rss_bytes`.
* :class:`PictureFolder`: the server's folder of encoded pictures, pruned by age in
  the background, removed at exit, and folders of dead servers removed at start.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import os
import re
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError

# --------------------------------------------------------------------------- uploads

UPLOAD_AGAIN = "This image could not be used: please upload the image again."
_URL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, file:, data:, ftp: ...


def proven_file(candidate, roots: Iterable[str | os.PathLike]) -> Path:
    """The resolved path of ``candidate`` if it is a regular file under one of ``roots``.

    Args:
        candidate: a path as it came in a request (a string; anything else is refused).
        roots: the folders whose files the server may read (resolved here too).

    Returns:
        The real path (symlinks followed, ``..`` gone).

    Raises:
        InputError: :data:`UPLOAD_AGAIN` for anything else: a URL, a path outside the
            roots (existing or not, file or folder), a symlink leading out, a missing file.
            The same sentence every time, so a refusal tells nothing about the path.
    """
    if not isinstance(candidate, str) or not candidate or "\x00" in candidate or _URL.match(candidate):
        raise InputError(UPLOAD_AGAIN)
    try:
        real = Path(os.path.realpath(candidate))
        allowed = any(real.is_relative_to(os.path.realpath(root)) for root in roots)
        if allowed and real.is_file():
            return real
    except (OSError, ValueError):
        pass
    raise InputError(UPLOAD_AGAIN)


# --------------------------------------------------------------------------- fairness


class Busy(InputError):
    """The session already has a model run going."""


class Replaced(InputError):
    """A newer request from the same session took this waiting request's place."""


BUSY = ("Your previous analysis is still running: this one was not started. "
        "Wait for the pictures, then change the setting again.")
REPLACED = "Replaced by a newer request from the same tab."


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


# --------------------------------------------------------------------------- memory

_libc = None
if os.name == "posix":
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _libc.malloc_trim.argtypes = [ctypes.c_size_t]
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        _libc = None


def trim_memory() -> bool:
    """Give the heap pages freed by an analysis back to the OS (glibc ``malloc_trim``).

    glibc keeps freed memory in its arenas for reuse; after a burst of large analyses
    a server would otherwise stay at its peak for good. Returns whether anything was
    released (False where there is no glibc).
    """
    return bool(_libc and _libc.malloc_trim(0))


def rss_bytes(pid: int | str = "self") -> int:
    """Resident memory of a process (Linux ``/proc``; 0 elsewhere)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


# --------------------------------------------------------------------------- pictures

PICTURE_PREFIX = "vit-app-"
_FOLDER = re.compile(rf"^{PICTURE_PREFIX}(?:(?P<pid>\d+)-)?[^/]+$")


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (a leftover file's writer, say)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class PictureFolder:
    """Encoded pictures on their way to gradio, which copies them into its own cache.

    Files older than ``max_age_s`` are removed by a background thread, so an idle
    server does not keep the last lesson's pictures; the folder goes at exit (the
    app turns SIGTERM into a normal exit too). Its name carries the server's pid, so
    the next start can remove the folders of servers that were killed.
    """

    def __init__(self, max_age_s: float = 120.0, every_s: float = 30.0, parent: str | None = None):
        self.max_age_s, self.every_s = max_age_s, every_s
        self.parent = Path(parent or tempfile.gettempdir())
        remove_stale_folders(self.parent)
        self.path = Path(tempfile.mkdtemp(prefix=f"{PICTURE_PREFIX}{os.getpid()}-", dir=self.parent))
        self._stop = threading.Event()
        threading.Thread(target=self._prune_forever, name="prune-pictures", daemon=True).start()

    def new_path(self, suffix: str = ".png") -> Path:
        return self.path / f"{uuid.uuid4().hex}{suffix}"

    def prune(self) -> int:
        """Remove files older than ``max_age_s``; returns how many."""
        now, removed = time.time(), 0
        for old in self.path.glob("*"):
            try:
                if now - old.stat().st_mtime > self.max_age_s:
                    old.unlink()
                    removed += 1
            except FileNotFoundError:  # removed meanwhile
                pass
        return removed

    def _prune_forever(self) -> None:
        while not self._stop.wait(self.every_s):
            if not self.path.exists():
                return
            self.prune()

    def remove(self) -> None:
        self._stop.set()
        shutil.rmtree(self.path, ignore_errors=True)


def remove_stale_folders(parent: str | os.PathLike, orphan_age_s: float = 3600.0) -> list[Path]:
    """Remove picture folders left by servers that died (their pid is gone).

    A folder without a pid in its name (older versions) is removed once it is older
    than ``orphan_age_s``.
    """
    removed = []
    try:
        entries = list(Path(parent).iterdir())
    except OSError:
        return removed
    for path in entries:
        match = _FOLDER.match(path.name)
        if not match or not path.is_dir() or path.is_symlink():
            continue
        pid = match.group("pid")
        try:
            # Our own pid on a folder we did not make yet: a server before a restart (containers reuse pids).
            stale = (int(pid) == os.getpid() or not pid_alive(int(pid))) if pid else \
                time.time() - path.stat().st_mtime > orphan_age_s
        except OSError:
            continue
        if stale:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed
