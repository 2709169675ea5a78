"""What the server keeps between requests: models, analyses, the model's queue, pictures, sessions.
One of each per process, made on first use; a browser session holds only small keys, the large lives here, bounded."""

from __future__ import annotations

import atexit
import io
import itertools
import logging
import os
import tempfile
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

from vit import validate
from vit.bounded import BoundedDict
from vit.errors import InputError
from vit.serve import sessions as serve_sessions
from vit.serve.files import OWNER, PictureFolder
from vit.serve.limits import client_address, trusts_forwarded
from vit.serve.memory import rss_bytes, trim_memory
from vit.serve.queue import FairQueue
from vit.serve.uploads import UploadSpace, gradio_upload_folder
from vit.validate import Setting
from vit.views import registry

if TYPE_CHECKING:  # vit.serve.cache imports torch: not at import
    from vit.serve.analyses import AnalysisStore
    from vit.serve.cache import ModelCache

log = logging.getLogger("vit.app")

STATE_TTL_S = 3600  # a session's analysis key is dropped an hour after its last update
MAX_SESSIONS = serve_sessions.MAX_SESSIONS  # sessions remembered (gradio's as many: app.launch); LRU beyond
MODEL_SLOTS = 1  # model runs at once, for the whole server (vit.serve.queue.FairQueue)
# Of the model's 16 handlers, one address may hold this many while another waits (FairQueue.share); alone, all 16.
MODEL_SHARE = 12

# How many times the model ran (tests check that display-only changes do not add to it).
RUNS: Counter = Counter()

T = TypeVar("T")


class Lazy(Generic[T]):
    """One object of this server, made by ``make()`` on first use (its module may import torch)."""

    def __init__(self, make: Callable[[], T]):
        self._make, self._value, self._lock = make, None, threading.Lock()

    def __call__(self) -> T:
        with self._lock:
            if self._value is None:
                self._value = self._make()
            return self._value

    @property
    def made(self) -> T | None:
        """The object if it has been made, else None (nothing is made for asking)."""
        return self._value

    def forget(self) -> None:
        with self._lock:
            self._value = None


DTYPE_ENV = "VIT_DTYPE"  # the models' precision: auto (the default), float32 or bfloat16; app.py --dtype sets it
DEFAULT_DTYPE = "auto"  # bfloat16 where the processor has bfloat16 matmuls (vit.model.precision), else float32


def dtype_setting(environ=os.environ) -> str:
    """The precision this server runs its models in: ``$VIT_DTYPE``, else :data:`DEFAULT_DTYPE`."""
    try:
        return validate.dtype(environ.get(DTYPE_ENV, DEFAULT_DTYPE))
    except InputError as exc:
        raise ValueError(f"{DTYPE_ENV}: {exc}") from None


def _model_cache() -> ModelCache:
    from vit.serve.cache import ModelCache  # noqa: PLC0415 - imports torch

    return ModelCache(dtype=dtype_setting())


def _analysis_store() -> AnalysisStore:
    from vit.serve.analyses import AnalysisStore  # noqa: PLC0415

    return AnalysisStore(showing=SESSIONS.showing)  # a live page's analysis goes last


def _picture_folder() -> PictureFolder:
    """Inside gradio's upload folder, whose files gradio serves as they are (others it hashes and copies); bounded."""
    parent = os.environ.get("GRADIO_TEMP_DIR") or os.path.join(tempfile.gettempdir(), "gradio")
    os.makedirs(parent, exist_ok=True)
    folder = PictureFolder(parent=parent)
    atexit.register(folder.remove)
    return folder


model_cache = Lazy(_model_cache)  # the one vit.serve.cache.ModelCache of this server
analysis_store = Lazy(_analysis_store)  # vit.serve.analyses.AnalysisStore: sessions hold keys, analyses live here
fair_queue = Lazy(lambda: FairQueue(slots=MODEL_SLOTS, share=MODEL_SHARE))  # who runs the model next
picture_folder = Lazy(_picture_folder)  # vit.serve.files.PictureFolder: pruned in the background, removed at exit
# The upload folder's shares (vit.serve.uploads.UploadSpace): never a file a live page shows removed to make room.
upload_space = Lazy(lambda: UploadSpace(gradio_upload_folder(), shown=SESSIONS.images))


