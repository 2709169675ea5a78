"""Issue 52: which class-specific map points at the asked shape? The table that chooses the Why? tab's default.

    python benchmarks/explanations.py                     # 100 pairs (200 questions), 200 one-shape drawings, timings
    python benchmarks/explanations.py --pairs 20 --single 20 --repeat 3   # a quick look

On the shapes model trained here (``assets/vit_tiny_shapes.pth``), unchanged:

* **two shapes**: the first ``--pairs`` drawings of ``benchmarks/independent_shapes.py``'s pair stream (filled,
  hand-drawn, mouse-traced; drawn by rules the model never saw), each of the two classes asked in turn. The
  pointing game by two rules: "any", the map's brightest patch holds any pixel of the asked shape
  (``faithfulness.pointing_hit``); "≥ 25 %", that patch is at least a quarter covered by it. 95 % bootstrap
  interval over drawings for "any".
* **one shape**: ``faithfulness``'s one-shape drawings (its seed): the pointing game, and the
  deletion and insertion AUCs (10 steps, mean baseline) of each map.
* **ms per map**: the median of ``--repeat`` interleaved rounds, on the shapes model at P = 8 and on ViT-B/16 at
  P = 16 (random weights: the time does not depend on them) in float32 and bfloat16, beside the bare forward.

A row is a method and its question: "vs" rows explain logit[A] - logit[B], B the strongest other class.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import faithfulness  # benchmarks/, beside this file
import independent_shapes

import vit
from vit import shapes
from vit.explanations.methods import AUTO
from vit.explanations.perturb import perturbation_curves

ROWS = (("attnlrp", AUTO), ("attnlrp", None), ("occlusion", None), ("grad_rollout", None), ("grad_rollout", AUTO),
        ("gradcam", None), ("gradcam", AUTO), ("rollout", None), ("attention", None))
COVERED = 0.25  # the stricter rule: the brightest patch at least this share the asked shape's


def row_name(method: str, versus) -> str:
    return method + (" vs" if versus else "")


def two_shapes(loaded, pairs: int) -> dict:
    """Pointing on the independent pairs: {row: {"any": [hits per drawing], "covered": [...]}}."""
    rng = np.random.default_rng([independent_shapes.SEED, 2])  # the stream independent_shapes.evaluate_pairs reads
    hits = {row_name(*r): {"any": [], "covered": []} for r in ROWS}
    for _ in range(pairs):
        pair = independent_shapes.draw_pair(rng, int(rng.choice((64, 128, 256))))
        inp = loaded.input(pair.image)
        for label, mask in zip(pair.labels, pair.masks):
            coverage = faithfulness.patch_coverage(mask, mask.shape[0] // loaded.config.grid_size)
            for method, versus in ROWS:
                saliency = vit.explain(loaded, inp, method, label, versus=versus).map
                peak = int(saliency.flatten().argmax())
                hits[row_name(method, versus)]["any"].append(faithfulness.pointing_hit(saliency, coverage))
                hits[row_name(method, versus)]["covered"].append(bool(coverage.flatten()[peak] >= COVERED))
    return hits


def interval(hits: list[bool], per: int = 2, draws: int = 2000) -> tuple[float, float]:
    """95 % bootstrap interval of the hit rate, resampling drawings (``per`` questions each)."""
    by_drawing = np.asarray(hits, dtype=float).reshape(-1, per).mean(axis=1)
    rng = np.random.default_rng(0)
    means = by_drawing[rng.integers(0, len(by_drawing), (draws, len(by_drawing)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def one_shape(loaded, single: int) -> dict:
    """{row: (pointing, deletion AUC, insertion AUC)} on one-shape drawings, each explaining its true class."""
    images, labels, masks = shapes.sample(single, faithfulness.EVAL_SEED, loaded.config.image_size)
    raw = {row_name(*r): np.full((1, 3), np.nan) if not single else [] for r in ROWS}
    for image, label, mask in zip(images, labels, masks):
        coverage = faithfulness.patch_coverage(mask, loaded.config.patch_size)
        inp = loaded.input(image)
        for method, versus in ROWS:
            e = vit.explain(loaded, inp, method, label, versus=versus)
            curves = perturbation_curves(loaded, inp, e, label, steps=10)
            raw[row_name(method, versus)].append((faithfulness.pointing_hit(e.map, coverage),
                                                  curves["deletion", "saliency"].auc,
                                                  curves["insertion", "saliency"].auc))
    return {k: tuple(float(v) for v in np.mean(rows, axis=0).reshape(3)) for k, rows in raw.items()}


def timings(name: str, patch_size: int, dtype: str, repeat: int) -> dict:
    """Median ms per map of each row and of the bare forward, interleaved rounds."""
    loaded = vit.load_model(name, weights="imagenet" if name == "vit_tiny_shapes" else "random",
                            patch_size=patch_size, dtype=dtype, device="cpu")
    image = ROOT / "assets" / ("shapes-heart_and_circle.png" if name == "vit_tiny_shapes" else "cat.jpg")
    inp = loaded.input(image)
    torch.set_num_threads(torch.get_num_threads())

    def bare():
        with torch.inference_mode():
            loaded.module(inp.x)

    calls = {"bare": bare} | {row_name(m, v): (lambda m=m, v=v: vit.explain(loaded, inp, m, versus=v)) for m, v in ROWS}
    for fn in calls.values():
        fn()
    raw = {k: [] for k in calls}
    for _ in range(repeat):
        for k, fn in calls.items():
            t0 = time.perf_counter()
            fn()
            raw[k].append((time.perf_counter() - t0) * 1e3)
    return {k: float(statistics.median(v)) for k, v in raw.items()}


def markdown(two: dict, one: dict, times: dict) -> str:
    heads = " | ".join(f"ms {k}" for k in times)
    lines = ["| method | two shapes, any ↑ | two shapes, ≥ 25 % ↑ | one shape ↑ | deletion ↓ | insertion ↑ | "
             f"{heads} |",
             "|---|---:|---:|---:|---:|---:|" + "---:|" * len(times)]
    for r in ROWS:
        k = row_name(*r)
        low, high = interval(two[k]["any"])
        ms = " | ".join(f"{t[k]:.1f}" for t in times.values())
        lines.append(f"| `{k}` | {np.mean(two[k]['any']):.1%} [{low:.1%}, {high:.1%}] | "
                     f"{np.mean(two[k]['covered']):.1%} | {one[k][0]:.1%} | {one[k][1]:.3f} | {one[k][2]:.3f} | {ms} |")
    lines.append("| bare forward | | | | | | " + " | ".join(f"{t['bare']:.1f}" for t in times.values()) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pairs", type=int, default=100, help="two-shape drawings (two questions each)")
    p.add_argument("--single", type=int, default=200, help="one-shape drawings")
    p.add_argument("--repeat", type=int, default=7, help="interleaved rounds of the timings (0: none)")
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    torch.manual_seed(0)
    loaded = vit.load_model("vit_tiny_shapes", device="cpu")
    two, one = two_shapes(loaded, args.pairs), one_shape(loaded, args.single)
    times = {}
    if args.repeat:
        for name, patch_size in (("vit_tiny_shapes", 8), ("vit_b_16", 16)):
            for dtype in ("float32", "bfloat16"):
                times[f"{name} P={patch_size} {dtype}"] = timings(name, patch_size, dtype, args.repeat)
    print(markdown(two, one, times))
    if args.json:
        args.json.write_text(json.dumps({"two": two, "one": one, "times": times}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
