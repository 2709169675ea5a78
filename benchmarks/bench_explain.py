"""Issue 11: what "Why this class?" costs against the bare forward pass (part of bench.py's run).

    python benchmarks/bench_explain.py                 # ViT-B/16 at P = 16, 5 interleaved repetitions
    python benchmarks/bench.py                         # the whole benchmark prints this table too

Interleaved repetitions ``bare rollout attention grad_rollout gradcam curve bare ...``; for each
method the median over repetitions of its ratio to the bare forward of the same repetition:

* ``bare``: ``model(x)`` under ``torch.inference_mode()``, fused attention: the floor;
* ``rollout``, ``attention``, ``grad_rollout``, ``gradcam``: ``vit.explain(model, image, method)``,
  the image's preprocessing included (as ``analyze`` in bench.py);
* ``curve``: ``vit.perturbation_curve(model, image, map, target, steps=10)`` after the explanation, as
  "Test it" follows the map: one deletion curve of 11 points, of which 9 images run in one batch (the
  unperturbed photo's probability is the explanation's own, the all-mean image's the model's own).

Targets (issue 11): grad_rollout and gradcam at most 3.5x the bare forward, a 10-step curve at most 8x.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import vit

IMAGE = ROOT / "assets" / "cat.jpg"
METHODS = ("bare", "rollout", "attention", "grad_rollout", "gradcam", "curve")
TARGETS = {"grad_rollout": 3.5, "gradcam": 3.5, "curve": 8.0}  # × bare, at P = 16


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def run(family: str = "vit_b_16", patch_size: int = 16, depth: int | None = None, repeat: int = 5,
        device: str | None = None) -> dict:
    """Interleaved timings of every explanation method and a curve; medians and ratios to the bare forward."""
    from vit.images import load_image  # noqa: PLC0415

    model = vit.load_model(family, weights="random", patch_size=patch_size, depth=depth, device=device)
    image = load_image(IMAGE)
    x = model.preprocess(image).to(model.device)
    e = vit.explain(model, image, method="grad_rollout")

    def bare():
        with torch.inference_mode():
            return model(x)

    calls = {"bare": bare, "curve": lambda: vit.perturbation_curve(model, image, e.map, e.target, steps=10)}
    for method in METHODS[1:-1]:
        calls[method] = lambda m=method: vit.explain(model, image, method=m)
    for fn in calls.values():  # warm-up
        fn()
    raw: dict[str, list[float]] = {m: [] for m in METHODS}
    for rep in range(repeat):
        for method in METHODS:
            gc.collect()
            _sync()
            t0 = time.perf_counter()
            calls[method]()
            _sync()
            raw[method].append((time.perf_counter() - t0) * 1e3)
        print(f"  explain rep {rep + 1}/{repeat}: " + ", ".join(f"{m} {raw[m][-1]:.0f}" for m in METHODS) + " ms",
              flush=True)
    ratios = {m: [v / b for v, b in zip(raw[m], raw["bare"])] for m in METHODS[1:]}
    median_ratio = {m: float(statistics.median(v)) for m, v in ratios.items()}
    return {
        "model": family, "patch_size": patch_size, "depth": model.config.num_layers,
        "tokens": model.config.num_tokens, "repeat": repeat, "raw_ms": raw,
        "median_ms": {m: float(statistics.median(v)) for m, v in raw.items()},
        "median_ratio": median_ratio,
        "targets": {m: {"target": limit, "measured": median_ratio[m], "met": median_ratio[m] <= limit}
                    for m, limit in TARGETS.items()},
    }


def table(r: dict) -> str:
    """The results as Markdown, then each target met / NOT met."""
    m, x = r["median_ms"], r["median_ratio"]
    lines = ["| config | bare ms | " + " | ".join(f"{k} ms (× bare)" for k in METHODS[1:]) + " |",
             "|---|---:|" + "---:|" * (len(METHODS) - 1),
             f"| {r['model']} P={r['patch_size']} (T={r['tokens']}, L={r['depth']}) | {m['bare']:.0f} | "
             + " | ".join(f"{m[k]:.0f} ({x[k]:.2f}×)" for k in METHODS[1:]) + " |", ""]
    for k, t in r["targets"].items():
        lines.append(f"- target {k} × bare at P={r['patch_size']}: {t['measured']:.2f} vs ≤ {t['target']} — "
                     f"{'met' if t['met'] else 'NOT met'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="vit_b_16")
    p.add_argument("--patch-size", type=int, default=16)
    p.add_argument("--depth", type=int, default=None)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    r = run(args.model, args.patch_size, args.depth, args.repeat)
    print(table(r))
    if args.json:
        args.json.write_text(json.dumps(r, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