def reset() -> None:
    """Forget caches, pictures and sessions: the next server reads its environment again (tests start several)."""
    model_cache.forget()
    analysis_store.forget()
    upload_space.forget()
    folder = picture_folder.made
    picture_folder.forget()
    if folder is not None:
        folder.remove()
    SESSIONS.clear()


def picture_file(image, encoding: str = "png", cells=None) -> str:
    """A picture saved for gradio to serve; its path. One that takes clicks carries its cells in its name
    (``<uuid>.cells-x0-y0-w-h-rows-cols.png``): the page maps a click through the very picture it shows."""
    where = "" if cells is None else ".cells-" + "-".join(
        f"{v:.1f}" for v in (cells.x0, cells.y0, cells.w, cells.h)) + f"-{cells.rows}-{cells.cols}"
    suffix = f"{where}.jpg" if encoding == "jpeg" else f"{where}.png"
    return str(picture_folder().write(lambda path: registry.encode(image, encoding, path), suffix))


def keep_drawing(image) -> str:
    """A drawing is the student's input, not a picture: kept with the uploads, in the address's share; its path."""
    png = io.BytesIO()
    image.save(png, format="PNG", compress_level=1)
    return str(upload_space().store(png.getvalue(), "drawing.png", OWNER.get()[1]))


def session_of(request) -> str:
    """The browser session (gradio's session hash) a request comes from; the client's address without one."""
    session = getattr(request, "session_hash", None)
    if session:
        return f"session:{session}"
    client = getattr(request, "client", None)
    return f"client:{getattr(client, 'host', None) or 'python'}"


def owner_of(request) -> tuple[str, str]:
    """(session, address) of a request for its files' budgets, the address as the server's limits read it."""
    if request is None:
        return "", ""
    headers = getattr(request, "headers", None) or {}
    client = getattr(request, "client", None)
    scope = {"headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
             "client": (getattr(client, "host", None) or "unknown", 0)}
    return session_of(request), client_address(scope, trusts_forwarded())


def kept(key):
    """The analysis a session's key stands for; a clear message if it was dropped to make room."""
    analysis = analysis_store().get(key)
    if analysis is None:
        raise InputError(key="refusal-dropped")
    return analysis


def release_memory() -> None:
    """After a model run: hand freed memory back to the OS and log what the caches account for."""
    trim_memory()
    cache, store = model_cache.made, analysis_store.made
    models = sum(m.nbytes for m in cache.models()) if cache is not None else 0
    analyses = store.nbytes if store is not None else 0
    log.info("memory: RSS %.2f GB; model cache %.2f GB, kept analyses %.2f GB",
             rss_bytes() / 1e9, models / 1e9, analyses / 1e9)


@dataclass(frozen=True)
class Shown:
    """An image at a setting: what a session's pictures show, or what its run is computing."""

    image: str  # vit.ui.inputs.image_id: gradio names every upload with a fresh path
    setting: Setting


@dataclass
class Session:
    """What one browser session asked for last and what its pictures show (small: no pictures, no tensors)."""

    latest: int = 0  # the number of its latest analysis request: an older run that finishes later is dropped
    running: Shown | None = None  # the run going now
    shown: Shown | None = None  # what the pictures show
    key: str | None = None  # the store's key of the analysis they show
    redraw: int = 0  # the number of the latest redraw; an older one that finishes later is dropped
    explained: int = 0  # the same for the "Why this class?" map
    tested: tuple | None = None  # (key, class, method, layer) of the map the Why tab's curves test, while shown
    drawn: dict[str, tuple] = field(default_factory=dict)  # each picture's inputs as drawn: a redraw sends changes
    sent: dict[str, str] = field(default_factory=dict)  # each picture's file as last sent (it may be pruned since)
    busy: int = 0  # the page's analysis chains under way (Analyze stays disabled until the last one ends)
    asked: int = 0  # of them, the Analyze button's: a setting waiting for Analyze then says "running", not "press"
    timing: dict = field(default_factory=dict)  # the shown analysis's timing line's numbers: a redraw adds its time
    ended: bool = False  # its page is gone (closed, reloaded): its runs stop, its analyses go
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def wants(self, number: int) -> bool:
        """Whether the session still wants its request ``number``: the latest one, and its page still there."""
        return not self.ended and self.latest == number


