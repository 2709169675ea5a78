"""What "What if?" costs (issue 24), in multiples of a bare forward pass of the same model, on this machine.

For each model: the bare forward (``loaded(x)``), ``vit.intervene`` with nothing removed, with 30 % of the patches
removed and two heads off (it runs the unchanged model too, for "before"), the same with the grey-fill comparison,
and ``vit.head_importance`` (h (L + 1) / 2 forward passes' worth, in theory). Random weights of each model's shapes
(nothing is downloaded); medians of interleaved rounds: each round runs every measurement of every model once.

    python benchmarks/whatif.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import vit  # noqa: E402

CAT = ROOT / "assets" / "cat.jpg"
MODELS = (("vit_tiny_shapes", "trained", None), ("vit_b_32", "random", None), ("vit_b_16", "random", None))


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    runs = {}
    for name, weights, patch in MODELS:
        loaded = vit.load_model(name, weights=weights, patch_size=patch, device="cpu")
        inp = loaded.input(CAT)
        n = loaded.config.num_patches
        removed = list(range(0, n, 3))[: round(0.3 * n)]
        heads = [(loaded.config.num_layers, 1), (1, loaded.config.num_heads)]
        runs[name] = {
            "forward": lambda lm=loaded, x=inp.x: torch.inference_mode()(lm)(x),
            "intervene, nothing removed": lambda lm=loaded, i=inp: vit.intervene(lm, i),
            "intervene, 30 % removed, 2 heads off": lambda lm=loaded, i=inp, r=removed, h=heads: vit.intervene(
                lm, i, remove=r, ablate=h),
            "... and the grey-fill comparison": lambda lm=loaded, i=inp, r=removed, h=heads: vit.intervene(
                lm, i, remove=r, ablate=h, grey=True),
            "head importance": lambda lm=loaded, i=inp: vit.head_importance(lm, i),
        }
        for fn in runs[name].values():  # warm-up
            fn()
    times = {(m, k): [] for m in runs for k in runs[m]}
    for _ in range(args.rounds):
        for m, measures in runs.items():
            for k, fn in measures.items():
                times[m, k].append(_timed(fn))
    for m, measures in runs.items():
        cfg = vit.load_model(m, weights="random" if m != "vit_tiny_shapes" else "trained", device="cpu").config
        base = statistics.median(times[m, "forward"])
        theory = cfg.num_heads * (cfg.num_layers + 1) / 2
        print(f"\n{vit.config.display_name(m)}: {cfg.num_layers} layers x {cfg.num_heads} heads, "
              f"{cfg.num_tokens} tokens;"
              f" bare forward {1e3 * base:.1f} ms (median of {args.rounds})")
        print("| measured | median | × bare forward |")
        print("|---|---:|---:|")
        for k in measures:
            t = statistics.median(times[m, k])
            extra = f" (h(L+1)/2 = {theory:.0f})" if k == "head importance" else ""
            print(f"| {k} | {1e3 * t:.0f} ms | {t / base:.1f}{extra} |")


if __name__ == "__main__":
    main()
