"""The only way a path that came with a request reaches the filesystem, and the server's picture folder.

* :func:`proven_file`: a path is resolved (symlinks followed) and must name a regular file
  under one of the server's own folders (its upload folder, its assets); anything else is
  refused with one sentence that says nothing about the path.
* :class:`PictureFolder`: the server's folder of encoded pictures, pruned by age in the
  background, removed at exit, and folders of dead servers removed at start.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable
from pathlib import Path

from vit.errors import InputError
from vit.process import pid_alive

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



PICTURE_PREFIX = "vit-app-"
_FOLDER = re.compile(rf"^{PICTURE_PREFIX}(?:(?P<pid>\d+)-)?[^/]+$")


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
