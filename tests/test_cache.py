"""The server's bounded caches: models (LRU, big ones first out) and kept analyses (LRU by bytes)."""

from __future__ import annotations

import types

import numpy as np
import torch

from vit.config import PRESETS
from vit.model.loaded import LoadedModel
from vit.serve import cache
from vit.validate import setting


def fake_model(name: str, mb: int) -> LoadedModel:
    m = torch.nn.Linear(1, 1)
    m.weight = torch.nn.Parameter(torch.zeros(mb * 2**18))  # mb MB of float32
    return LoadedModel(module=m, config=PRESETS[name], name=name, weights="random", status="", status_detail="",
                       preprocess=None, class_names=[])


def test_model_cache_is_lru_and_evicts_big_models_first(monkeypatch):
    loads = []

    def load(s, weights, progress=None, dtype="float32"):
        loads.append((s.name, s.patch_size))
        return fake_model(s.name, 40 if s.name.startswith("vit_l") else 10)

    monkeypatch.setattr(cache, "load_setting", load)
    c = cache.ModelCache(max_bytes=70 * 2**20, max_models=3)
    b16 = c.get(setting("vit_b_16"), "random")
    assert c.get(setting("ViT-B/16"), "random") is b16 and len(loads) == 1  # a hit, whatever the spelling
    c.get(setting("vit_l_16"), "random")
    c.get(setting("vit_b_32", 24), "random")
    c.get(setting("vit_b_32"), "random")  # 10 + 40 + 10 + 10 MB > 70: ViT-L goes first, though not the oldest
    assert ("vit_l_16", "random", 16, 24) not in c
    assert ("vit_b_16", "random", 16, 12) in c and len(c) == 3
    c.get(setting("vit_b_16", depth=3), "random")  # 4 models > 3: the least recently used goes
    assert ("vit_b_16", "random", 16, 12) not in c
    assert [m.nbytes for m in c.models()] == [10 * 2**20 + 4] * 3  # the fake's 10 MB weight and its bias


def fake_analysis(mb: int):
    return types.SimpleNamespace(nbytes=mb * 2**20, image=np.zeros(1))


def test_analysis_store_is_bounded_and_lru():
    store = cache.AnalysisStore(max_bytes=30 * 2**20, share_bytes=30 * 2**20)  # one address: the LRU alone
    first, second = store.put(fake_analysis(10)), store.put(fake_analysis(10))
    assert store.get(first) is not None  # now the most recently used
    third = store.put(fake_analysis(15))  # 35 MB > 30: the least recently used (second) goes
    assert store.get(second) is None and store.get(first) is not None and store.get(third) is not None
    assert store.nbytes <= 30 * 2**20
    assert store.get("no such key") is None and store.get(None) is None and store.get(["x"]) is None
