"""A bounded cache of the models a server's requests share.

Least recently used first out, the big families (ViT-L, ViT-H) before the others, so a classroom flipping
between settings does not reload ViT-B each time and one request for ViT-H does not keep 2.5 GB pinned. Loading
is serialised per key: thirty students asking for one model at once load it once. A setting the cache does not
hold costs a build first (the whole checkpoint, whatever the depth): :meth:`ModelCache.build_estimate` says how
long and how much memory, from the rate its own builds were measured at, so the fair queue counts it.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from vit import cost as costs
from vit.model import weights as weight_files
from vit.model.load import load_setting
from vit.model.loaded import LoadedModel
from vit.serve.analyses import AnalysisStore  # noqa: F401 - moved there (shares per address); read here by tests
from vit.validate import Setting

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
    def key(setting: Setting, weights: str = "imagenet") -> tuple:
        """``(name, weights, patch_size, depth)``."""
        return (setting.name, weights, setting.patch_size, setting.depth)

    def get(self, setting: Setting, weights: str = "imagenet", progress=None) -> LoadedModel:
        """The model for a setting, loaded once and kept while it fits."""
        key = self.key(setting, weights)
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
            loaded = load_setting(setting, weights, progress=progress, dtype=self.dtype)
            rate = costs.checkpoint_bytes(setting.name) / max(time.perf_counter() - started, 1e-3)
            with self._lock:
                self.loads += 1
                self.build_rate = (self.build_rate + rate) / 2  # the recent builds count most
                self._models[key] = loaded
                self._loading.pop(key, None)
                self._evict(keep=key)
            return loaded

    def holds(self, setting: Setting, weights: str = "imagenet") -> bool:
        """Whether a request for ``setting`` finds its model here (no build)."""
        key = self.key(setting, weights)
        with self._lock:
            loaded = self._models.get(key)
        return loaded is not None and not self._stale(loaded, key)

    def build_estimate(self, setting: Setting, weights: str = "imagenet") -> Build:
        """What a request for ``setting`` costs before its run: nothing if the model is here, else a build."""
        if self.holds(setting, weights):
            return Build()
        return build_cost(costs.checkpoint_bytes(setting.name), self.build_rate)

    @staticmethod
    def _stale(loaded: LoadedModel, key: tuple) -> bool:
        """A random fallback for "imagenet" is stale once the weights have been downloaded."""
        return key[1] == "imagenet" and loaded.weights == "random" and weight_files.downloaded(key[0])

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
