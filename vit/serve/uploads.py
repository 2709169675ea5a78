"""The upload folder bounded on disk (issue 26): its own folder per server, a size cap, no leftovers.

* :func:`server_folder`: this server's folder under one root (``$GRADIO_TEMP_DIR`` or ``$TMPDIR/gradio``),
  named with its pid, after removing the folders of servers that are gone (``kill -9``, an OOM kill).
* :class:`UploadSpace`: the uploads hold at most ``max_bytes`` (``VIT_UPLOAD_GB``, 1 by default), and one
  address at most its share (``VIT_UPLOAD_ADDRESS_GB``, half the folder by default): an upload is admitted only
  if it fits both, with what is there and what other uploads in flight reserved. What makes room is the
  uploading address's own oldest files first, then the oldest of whichever other address holds the most; never
  a file a live page shows (``shown``) nor one younger than ``KEEP_AGE_S`` (it may be about to be analysed).
  One client uploading 19 MB files in a loop used to delete every student's photo a minute after it came, and
  10 of 18 other students' uploads got 507 (High 2 of the review of 2026-12-04): now it meets its own share
  (429) and makes room only with its own files. A drawing is kept here too (:meth:`UploadSpace.store`), under
  the same rules (Medium 9). Partial files of aborted uploads and empty folders are swept away. The server's
  picture folder inside it is neither counted nor touched (it has budgets of its own:
  :class:`vit.serve.files.PictureFolder`).

Blocking (file system walks): call from a worker thread, never on the event loop. Gradio-free.
"""

from __future__ import annotations

import math
import os
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from vit.errors import InputError
from vit.serve.files import PICTURE_PREFIX, remove_stale_folders
from vit.serve.sessions import positive_number

UPLOAD_ENV = "VIT_UPLOAD_GB"
DEFAULT_UPLOAD_GB = 1.0
SHARE_ENV = "VIT_UPLOAD_ADDRESS_GB"  # what one address may hold; unset: DEFAULT_SHARE of the folder
# Half the folder (500 MB at the default 1 GB): a class of 30 behind one NAT can each have a 16 MB phone photo on
# screen at once (480 MB; a 4 MB photo: 125 uploads before their own oldest unshown ones go), and one address,
# whatever it sends, leaves the other 500 MB to everyone else (25 uploads of the largest 20 MB, 125 photos of 4 MB).
DEFAULT_SHARE = 0.5
OVER_SHARE, FULL = "refusal-upload-share", "refusal-upload-full"  # why an upload was not admitted (vit.i18n.refusals)
UNOWNED = "\x00unowned"  # files no upload recorded (gradio's own, a partial upload): no address's share
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


