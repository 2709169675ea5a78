"""What the server keeps between requests: models, analyses, the model's queue, pictures, tabs.

One of each per server process, created on first use (nothing heavy at import).
A browser tab holds only small keys; everything large lives here, bounded.
"""

from __future__ import annotations

import atexit
import itertools
import logging
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field

from vit.errors import InputError

log = logging.getLogger("vit.app")

STATE_TTL_S = 3600  # a tab's analysis key is dropped an hour after its last update
MAX_TABS = 2000  # tabs remembered (what each shows); the least recently seen go first

# How many times the model ran (tests check that display-only changes do not add to it).
RUNS: Counter = Counter()

_lock = threading.Lock()
_cache = None
_store = None
_fair = None
_pictures = None


def model_cache():
    """The one :class:`vit.serve.cache.ModelCache` of this server."""
    global _cache
    with _lock:
        if _cache is None:
            from vit.serve.cache import ModelCache  # noqa: PLC0415 - imports torch

            _cache = ModelCache()
        return _cache


def analysis_store():
    """The server's :class:`vit.serve.cache.AnalysisStore`: tabs hold keys, the analyses live here, bounded."""
    global _store
    with _lock:
        if _store is None:
            from vit.serve.cache import AnalysisStore  # noqa: PLC0415

            _store = AnalysisStore()
        return _store


def fair_queue():
    """The server's :class:`vit.serve.queue.FairQueue`: who runs the model next."""
    global _fair
    with _lock:
        if _fair is None:
            from vit.serve.queue import FairQueue  # noqa: PLC0415

            _fair = FairQueue(slots=1)
        return _fair


def picture_folder():
    """The server's :class:`vit.serve.files.PictureFolder` (pruned in the background, removed at exit)."""
    global _pictures
    with _lock:
        if _pictures is None:
            from vit.serve.files import PictureFolder  # noqa: PLC0415

            _pictures = PictureFolder()
            atexit.register(_pictures.remove)
        return _pictures


def reset() -> None:
    """Forget the model cache and the kept analyses (tests point the server at another TORCH_HOME)."""
    global _cache, _store
    with _lock:
        _cache = _store = None
    TABS.clear()


def png_file(image) -> str:
    """Save a picture as PNG at zlib level 1 and return its path for gradio to serve.

    Gradio would encode a PIL image at PIL's default level 6: for a 640 px overlay that is
    ~4x slower for a file ~7% smaller. Gradio copies the file into its own cache at once.
    """
    path = picture_folder().new_path(".png")
    image.save(path, format="PNG", compress_level=1)
    return str(path)


def session_of(request) -> str:
    """The browser tab (gradio session) a request comes from; the client's address without one."""
    session = getattr(request, "session_hash", None)
    if session:
        return f"session:{session}"
    client = getattr(request, "client", None)
    return f"client:{getattr(client, 'host', None) or 'python'}"


def kept(key):
    """The analysis a tab's key stands for; a clear message if it was dropped to make room."""
    analysis = analysis_store().get(key)
    if analysis is None:
        raise InputError("This picture's analysis was dropped to make room for other users' analyses: "
                         "press Analyze to run it again.")
    return analysis


def release_memory() -> None:
    """After a model run: hand freed memory back to the OS and log what the caches account for."""
    from vit.serve.cache import model_bytes  # noqa: PLC0415
    from vit.serve.memory import rss_bytes, trim_memory  # noqa: PLC0415

    trim_memory()
    with _lock:
        models = sum(model_bytes(m) for m in _cache.models()) if _cache is not None else 0
        analyses = _store.nbytes if _store is not None else 0
    log.info("memory: RSS %.2f GB; model cache %.2f GB, kept analyses %.2f GB",
             rss_bytes() / 1e9, models / 1e9, analyses / 1e9)


# --------------------------------------------------------------------------- tabs


@dataclass
class Tab:
    """What one browser tab asked for last and what its pictures show (small: no pictures, no tensors).

    ``latest`` numbers the tab's analysis requests; a run whose number is no longer the latest
    when it finishes is dropped (the newest request wins); ``redraw`` does the same for redraws.
    ``drawn`` maps each picture's elem_id to the inputs it was drawn from, so a redraw sends only
    the pictures that change.
    """

    latest: int = 0
    running: tuple | None = None  # (image, name, P, depth) of the run going now
    shown: tuple | None = None  # (image, name, P, depth) the pictures show
    key: str | None = None  # the store's key of the analysis they show
    redraw: int = 0  # the number of the latest redraw; an older one that finishes later is dropped
    drawn: dict[str, tuple] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class Tabs:
    """Every tab's :class:`Tab`, the least recently seen forgotten beyond :data:`MAX_TABS`."""

    def __init__(self, limit: int = MAX_TABS):
        self.limit = limit
        self._tabs: OrderedDict[str, Tab] = OrderedDict()
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)

    def get(self, session: str) -> Tab:
        with self._lock:
            tab = self._tabs.pop(session, None) or Tab()
            self._tabs[session] = tab
            while len(self._tabs) > self.limit:
                self._tabs.popitem(last=False)
            return tab

    def next_number(self) -> int:
        return next(self._numbers)

    def clear(self) -> None:
        with self._lock:
            self._tabs.clear()


TABS = Tabs()
