"""The upload folder bounded on disk: its own folder per server, a cap, a share per address, no leftovers.
Blocking (file system walks): call from a worker thread. The attacks behind it: docs/reliability.md."""

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
# Half the folder: a class of 30 behind one NAT can each show a 16 MB photo, and one address leaves the other half
# to everyone else (the figures: docs/reliability.md).
DEFAULT_SHARE = 0.5
OVER_SHARE, FULL = "refusal-upload-share", "refusal-upload-full"  # why an upload was not admitted (vit.i18n.refusals)
UNOWNED = "\x00unowned"  # files no upload recorded (gradio's own, a partial upload): no address's share
PARTIAL_AGE_S = 120.0  # a partial upload untouched for 2 minutes was aborted (a slow client sends every few s)
KEEP_AGE_S = 60.0  # a file younger than this may be about to be analysed: never removed to make room
WALK_EVERY_S = 5.0  # the folder's total is measured this often (gradio writes results there too) ...
MIN_WALK_S = 1.0  # ... and at most this often when an upload would not fit


def upload_bytes(environ: Mapping[str, str] = os.environ) -> int:
    """The upload folder's cap in bytes from ``VIT_UPLOAD_GB`` (1 if unset); ValueError if not a positive number."""
    return int(positive_number(environ, UPLOAD_ENV, DEFAULT_UPLOAD_GB, "gigabytes") * 1e9)


def address_share(max_bytes: int, environ: Mapping[str, str] = os.environ) -> int:
    """One address's share in bytes: ``VIT_UPLOAD_ADDRESS_GB`` (at most the folder), else :data:`DEFAULT_SHARE`."""
    if not environ.get(SHARE_ENV, "").strip():
        return int(max_bytes * DEFAULT_SHARE)
    return min(max_bytes, int(positive_number(environ, SHARE_ENV, 1.0, "gigabytes") * 1e9))


def gradio_upload_folder() -> str:
    """Where gradio keeps uploads: ``$GRADIO_TEMP_DIR`` (which app.py sets), else ``$TMPDIR/gradio`` as gradio does."""
    return os.environ.get("GRADIO_TEMP_DIR") or str((Path(tempfile.gettempdir()) / "gradio").resolve())


def server_folder(root: str | os.PathLike) -> Path:
    """A new folder for this server's uploads under ``root``, after removing those of dead servers."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    remove_stale_folders(root)
    return Path(tempfile.mkdtemp(prefix=f"{PICTURE_PREFIX}{os.getpid()}-", dir=root))


def _files(folder: Path) -> list[tuple[float, int, Path, bool]]:
    """(mtime, size, path, at the top level) of every regular file under ``folder``, the picture folder left out
    (bounded on its own)."""
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
    """What the upload folder may hold: ``max_bytes`` in files and reservations, one address at most
    ``share_bytes``. Room is made from the uploader's oldest files first, never from what ``shown()`` names."""

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
        """Reserve ``nbytes`` for ``client``'s upload if they fit, else why not; pair it with :meth:`release`. The
        folder is walked at most every ``WALK_EVERY_S``, so a class's uploads do not queue behind walks."""
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
        """Keep ``data`` (a drawing) as an upload of ``client``, in a folder of its own named by a whole uuid4."""
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
        """The folder's files, walked anew if the last walk is older than ``older_than_s`` (else None)."""
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
        """Remove files until the upload fits: ``client``'s own oldest first, then the oldest of the address holding
        the most. Never a file younger than KEEP_AGE_S or one a live page shows."""
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
