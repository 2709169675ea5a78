"""A bounded cache of loaded models, shared by the requests of a server.

Least recently used first out, and the big families (ViT-L, ViT-H) before the
others, so a classroom flipping between settings does not reload ViT-B each
time, and one request for ViT-H does not keep 2.5 GB pinned. Loading is
serialised per key, so thirty students asking for the same model at once load
it once. A setting the cache does not hold costs a build first (the whole
checkpoint is read, or the whole model initialised, whatever the depth):
:meth:`ModelCache.build_estimate` says how long and how much memory, from the
rate its own builds were measured at, so the fair queue counts it.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass

from vit import cost as costs
from vit import validate
from vit.bounded import BoundedDict
from vit.config import HUB_MODELS
from vit.model.checkpoints import cached_path
from vit.model.families import is_trained_here
from vit.model.load import load_model
from vit.model.loaded import LoadedModel

MAX_CACHE_BYTES = int(float(os.environ.get("VIT_MODEL_CACHE_GB", "3")) * 1e9)
MAX_CACHE_MODELS = int(os.environ.get("VIT_MODEL_CACHE_SIZE", "6"))
_BIG = ("vit_l_", "vit_h_")
BUILD_BYTES_PER_S = 0.3e9  # a build's rate until one is measured: a random ViT-B (0.35 GB) built in ~1-3 s on 2 cores
BUILD_COPIES = 2  # a build holds the checkpoint's tensors and the model's at once


@dataclass(frozen=True)
class Build:
    """What building a model costs before its run: seconds, and the peak bytes it holds meanwhile."""

    seconds: float = 0.0
    nbytes: int = 0


def build_cost(weights_bytes: int, bytes_per_s: float) -> Build:
    """A build of a model whose full checkpoint holds ``weights_bytes`` (every layer: a shallow setting is cut
    from the whole), at ``bytes_per_s``."""
    return Build(weights_bytes / bytes_per_s, BUILD_COPIES * weights_bytes)


class ModelCache:
    def __init__(self, max_bytes: int = MAX_CACHE_BYTES, max_models: int = MAX_CACHE_MODELS, dtype: str = "float32"):
        self.dtype = dtype  # every model's precision: "float32", "bfloat16" or "auto" (vit.model.precision)
        self.max_bytes = max_bytes
        self.max_models = max_models
        self._models: OrderedDict[tuple, LoadedModel] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[tuple, threading.Lock] = {}
        self.loads = 0  # how many times a model was built (tests count it)
        self.build_rate = BUILD_BYTES_PER_S  # checkpoint bytes built per second, as measured here

    @staticmethod
    def key(setting: validate.Setting | str, weights: str = "imagenet", patch_size=None, depth=None) -> tuple:
        """``(name, weights, patch_size, depth)``: every spelling of a setting is one key.

        ``setting``: a :class:`vit.validate.Setting` (valid already), or a model name validated here
        with ``patch_size`` and ``depth``.
        """
        s = setting if isinstance(setting, validate.Setting) else validate.setting(setting, patch_size, depth)
        return (s.name, weights, s.patch_size, s.depth)

    def get(self, setting: validate.Setting | str, weights: str = "imagenet", patch_size=None, depth=None,
            progress=None) -> LoadedModel:
        """The model for a setting (a :class:`LoadedModel`), loaded once and kept while it fits."""
        key = self.key(setting, weights, patch_size, depth)
        with self._lock:
            loaded = self._models.get(key)
            if loaded is not None and not self._stale(loaded, key):
                self._models.move_to_end(key)
                return loaded
            self._models.pop(key, None)
            gate = self._loading.setdefault(key, threading.Lock())
        with gate:
            with self._lock:
                if key in self._models:
                    return self._models[key]
            started = time.perf_counter()
            loaded = load_model(*key, progress=progress, dtype=self.dtype)
            rate = _full_weights_bytes(key[0]) / max(time.perf_counter() - started, 1e-3)
            with self._lock:
                self.loads += 1
                self.build_rate = (self.build_rate + rate) / 2  # the recent builds count most
                self._models[key] = loaded
                self._loading.pop(key, None)
                self._evict(keep=key)
            return loaded

    def holds(self, setting: validate.Setting, weights: str = "imagenet") -> bool:
        """Whether a request for ``setting`` finds its model here (no build)."""
        key = self.key(setting, weights)
        with self._lock:
            loaded = self._models.get(key)
        return loaded is not None and not self._stale(loaded, key)

    def build_estimate(self, setting: validate.Setting, weights: str = "imagenet") -> Build:
        """What a request for ``setting`` costs before its run: nothing if the model is here, else a build."""
        if self.holds(setting, weights):
            return Build()
        return build_cost(_full_weights_bytes(setting.name), self.build_rate)

    @staticmethod
    def _stale(loaded: LoadedModel, key: tuple) -> bool:
        """A random fallback for "imagenet" is stale once the checkpoint has been fetched."""
        if is_trained_here(key[0]) or key[1] != "imagenet" or loaded.weights != "random":
            return False  # weights shipped in assets/, or asked for as they are: nothing is fetched later
        if key[0] in HUB_MODELS:  # a Hub model: once its weights are in the Hub cache
            from vit.model import hub  # noqa: PLC0415

            return hub.is_cached(key[0])
        return cached_path(key[0]).is_file()

    def _evict(self, keep: tuple) -> None:
        def total() -> int:
            return sum(m.nbytes for m in self._models.values())

        while len(self._models) > 1 and (len(self._models) > self.max_models or total() > self.max_bytes):
            victims = [k for k in self._models if k != keep]
            big = [k for k in victims if k[0].startswith(_BIG)]
            del self._models[(big or victims)[0]]  # oldest big one first, else the oldest

    def models(self) -> list[LoadedModel]:
        """The models held now (a snapshot)."""
        with self._lock:
            return list(self._models.values())

    def __len__(self) -> int:
        return len(self._models)

    def __contains__(self, key) -> bool:
        return key in self._models


def _full_weights_bytes(name: str) -> int:
    """The whole checkpoint of a family, every layer at its own patch size (what a build reads)."""
    return costs.estimate(name).weights_bytes


class AnalysisStore:
    """The analyses a server keeps for its users' display-only changes, bounded in bytes.

    A browser tab holds only a key; the analysis itself lives here, least recently
    used first out, so thirty tabs at patch size 4 cannot take the server's memory; one that no
    tab can show any more is dropped at once (:meth:`drop`, :func:`vit.ui.state.show`).
    """

    def __init__(self, max_bytes: int = int(float(os.environ.get("VIT_APP_STATE_GB", "3")) * 1e9)):
        self.max_bytes = max_bytes
        self._items = BoundedDict(sys.maxsize, max_size=max_bytes, size=lambda a: a.nbytes)
        self._lock = threading.Lock()

    def put(self, analysis) -> str:
        key = uuid.uuid4().hex
        with self._lock:
            self._items[key] = analysis  # the least recently used go while over max_bytes; the newest stays
        return key

    def get(self, key):
        """The analysis for ``key``, or None if it was never kept or has been dropped."""
        with self._lock:
            return self._items.get(key) if isinstance(key, str) else None

    def drop(self, key) -> int:
        """Forget the analysis of ``key`` at once (nothing can show it any more); returns the bytes it held."""
        with self._lock:
            analysis = self._items.pop(key, None) if isinstance(key, str) else None
        return 0 if analysis is None else analysis.nbytes

    def keys(self) -> set[str]:
        """The keys held now (a snapshot)."""
        with self._lock:
            return set(self._items)

    @property
    def nbytes(self) -> int:
        with self._lock:
            return self._items.total_size()

    def __len__(self) -> int:
        return len(self._items)
