"""The upload folder bounded on disk (issue 26): its own folder per server, a size cap, no leftovers.

* :func:`server_folder`: this server's folder under one root (``$GRADIO_TEMP_DIR`` or ``$TMPDIR/gradio``),
  named with its pid, after removing the folders of servers that are gone (``kill -9``, an OOM kill).
* :class:`UploadSpace`: the uploads hold at most ``max_bytes`` (``VIT_UPLOAD_GB``, 1 by default): an
  upload is admitted only if it fits with what is there and what other uploads in flight reserved,
  after the oldest uploads have been removed to make room; partial files of aborted uploads and empty
  folders are swept away. The server's picture folder inside it is neither counted nor touched (it has
  budgets of its own: :class:`vit.serve.files.PictureFolder`).

Blocking (file system walks): call from a worker thread, never on the event loop. Gradio-free.
"""

from __future__ import annotations

import math
import os
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from vit.serve.files import PICTURE_PREFIX, remove_stale_folders
from vit.serve.sessions import positive_number

UPLOAD_ENV = "VIT_UPLOAD_GB"
DEFAULT_UPLOAD_GB = 1.0
PARTIAL_AGE_S = 120.0  # a partial upload untouched for 2 minutes was aborted (a slow client sends every few s)
KEEP_AGE_S = 60.0  # a file younger than this may be about to be analysed: never removed to make room
WALK_EVERY_S = 5.0  # the folder's total is measured this often (gradio writes results there too) ...
MIN_WALK_S = 1.0  # ... and at most this often when an upload would not fit


def upload_bytes(environ: Mapping[str, str] = os.environ) -> int:
    """The upload folder's cap in bytes from ``VIT_UPLOAD_GB`` (1e9 bytes each), 1 GB if unset.

    Raises:
        ValueError: set to something that is not a positive number.
    """
    return int(positive_number(environ, UPLOAD_ENV, DEFAULT_UPLOAD_GB, "gigabytes") * 1e9)


def gradio_upload_folder() -> str:
    """Where gradio keeps uploads: ``$GRADIO_TEMP_DIR`` (gradio's documented variable, which the app sets to a folder
    of this server's own: app.py), else ``$TMPDIR/gradio`` as gradio makes it."""
    return os.environ.get("GRADIO_TEMP_DIR") or str((Path(tempfile.gettempdir()) / "gradio").resolve())


def server_folder(root: str | os.PathLike) -> Path:
    """A new folder for this server's uploads under ``root``, after removing those of dead servers."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    remove_stale_folders(root)
    return Path(tempfile.mkdtemp(prefix=f"{PICTURE_PREFIX}{os.getpid()}-", dir=root))


def _files(folder: Path) -> list[tuple[float, int, Path, bool]]:
    """(mtime, size, path, at the top level) of every regular file under ``folder``, the server's own picture folder
    left out (its files are bounded on their own: vit.serve.files.PictureFolder)."""
    found = []
    for dirpath, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(PICTURE_PREFIX)]
        for name in names:
            path = Path(dirpath, name)
            try:
                st = path.lstat()
            except OSError:
                continue
            if path.is_file() and not path.is_symlink():
                found.append((st.st_mtime, st.st_size, path, Path(dirpath) == folder))
    return found


class UploadSpace:
    """What the upload folder may hold: ``max_bytes`` in files, plus what admitted uploads reserved."""

    def __init__(self, folder: str | os.PathLike, max_bytes: int | None = None):
        self.folder = Path(folder)
        self.max_bytes = upload_bytes() if max_bytes is None else int(max_bytes)
        self._reserved = 0
        self._used, self._walked = 0, -math.inf  # bytes at the last walk (+ uploads ended since), and when
        self._lock = threading.Lock()

    def admit(self, nbytes: int) -> bool:
        """Reserve ``nbytes`` for an upload if they fit (the oldest files go first to make room); False if not.

        Pair every True with :meth:`release` once the upload has ended (stored or not). The folder is
        walked at most every ``WALK_EVERY_S`` (between walks, the last walk's total plus the uploads that
        ended since), and again when an upload would not fit, at most every ``MIN_WALK_S``: a class's
        uploads do not queue behind one walk of thousands of files each.
        """
        with self._lock:
            files = self._walk_if(WALK_EVERY_S)
            need = self._used + self._reserved + nbytes - self.max_bytes
            if need > 0 and files is None:
                files = self._walk_if(MIN_WALK_S)
                need = self._used + self._reserved + nbytes - self.max_bytes
            if need > 0 and files is not None:
                freed = self._remove_oldest(files, need)
                self._used -= freed
                need -= freed
            if need > 0:
                return False
            self._reserved += nbytes
            return True

    def release(self, nbytes: int, received: int | None = None) -> None:
        """An admitted upload of ``nbytes`` ended: the ``received`` bytes (all if None) count as stored until the
        next walk says otherwise (an aborted upload's partial file is there until it is swept)."""
        with self._lock:
            self._reserved = max(0, self._reserved - nbytes)
            self._used += nbytes if received is None else min(nbytes, received)

    def _walk_if(self, older_than_s: float) -> list | None:
        """The folder's files, walked anew if the last walk is older than ``older_than_s`` (else None)."""
        if time.monotonic() - self._walked < older_than_s:
            return None
        files = _files(self.folder)
        self._used, self._walked = sum(size for _, size, _, _ in files), time.monotonic()
        return files

    def _remove_oldest(self, files, need: int) -> int:
        """Remove the oldest files (none younger than KEEP_AGE_S) until ``need`` bytes are free; bytes freed."""
        now, freed = time.time(), 0
        for mtime, size, path, _ in sorted(files):
            if freed >= need or now - mtime < KEEP_AGE_S:
                break
            try:
                path.unlink()
                freed += size
            except OSError:
                continue
        return freed

    def sweep(self) -> int:
        """Remove partial uploads (top-level files untouched for PARTIAL_AGE_S: gradio moves finished
        ones into a folder of their own) and empty folders; returns how many files went."""
        now, removed = time.time(), 0
        for mtime, _, path, top in _files(self.folder):
            if top and now - mtime > PARTIAL_AGE_S:
                try:
                    path.unlink()
                    removed += 1
                except OSError:
                    pass
        for dirpath, dirnames, filenames in os.walk(self.folder, topdown=False):
            if Path(dirpath) != self.folder and not dirnames and not filenames and \
                    not Path(dirpath).name.startswith(PICTURE_PREFIX):
                try:
                    if now - os.stat(dirpath).st_mtime > KEEP_AGE_S:
                        os.rmdir(dirpath)
                except OSError:
                    pass
        return removed

    def sweep_forever(self, every_s: float = 30.0, stop: threading.Event | None = None) -> threading.Event:
        """Sweep every ``every_s`` in a daemon thread; set the returned event to stop it."""
        stop = stop or threading.Event()

        def loop() -> None:
            while not stop.wait(every_s):
                if self.folder.exists():
                    self.sweep()

        threading.Thread(target=loop, name="sweep-uploads", daemon=True).start()
        return stop