class Sessions:
    """Every session's :class:`Session`, the least recently seen forgotten beyond :data:`MAX_SESSIONS`."""

    def __init__(self, limit: int = MAX_SESSIONS):
        self._sessions: BoundedDict = BoundedDict(limit)
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)

    def get(self, session: str) -> Session:
        with self._lock:
            found = self._sessions.get(session)
            if found is None:
                found = self._sessions[session] = Session()
            return found

    def resize(self, limit: int) -> None:
        """Remember at most ``limit`` sessions from now on (the server's ``VIT_MAX_SESSIONS``)."""
        with self._lock:
            self._sessions.max_items = limit
            self._sessions.evict()

    def next_number(self) -> int:
        return next(self._numbers)

    def pop(self, session: str) -> Session | None:
        """Forget a session (its page is gone); the :class:`Session` it had, if any."""
        with self._lock:
            return self._sessions.pop(session, None)

    def let_go(self, key: str) -> None:
        """No session shows the analysis of ``key`` any more (its tab's key expired)."""
        with self._lock:
            for s in self._sessions.values():
                if s.key == key:
                    s.key = None

    def images(self) -> set[str]:
        """The images (vit.ui.inputs.image_id: an upload's path) that live pages show or analyse now."""
        with self._lock:
            found = [s for s in self._sessions.values() if not s.ended]
        return {shown.image for s in found for shown in (s.shown, s.running) if shown is not None}

    def showing(self, key: str) -> bool:
        with self._lock:
            return any(s.key == key for s in self._sessions.values())

    def clear(self) -> None:
        with self._lock:
            self._sessions.clear()


SESSIONS = Sessions()


def show(session: Session, shown: Shown, key: str) -> None:
    """A session's new analysis lands (unless its page went); the one shown before goes unless another shows it."""
    with session.lock:
        if session.ended:
            gone = key
        else:
            gone, session.shown, session.key = session.key, shown, key
            gone = None if gone == key else gone
    forget_unshown(gone)


def forget_unshown(key: str | None) -> int:
    """Drop the analysis of ``key`` unless a session shows it; the bytes it held (0 if kept or gone)."""
    store = analysis_store.made
    if key is None or store is None or SESSIONS.showing(key):
        return 0
    return store.drop(key)


def end_session(session: str) -> int:
    """A page is gone: its run stops at the next layer, a waiting one leaves the line, its analyses go; the bytes."""
    found = SESSIONS.pop(session)
    if found is None:
        return 0
    with found.lock:
        found.ended = True
        key, found.key, found.shown = found.key, None, None
    queue = fair_queue.made
    if queue is not None:
        queue.wake()  # its waiting request looks again, sees it is not wanted, and leaves
    dropped = forget_unshown(key)
    if dropped:
        trim_memory()
    store = analysis_store.made
    log.log(logging.INFO if dropped else logging.DEBUG, "session ended: dropped %.2f GB of analyses; kept "
            "analyses %.2f GB", dropped / 1e9, store.nbytes / 1e9 if store is not None else 0.0)
    return dropped


def key_expired(key) -> None:
    """``gr.State``'s ``delete_callback``: a tab's key expired (:data:`STATE_TTL_S`), so its analysis goes."""
    if isinstance(key, str):
        SESSIONS.let_go(key)
        forget_unshown(key)
