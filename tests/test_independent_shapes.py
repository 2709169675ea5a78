"""benchmarks/independent_shapes.py (issue 22): drawings by code that shares nothing with vit/shapes.py."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import independent_shapes as ind  # noqa: E402


def test_it_calls_nothing_of_the_training_generator(monkeypatch):
    source = ast.parse((ROOT / "benchmarks" / "independent_shapes.py").read_text())
    named = {a.name for n in ast.walk(source) if isinstance(n, ast.ImportFrom | ast.Import) for a in n.names}
    modules = {n.module for n in ast.walk(source) if isinstance(n, ast.ImportFrom)}
    assert "vit.shapes" not in modules and "shapes" not in named
    import vit.shapes

    for name in dir(vit.shapes):  # and at run time: any call into vit.shapes would raise
        if callable(getattr(vit.shapes, name)) and not name.startswith("__"):
            monkeypatch.setattr(vit.shapes, name, lambda *a, **k: (_ for _ in ()).throw(AssertionError("called")))
    result = ind.evaluate(per_class=1, sizes=(64,))
    assert [r["n"] for r in result["rows"]] == [8, 8, 8]
    assert set(result["by_class"]) == set(ind.CLASSES) and 0.0 <= result["accuracy"] <= 1.0
    assert set(result["by_style"]) <= {"filled", "hand", "mouse"} and "mouse" in result["by_style"]
    pairs = ind.evaluate_pairs(n=3)
    assert pairs["n"] == 3 and 0.0 <= pairs["top_two"] <= 1.0 and set(pairs["pointing"]) == set(ind.POINTERS)


def test_drawings_follow_their_own_rules():
    rng = np.random.default_rng(0)
    for label in range(len(ind.CLASSES)):
        d = ind.draw(rng, label, 128)
        assert d.image.size == (128, 128) and d.image.mode == "RGB" and d.label == label
        assert d.style in ("filled", "hand")
    big = ind.draw(np.random.default_rng(1), 0, 1024)
    assert big.image.size == (1024, 1024)
    for label in range(len(ind.CLASSES)):  # issue 40's mouse strokes: a line on a light canvas, ink where it went
        d = ind.draw_mouse(rng, label, 256)
        x = np.asarray(d.image, dtype=np.float32)
        assert d.image.size == (256, 256) and d.style == "mouse" and d.label == label
        assert x[:3, :3].mean() > 190 and 0.005 < (np.abs(x - x[:3, :3].mean((0, 1))).max(-1) > 60).mean() < 0.5


def test_two_shape_drawings_come_with_where_each_shape_is():
    rng = np.random.default_rng(2)
    styles = set()
    for side in (64, 128, 256):
        for _ in range(8):
            pair = ind.draw_pair(rng, side)
            styles.add(pair.style)
            a, b = pair.masks
            assert pair.image.size == (side, side) and pair.labels[0] != pair.labels[1]
            assert a.shape == b.shape == (side, side) and a.any() and b.any() and not (a & b).any()
            x = np.asarray(pair.image, dtype=np.float32)
            for mask in pair.masks:  # the ink is where the mask says: the shape's pixels differ from around it
                ring = np.zeros_like(mask)
                ys, xs = np.nonzero(mask)
                ring[max(ys.min() - 3, 0):ys.max() + 4, max(xs.min() - 3, 0):xs.max() + 4] = True
                assert np.abs(x[mask].mean(0) - x[ring & ~a & ~b].mean(0)).max() > 10 or pair.style == "mouse"
    assert styles == {"filled", "hand", "mouse"}
    ring = next(p for p in (ind.draw_pair(np.random.default_rng(s), 128) for s in range(200)) if 5 in p.labels)
    mask = ring.masks[ring.labels.index(5)]
    ys, xs = np.nonzero(mask)
    assert not mask[(ys.min() + ys.max()) // 2, (xs.min() + xs.max()) // 2]  # a ring's hole is not the ring
