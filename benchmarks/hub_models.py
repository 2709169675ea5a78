"""The curated Hub models' sizes and analysis times beside ViT-B/16's, on this machine (README, "Your own model").

Random weights of the same shapes (the analysis costs the same as with the real ones; nothing is downloaded:
``HF_HUB_OFFLINE=1`` and an empty Hub cache). Medians of interleaved runs: each round analyses every model
once, in turn, so a noisy moment of the machine falls on all of them alike.

    python benchmarks/hub_models.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("HF_HUB_CACHE", tempfile.mkdtemp(prefix="vit-bench-hub-"))
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import vit  # noqa: E402
from vit.ui import models  # noqa: E402

CAT = ROOT / "assets" / "cat.jpg"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    models.register()
    names = [c.repo for c in models.CURATED] + ["vit_b_16"]
    loaded = {n: vit.load_model(n, weights="random", device="cpu") for n in names}
    for m in loaded.values():  # one warm-up each: first-call allocations are not the model's cost
        vit.analyze(m, CAT)
    times: dict[str, list[float]] = {n: [] for n in names}
    for _ in range(args.rounds):
        for n in names:
            t0 = time.perf_counter()
            vit.analyze(loaded[n], CAT)
            times[n].append(time.perf_counter() - t0)
    base = statistics.median(times["vit_b_16"])
    print("| model | tokens | weights (float32) | analysis, median | × ViT-B/16 |")
    print("|---|---:|---:|---:|---:|")
    for n in names:
        m, t = loaded[n], statistics.median(times[n])
        print(f"| {models.menu_name(n)} | {m.config.num_tokens} | {m.nbytes / 1e6:,.0f} MB | {t:.2f} s | "
              f"{t / base:.2f} |")


if __name__ == "__main__":
    main()