def address_share(max_bytes: int, environ: Mapping[str, str] = os.environ) -> int:
    """What one address may hold in the upload folder: ``VIT_UPLOAD_ADDRESS_GB`` (at most the folder), else
    :data:`DEFAULT_SHARE` of ``max_bytes``.

    Raises:
        ValueError: set to something that is not a positive number.
    """
    if not environ.get(SHARE_ENV, "").strip():
        return int(max_bytes * DEFAULT_SHARE)
    return min(max_bytes, int(positive_number(environ, SHARE_ENV, 1.0, "gigabytes") * 1e9))


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
    """What the upload folder may hold: ``max_bytes`` in files, plus what admitted uploads reserved; of it, one
    address at most ``share_bytes``.

    Args:
        folder: the upload folder (gradio's, ``$GRADIO_TEMP_DIR``).
        max_bytes: the folder's cap (``VIT_UPLOAD_GB`` if None).
        share_bytes: one address's (``VIT_UPLOAD_ADDRESS_GB``, else half of ``max_bytes``, if None).
        shown: ``shown()`` -> the paths of the images live pages show or analyse now (never removed to make room).
    """

    def __init__(self, folder: str | os.PathLike, max_bytes: int | None = None, share_bytes: int | None = None,
                 shown: Callable[[], Iterable[str]] | None = None):
        self.folder = Path(folder)
        self.max_bytes = upload_bytes() if max_bytes is None else int(max_bytes)
        self.share_bytes = address_share(self.max_bytes) if share_bytes is None else int(share_bytes)
        self.shown = shown or (lambda: ())
        self._real = os.path.realpath(self.folder)  # walked from here: the walk's paths are real ones
        self._reserved = 0
        self._used, self._walked = 0, -math.inf  # bytes at the last walk (+ uploads ended since), and when
        self._owner: dict[str, str] = {}  # a stored upload's real path -> the address that sent it
        self._used_by: dict[str, int] = {}  # an address's bytes at the last walk (+ its uploads ended since)
        self._reserved_by: dict[str, int] = {}
        self._lock = threading.Lock()

    def admit(self, nbytes: int, client: str = "") -> bool:
        """:meth:`reserve`: True if the upload was admitted."""
        return self.reserve(nbytes, client) is None

    def reserve(self, nbytes: int, client: str = "") -> str | None:
        """Reserve ``nbytes`` for an upload from ``client`` if they fit its share and the folder; else why not:
        :data:`OVER_SHARE` (the address holds its share, with nothing of its own to remove) or :data:`FULL`.

        What makes room: the address's own oldest files first, then those of the other address that holds the
        most, oldest first; never a file a live page shows or one younger than KEEP_AGE_S. Pair every admission
        with :meth:`release` once the upload has ended (stored or not). The folder is walked at most every
        ``WALK_EVERY_S`` (between walks, the last walk's total plus the uploads that ended since), and again when
        an upload would not fit, at most every ``MIN_WALK_S``: a class's uploads do not queue behind one walk of
        thousands of files each.
        """
        with self._lock:
            files = self._walk_if(WALK_EVERY_S)
            if self._over(nbytes, client) > 0 and files is None:
                files = self._walk_if(MIN_WALK_S)
            if self._over(nbytes, client) > 0 and files is not None:
                self._make_room(files, nbytes, client)
            if self._own_over(nbytes, client) > 0:
                return OVER_SHARE
            if self._total_over(nbytes) > 0:
                return FULL
            self._reserved += nbytes
            self._reserved_by[client] = self._reserved_by.get(client, 0) + nbytes
            return None

    def release(self, nbytes: int, received: int | None = None, client: str = "") -> None:
        """An admitted upload of ``nbytes`` ended: the ``received`` bytes (all if None) count as stored until the
        next walk says otherwise (an aborted upload's partial file is there until it is swept)."""
        stored = nbytes if received is None else min(nbytes, received)
        with self._lock:
            self._reserved = max(0, self._reserved - nbytes)
            left = self._reserved_by.get(client, 0) - nbytes
            if left > 0:
                self._reserved_by[client] = left
            else:
                self._reserved_by.pop(client, None)
            self._used += stored
            self._used_by[client] = self._used_by.get(client, 0) + stored

    def owned(self, paths: Iterable[str], client: str) -> None:
        """The upload of ``client`` was stored at ``paths`` (gradio's answer): they count against its share."""
        with self._lock:
            for path in paths:
                if isinstance(path, str):
                    self._owner[os.path.realpath(path)] = client

    def used_by(self, client: str) -> int:
        """Bytes ``client`` holds (at the last walk, plus its uploads since)."""
        with self._lock:
            return self._used_by.get(client, 0)

    def store(self, data: bytes, name: str, client: str) -> Path:
        """Keep ``data`` (a drawing) as an upload of ``client``: in a folder of its own with a whole uuid4 in its
        name, counted against the address's share and kept by the same rules as its photos.

        Raises:
            InputError: it does not fit (:data:`OVER_SHARE` or :data:`FULL`, one sentence each).
        """
        refused = self.reserve(len(data), client)
        if refused is not None:
            raise InputError(key=refused)
        try:
            path = self.folder / uuid.uuid4().hex / name
            path.parent.mkdir(parents=True)
            path.write_bytes(data)
        finally:
            self.release(len(data), client=client)
        self.owned([str(path)], client)
        return path

    def _own_over(self, nbytes: int, client: str) -> int:
        return self._used_by.get(client, 0) + self._reserved_by.get(client, 0) + nbytes - self.share_bytes

    def _total_over(self, nbytes: int) -> int:
        return self._used + self._reserved + nbytes - self.max_bytes

    def _over(self, nbytes: int, client: str) -> int:
        return max(self._own_over(nbytes, client), self._total_over(nbytes))

    def _walk_if(self, older_than_s: float) -> list | None:
        """The folder's files, walked anew if the last walk is older than ``older_than_s`` (else None); each
        address's bytes counted again, and the owners of files gone forgotten."""
        if time.monotonic() - self._walked < older_than_s:
            return None
        files = _files(Path(self._real))
        owners, used_by = {}, {}
        for _, size, path, _ in files:
            owner = self._owner.get(str(path))
            if owner is not None:
                owners[str(path)] = owner
            used_by[owner if owner is not None else UNOWNED] = used_by.get(owner if owner is not None else UNOWNED,
                                                                           0) + size
        self._owner, self._used_by = owners, used_by
        self._used, self._walked = sum(size for _, size, _, _ in files), time.monotonic()
        return files

    def _make_room(self, files, nbytes: int, client: str) -> None:
        """Remove files until the upload fits: ``client``'s own oldest first (to its share, and for the folder),
        then, for the folder, the oldest of the address holding the most (files no upload recorded count as one
        address). Never a file younger than KEEP_AGE_S or one a live page shows."""
        now = time.time()
        shown = {os.path.realpath(p) for p in self.shown() if isinstance(p, str)}
        mine, theirs = [], {}
        for mtime, size, path, _ in sorted(files, key=lambda f: f[0]):
            if now - mtime < KEEP_AGE_S or str(path) in shown:
                continue
            owner = self._owner.get(str(path), UNOWNED)
            (mine if owner == client else theirs.setdefault(owner, [])).append((size, path))
        for size, path in mine:
            if self._over(nbytes, client) <= 0:
                return
            self._remove(path, size, client)
        while self._total_over(nbytes) > 0 and theirs:
            owner = max(theirs, key=lambda o: self._used_by.get(o, 0))
            size, path = theirs[owner].pop(0)
            if not theirs[owner]:
                del theirs[owner]
            self._remove(path, size, owner)

    def _remove(self, path: Path, size: int, owner: str) -> None:
        try:
            path.unlink()
        except OSError:
            return
        self._used -= size
        self._used_by[owner] = max(0, self._used_by.get(owner, 0) - size)
        self._owner.pop(str(path), None)

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
