"""Which explanation is right? The README's faithfulness table, and the same curves on the example photos.

    python benchmarks/faithfulness.py                       # the shapes table: 200 one-shape + 200 two-shape drawings
    python benchmarks/faithfulness.py --single 20 --two 20  # a quick look
    python benchmarks/faithfulness.py --photos              # + the example photos on ViT-B/16 (cached weights)
    python benchmarks/faithfulness.py --gradcam-layers --record   # + Grad-CAM at every block; into the JSON

Shapes: the ViT trained here (``vit_tiny_shapes``, shipped in ``assets/``), drawings it never trained
on (``EVAL_SEED``); every method explains the drawing's true class (on two-shape drawings each class in turn,
against its own mask; a class-agnostic map can point at only one of the two, 50 % at best), the "random" row the
chance level. Each map is scored by the pointing game (Zhang et al. 2016, "Top-down Neural Attention by Excitation
Backprop"), its mask share, and its deletion and insertion curves (``vit.explanations.perturb``, which test the map
against the model and need no ground truth).

Photos: ViT-B/16 with torchvision's ImageNet weights, each photo's top-1 class explained by every
method, deletion and insertion AUC (and the random order's). Without the weights in the torch hub
cache it says so and skips (``python -m vit download vit_b_16`` fetches them where there is a network).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import vit
from vit import shapes
from vit.explanations.maps import explain, gradcam_layer
from vit.explanations.methods import METHODS
from vit.explanations.perturb import perturbation_curves
from vit.model.loaded import LoadedModel
from vit.model.train import record

PHOTOS = sorted(p for p in (ROOT / "assets").glob("*.jpg"))
RANDOM = "random"  # the chance row: a seeded uniform map, random patch order
EVAL_SEED = 20_000  # drawings never trained on (training used seed 0, its tables seed 10,000)


def patch_coverage(mask: np.ndarray, patch_size: int) -> torch.Tensor:
    """The mask's share of each patch (coverage_p): (H, W) bool -> (rows, cols) float in [0, 1]."""
    rows, cols = mask.shape[0] // patch_size, mask.shape[1] // patch_size
    m = torch.from_numpy(np.ascontiguousarray(mask[: rows * patch_size, : cols * patch_size])).float()
    return m.reshape(rows, patch_size, cols, patch_size).mean(dim=(1, 3))


def pointing_hit(saliency: torch.Tensor, coverage: torch.Tensor) -> bool:
    """Is the map's maximum (first by token index among ties) on a patch holding part of the mask?"""
    return bool(coverage.flatten()[int(saliency.flatten().argmax())] > 0)


def mask_share(saliency: torch.Tensor, coverage: torch.Tensor) -> float:
    """sum_p map_p⁺ coverage_p / sum_p map_p⁺, each patch's value spread evenly over its pixels (0 for a map with no
    positive mass): a signed map (AttnLRP's, occlusion's; below zero: evidence against the class) counts what it
    puts for the class."""
    positive = saliency.clamp(min=0)
    total = float(positive.sum())
    return float((positive * coverage).sum()) / total if total > 0 else 0.0


@dataclass(frozen=True)
class Score:
    """One method's scores over one kind of image (means over the explanations)."""

    method: str  # a METHODS key, "random", or "gradcam@l" (Grad-CAM at block l, beside its default's row)
    images: str  # "one shape" or "two shapes"
    explained: int  # how many (image, class) pairs
    pointing: float  # pointing game hit rate
    share: float  # mean mask share
    deletion: float  # mean deletion AUC (lower = more faithful)
    insertion: float  # mean insertion AUC (higher = more faithful)
    layer: int | None = None  # Grad-CAM: the block whose norm1 output it read


