"""The only way a path that came with a request reaches the filesystem (:func:`proven_file`), and the server's
picture folder (:class:`PictureFolder`: bounded, pruned by age, removed at exit and by the next start)."""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from vit.errors import InputError
from vit.process import pid_alive
from vit.serve.sessions import positive_number

UPLOAD_AGAIN = "refusal-upload-again"  # the one refusal of a path, whatever it names (vit.i18n.refusals)
_URL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, file:, data:, ftp: ...


def proven_file(candidate, roots: Iterable[str | os.PathLike]) -> Path:
    """The real path of ``candidate`` (a string) if it is a regular file under one of ``roots``; for anything else
    the same :data:`UPLOAD_AGAIN` every time, so a refusal tells nothing about the path."""
    if not isinstance(candidate, str) or not candidate or "\x00" in candidate or _URL.match(candidate):
        raise InputError(key=UPLOAD_AGAIN)
    try:
        real = Path(os.path.realpath(candidate))
        allowed = any(real.is_relative_to(os.path.realpath(root)) for root in roots)
        if allowed and real.is_file():
            return real
    except (OSError, ValueError):
        pass
    raise InputError(key=UPLOAD_AGAIN)


PICTURE_PREFIX = "vit-app-"
_FOLDER = re.compile(rf"^{PICTURE_PREFIX}(?:(?P<pid>\d+)-)?[^/]+$")
# Who a file is made for: (session, address), set around a request's handler (vit.ui.events.handler).
OWNER: contextvars.ContextVar[tuple[str, str]] = contextvars.ContextVar("vit_file_owner", default=("", ""))
PICTURE_AGE_S = 600.0  # a picture stays servable this long after it is made (the page has fetched it by then)
# The folder's budgets, in MB (the operator's environment may change them): a session's pictures, PDFs and downloads,
# an address's (a class behind one NAT shares it), and the whole folder's; beyond one, the oldest go.
BUDGETS_MB = {"session": ("VIT_PICTURES_SESSION_MB", 64), "address": ("VIT_PICTURES_ADDRESS_MB", 256),
              "total": ("VIT_PICTURES_TOTAL_MB", 2000)}


def picture_budgets(environ=os.environ) -> dict[str, int]:
    """The picture folder's budgets in bytes (:data:`BUDGETS_MB`, the environment); ValueError if not positive."""
    return {kind: int(positive_number(environ, name, default, "megabytes") * 1e6)
            for kind, (name, default) in BUDGETS_MB.items()}


@contextlib.contextmanager
def owned_by(session: str, address: str):
    """Files made in this block are ``session``'s and ``address``'s (for :class:`PictureFolder`'s budgets)."""
    token = OWNER.set((session, address))
    try:
        yield
    finally:
        OWNER.reset(token)


@dataclass
class _File:
    size: int
    session: str
    address: str
    made: float


class PictureFolder:
    """The files the server makes for its users (pictures, lesson PDFs, downloads), for gradio to serve: beyond a
    session's, an address's or the folder's budget the owner's oldest go. The folder's name carries the pid, so the
    next start removes the folders of killed servers."""

    def __init__(self, max_age_s: float = PICTURE_AGE_S, every_s: float = 60.0, parent: str | None = None,
                 budgets: dict[str, int] | None = None):
        self.max_age_s, self.every_s = max_age_s, every_s
        self.budgets = picture_budgets() if budgets is None else budgets  # bytes: "session", "address", "total"
        self.parent = Path(parent or tempfile.gettempdir())
        remove_stale_folders(self.parent)
        self.path = Path(tempfile.mkdtemp(prefix=f"{PICTURE_PREFIX}{os.getpid()}-", dir=self.parent))
        self._files: dict[Path, _File] = {}  # oldest first
        self._lock = threading.Lock()
        self._stop = threading.Event()
        threading.Thread(target=self._prune_forever, name="prune-pictures", daemon=True).start()

    def new_path(self, suffix: str = ".png", readable: str = "") -> Path:
        """A new file's path: ``<readable>-<uuid4>.<suffix>``. The whole uuid4 (122 random bits): gradio serves any
        file of its upload folder to anyone who names it, so a name must not be guessable."""
        readable = re.sub(r"[^A-Za-z0-9_.-]+", "-", readable)[:80]
        return self.path / f"{readable + '-' if readable else ''}{uuid.uuid4().hex}{suffix}"

    def write(self, save: Callable[[Path], object], suffix: str = ".png", readable: str = "") -> Path:
        """A new file written by ``save(path)``, counted against its owner's budgets (:data:`OWNER`)."""
        path = self.new_path(suffix, readable)
        save(path)
        session, address = OWNER.get()
        with self._lock:
            self._files[path] = _File(path.stat().st_size, session, address, time.time())
            for kind, owner in (("session", session), ("address", address), ("total", None)):
                self._evict(kind, owner, keep=path)
        return path

    def used(self, kind: str = "total", owner: str | None = None) -> int:
        """Bytes held in all, or by one session or address."""
        with self._lock:
            return sum(f.size for f in self._owned(kind, owner))

    def _owned(self, kind: str, owner: str | None) -> list[_File]:
        return [f for f in self._files.values() if kind == "total" or getattr(f, kind) == owner]

    def _evict(self, kind: str, owner: str | None, keep: Path) -> None:
        """Under the lock: the oldest files of ``owner`` (all, for "total") go until its budget holds."""
        if kind != "total" and not owner:
            return
        mine = [p for p, f in self._files.items() if kind == "total" or getattr(f, kind) == owner]
        held = sum(self._files[p].size for p in mine)
        for path in mine:
            if held <= self.budgets[kind] or path == keep:
                break
            held -= self._files.pop(path).size
            path.unlink(missing_ok=True)

    def prune(self) -> int:
        """Remove files older than ``max_age_s`` (those this object made, and any other there); returns how many."""
        now, removed = time.time(), 0
        with self._lock:
            for old in [p for p, f in self._files.items() if now - f.made > self.max_age_s]:
                del self._files[old]
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
    """Remove picture folders of dead servers (pid gone); one without a pid once older than ``orphan_age_s``."""
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
