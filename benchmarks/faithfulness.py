"""Which explanation is right? The README's faithfulness table, and the same curves on the example photos.

    python benchmarks/faithfulness.py                       # the shapes table: 200 one-shape + 200 two-shape drawings
    python benchmarks/faithfulness.py --single 20 --two 20  # a quick look
    python benchmarks/faithfulness.py --photos              # + the example photos on ViT-B/16 (cached weights)
    python benchmarks/faithfulness.py --gradcam-layers --record   # + Grad-CAM at every block; into the JSON

Shapes: the ViT trained here (``vit_tiny_shapes``, shipped in ``assets/``), drawings it never trained
on (``vit.explanations.faithfulness.EVAL_SEED``); every method explains the drawing's true class (on two-shape
drawings each class in turn, against its own mask). See ``vit/faithfulness.py`` for the scores.

Photos: ViT-B/16 with torchvision's ImageNet weights, each photo's top-1 class explained by every
method, deletion and insertion AUC (and the random order's). Without the weights in the torch hub
cache it says so and skips (``python -m vit download vit_b_16`` fetches them where there is a network).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import vit
from vit.explanations import faithfulness
from vit.explanations.methods import METHODS
from vit.explanations.perturb import perturbation_curves
from vit.model.train import record

PHOTOS = sorted(p for p in (ROOT / "assets").glob("*.jpg"))


def shapes_table(args) -> str:
    loaded = vit.load_model("vit_tiny_shapes")
    t0 = time.perf_counter()

    def progress(done, total):
        if done % 50 == 0 or done == total:
            print(f"  {done}/{total} explained ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)

    layers = tuple(range(1, loaded.config.num_layers + 1)) if args.gradcam_layers else ()
    scores = faithfulness.evaluate_shapes(loaded, args.single, args.two, steps=args.steps, baseline=args.baseline,
                                          progress=progress, gradcam_layers=layers)
    if args.record:
        record("faithfulness", {"single": args.single, "two": args.two, "steps": args.steps,
                                "baseline": args.baseline, "seed": faithfulness.EVAL_SEED,
                                "rows": [asdict(s) for s in scores]})
    return (f"ViT-Tiny shapes (trained here), {args.single} one-shape and {args.two} two-shape drawings "
            f"(seed {faithfulness.EVAL_SEED}), {args.steps}-step curves, {args.baseline} baseline:\n\n"
            + faithfulness.markdown(scores))


def photos_table(args) -> str:
    loaded = vit.load_model(args.photo_model)
    if loaded.weights != "imagenet":
        return (f"Photos: skipped, ImageNet weights for {args.photo_model} are not in the torch hub cache "
                f"(`python -m vit download {args.photo_model}` where there is a network).")
    lines = ["| photo | class | method | deletion AUC ↓ | insertion AUC ↑ | random deletion | random insertion |",
             "|---|---|---|---:|---:|---:|---:|"]
    for photo in args.photo or PHOTOS:
        for method in METHODS:
            e = vit.explain(loaded, photo, method=method)
            c = perturbation_curves(loaded, photo, e.map, e.target, args.steps, args.baseline)
            lines.append(f"| {photo.name} | {e.label} ({e.prob:.0%}) | `{method}` | "
                         f"{c['deletion', 'saliency'].auc:.3f} | "
                         f"{c['insertion', 'saliency'].auc:.3f} | {c['deletion', 'random'].auc:.3f} | "
                         f"{c['insertion', 'random'].auc:.3f} |")
    return f"{loaded.status}; each photo's top-1:\n\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--single", type=int, default=200, help="one-shape drawings (default 200)")
    p.add_argument("--two", type=int, default=200, help="two-shape drawings, each class explained (default 200)")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--baseline", choices=("mean", "blur"), default="mean")
    p.add_argument("--photos", action="store_true", help="also the example photos on ViT-B/16 (ImageNet weights)")
    p.add_argument("--photo-model", default="vit_b_16", help="the model for --photos (default vit_b_16)")
    p.add_argument("--photo", type=Path, action="append", help="a photo for --photos (default: assets/*.jpg)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads (default 1: the shapes model is small, more threads only wait on each other)")
    p.add_argument("--out", type=Path, help="also write the tables to this Markdown file")
    p.add_argument("--gradcam-layers", action="store_true",
                   help="also Grad-CAM at every block (the table its default block is chosen by)")
    p.add_argument("--record", action="store_true",
                   help="also write the shapes table into assets/vit_tiny_shapes.json (its 'faithfulness' entry)")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    parts = [shapes_table(args)]
    if args.photos:
        parts.append(photos_table(args))
    text = "\n\n".join(parts)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