def evaluate_shapes(
    loaded: LoadedModel,
    single: int = 200,
    two: int = 200,
    methods: tuple[str, ...] = tuple(METHODS),
    steps: int = 10,
    baseline: str = "mean",
    seed: int = EVAL_SEED,
    progress: Callable[[int, int], None] | None = None,
    gradcam_layers: tuple[int, ...] = (),
) -> list[Score]:
    """Every method (and the random row) over ``single`` one-shape and ``two`` two-shape drawings.

    Each class is explained as the drawing's true class (not the model's top-1); on two-shape
    drawings both classes are explained, each against its own mask. Grad-CAM runs at its default
    block, and with ``gradcam_layers`` also at each of these blocks (rows of their own).
    """
    size, P = loaded.config.image_size, loaded.config.patch_size
    sets = {"one shape": shapes.sample(single, seed, size), "two shapes": shapes.sample(two, seed + 1, size, two=True)}
    extra = {f"gradcam@{layer}": layer for layer in gradcam_layers}  # row name -> Grad-CAM block
    names = (*methods, *extra, RANDOM)
    jobs = [(kind, image, label, mask)
            for kind, (images, labels, masks) in sets.items()
            for image, label, mask in zip(images, labels, masks)
            for label, mask in (zip(label, mask) if isinstance(label, tuple) else [(label, mask)])]
    raw = {(name, kind): [] for kind in sets for name in names}  # -> [(hit, share, deletion, insertion)]
    generator = torch.Generator().manual_seed(seed)
    for done, (kind, image, label, mask) in enumerate(jobs):
        coverage = patch_coverage(mask, P)
        inp = loaded.input(image)  # decoded and preprocessed once for every method and curve
        explained = {m: explain(loaded, inp, method=m, target=label) for m in methods}
        explained |= {name: explain(loaded, inp, method="gradcam", target=label, layer=layer)
                      for name, layer in extra.items()}
        maps = {m: e.map for m, e in explained.items()}
        maps[RANDOM] = torch.rand(coverage.shape, generator=generator)
        for name, saliency in maps.items():  # an explanation gives its curves their unperturbed point
            curves = perturbation_curves(loaded, inp, explained.get(name, saliency), label, steps, baseline,
                                         orders=("random",) if name == RANDOM else ("saliency",), seed=done)
            order = "random" if name == RANDOM else "saliency"
            raw[name, kind].append((pointing_hit(saliency, coverage),
                                    mask_share(saliency, coverage),
                                    curves["deletion", order].auc, curves["insertion", order].auc))
        if progress:
            progress(done + 1, len(jobs))
    out = []
    for (name, kind), rows in raw.items():
        a = np.asarray(rows, dtype=float).reshape(-1, 4)
        layer = extra.get(name, gradcam_layer(loaded) if name == "gradcam" else None)
        out.append(Score(name, kind, len(rows), *(float(v) for v in a.mean(axis=0)), layer=layer) if len(rows)
                   else Score(name, kind, 0, *([float("nan")] * 4), layer=layer))
    return out


def markdown(scores: list[Score]) -> str:
    """The scores as a Markdown table, one row per method and kind of image."""
    lines = ["| method | images | explained | pointing game ↑ | mask share ↑ | deletion AUC ↓ | insertion AUC ↑ |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for s in scores:
        base = s.method.split("@")[0]
        title = METHODS[base].title if base in METHODS else "random (chance)"
        title += "" if s.layer is None else f", block {s.layer}" + (" (its default)" if base == s.method else "")
        code = base if s.layer is None else f"{base}`, `layer={s.layer}"
        lines.append(f"| {title} (`{code}`) | {s.images} | {s.explained} | {s.pointing:.1%} | {s.share:.1%} | "
                     f"{s.deletion:.3f} | {s.insertion:.3f} |")
    return "\n".join(lines)


def shapes_table(args) -> str:
    loaded = vit.load_model("vit_tiny_shapes")
    t0 = time.perf_counter()

    def progress(done, total):
        if done % 50 == 0 or done == total:
            print(f"  {done}/{total} explained ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)

    layers = tuple(range(1, loaded.config.num_layers + 1)) if args.gradcam_layers else ()
    scores = evaluate_shapes(loaded, args.single, args.two, steps=args.steps, baseline=args.baseline,
                                          progress=progress, gradcam_layers=layers)
    if args.record:
        record("faithfulness", {"single": args.single, "two": args.two, "steps": args.steps,
                                "baseline": args.baseline, "seed": EVAL_SEED,
                                "rows": [asdict(s) for s in scores]})
    return (f"ViT-Tiny shapes (trained here), {args.single} one-shape and {args.two} two-shape drawings "
            f"(seed {EVAL_SEED}), {args.steps}-step curves, {args.baseline} baseline:\n\n"
            + markdown(scores))


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
