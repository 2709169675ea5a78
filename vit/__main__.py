"""The command line, ``python -m vit``: analyze, explain, intervene, lesson, download, train-shapes. A bad request
prints one line on stderr and exits with status 2; options and output paths are checked before any work."""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import sys
import tempfile
import unicodedata
from pathlib import Path

from vit import validate
from vit.config import DISPLAY_NAMES, HUB_MODELS, PRESETS, TRAINED_HERE
from vit.errors import InputError
from vit.explanations.methods import AUTO, DEFAULT_METHOD, METHODS
from vit.images import load_image
from vit.views import base, whatif, why
from vit.views import registry as pictures
from vit.views.registry import Display


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, as for our own errors
        raise InputError(message)


def _progress(label: str):
    state = {"last": -1}

    def report(done: int, total: int) -> None:
        pct = int(100 * done / total) if total else -1
        if pct != state["last"]:
            state["last"] = pct
            size = f"{done / 1e6:.0f}/{total / 1e6:.0f} MB" if total else f"{done / 1e6:.0f} MB"
            print(f"\rdownloading {label}: {size} ({max(pct, 0)}%)", end="", file=sys.stderr, flush=True)
        if total and done >= total:
            print(file=sys.stderr)

    return report


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m vit", description="ViT Anatomy: look inside a Vision Transformer.")
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("analyze", help="analyse one image")
    a.add_argument("image", help="path of a JPEG/PNG/WebP/GIF/BMP/TIFF image")
    _model_options(a)
    a.add_argument("--top-k", default=None, help="how many predictions (1-20; default 5, or every class if fewer)")
    a.add_argument("--head-fusion", default="mean", help="mean, max or min (rollout)")
    a.add_argument("--discard-ratio", default=0.0, help="rollout discard ratio, 0 to 0.99")
    a.add_argument("--json", action="store_true", help="print one JSON object")
    a.add_argument("--out", default=None, help="folder for captioned PNGs of every view: patch grid, rollout, "
                                               "query patch, heads, layers, early exit")
    e = sub.add_parser("explain", help="why this class? an explanation map for any class, and a test of it")
    e.add_argument("image", help="path of a JPEG/PNG/WebP/GIF/BMP/TIFF image")
    _model_options(e)
    e.add_argument("--method", default=DEFAULT_METHOD, help=_METHOD_NAMES)
    e.add_argument("--target", default=None, help="the class to explain: an index or a class name (default: top-1)")
    e.add_argument("--versus", default=AUTO, help=f"why the target rather than this class ({_CONTRASTIVE}): auto "
                                                  "(default: the strongest other class), none (the target alone), an "
                                                  "index or a class name")
    e.add_argument("--gradcam-layer", default=None, help="gradcam: the block 1..L whose norm1 output is read "
                                                         "(default: the best on the shapes' ground truth for "
                                                         "vit_tiny_shapes, the block before the last elsewhere)")
    e.add_argument("--curves", action="store_true", help="also the deletion and insertion curves (and random order)")
    e.add_argument("--steps", default=10, help="curve steps: fractions 0, 1/steps, ..., 1 (default 10)")
    e.add_argument("--baseline", default="mean", help="what replaces a patch in the curves: mean (default) or blur")
    e.add_argument("--json", action="store_true", help="print one JSON object")
    e.add_argument("--out", default=None, help="folder for explanation.png (and curves.png with --curves)")
    _intervene_parser(sub)
    d = sub.add_parser("download", help="fetch pretrained weights into the torch hub cache for offline use")
    d.add_argument("models", nargs="*", help=f"models (default: all of {', '.join(_DOWNLOADABLE)}), or Hugging Face "
                                              "Hub repository ids (timm/vit_tiny_patch16_224.augreg_in21k_ft_in1k)")
    _train_parser(sub)
    _lesson_parser(sub)
    return p


_DOWNLOADABLE = [name for name in PRESETS if name not in TRAINED_HERE]
_METHOD_NAMES = ", ".join(f"{name} (default)" if name == DEFAULT_METHOD else name for name in METHODS)
_CONTRASTIVE = ", ".join(name for name, method in METHODS.items() if method.contrastive)


def _model_options(p) -> None:
    """The options that choose the model: the same for analyze and explain."""
    p.add_argument("--model", default="vit_b_16", help=f"one of {', '.join(PRESETS)} (default vit_b_16), or a "
                                                         "Hugging Face Hub repository id or folder of a plain ViT")
    p.add_argument("--weights", default="imagenet",
                   help="imagenet (default), random, or a .pth file path; vit_tiny_shapes: trained (its default)")
    p.add_argument("--patch-size", default=None, help="P from 4 to 64, to 32 for vit_tiny_shapes "
                                                      "(default: the checkpoint's)")
    p.add_argument("--depth", default=None, help="keep the first D layers (default: all)")
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    p.add_argument("--dtype", default="float32", help="float32 (default, the reference), bfloat16, or auto "
                                                       "(bfloat16 where this machine computes it faster)")


def _intervene_parser(sub) -> None:
    w = sub.add_parser("intervene", help="what if? take patches away and switch heads off, and see the prediction")
    w.add_argument("image", help="path of a JPEG/PNG/WebP/GIF/BMP/TIFF image")
    _model_options(w)
    w.add_argument("--remove", default=None, metavar="F|I,J,...",
                   help="patches the model does not see: a fraction (0.3 or 30%%) ranked by --order, or patch "
                        "indices (row-major, 0 = top-left: 3,4,17)")
    w.add_argument("--keep", default=None, metavar="F|I,J,...", help="the patches the model sees, as for --remove")
    w.add_argument("--order", default="explanation", help="for a fraction: explanation (the --method map's top "
                                                         "patches, default) or random")
    w.add_argument("--method", default=DEFAULT_METHOD, help=f"the explanation that ranks the patches: {_METHOD_NAMES}")
    w.add_argument("--seed", default=0, help="seeds the random order (default 0)")
    w.add_argument("--ablate", default="", metavar="L:H,...", help="heads to switch off, 1-based (9:5,10:2)")
    w.add_argument("--ablation", default="zero", help="a head off: zero (default) or mean (its mean over the tokens)")
    w.add_argument("--grey", action="store_true", help="also grey the same patches instead (the deletion test's way)")
    w.add_argument("--head-importance", action="store_true",
                   help="also each head switched off alone: the drop in the top-1 probability, an L x h table")
    w.add_argument("--target", default=None, help="the class followed: an index or a name (default: top-1)")
    w.add_argument("--top-k", default=None, help="how many predictions (1-20; default 5, or every class if fewer)")
    w.add_argument("--json", action="store_true", help="print one JSON object")
    w.add_argument("--out", default=None, help="folder for whatif.png (and heads.png with --head-importance)")


def _patches_option(name: str, value: str | None):
    """--remove / --keep: None, a fraction in [0, 1] ("0.3", "30%"), or patch indices ("3,4,17")."""
    if value is None:
        return None
    text = value.strip()
    if text.endswith("%") or ("." in text and "," not in text):
        number = text[:-1] if text.endswith("%") else text
        try:
            fraction = float(number) / (100 if text.endswith("%") else 1)
        except ValueError:
            fraction = math.nan
        if not 0 <= fraction <= 1:
            raise InputError(f"--{name} must be a fraction from 0 to 1 (or 0% to 100%), or patch indices like "
                             f"3,4,17, got {validate.show(value)}")
        return fraction
    parts = [p for p in text.replace(" ", "").split(",") if p]
    if not parts or not all(p.isdigit() for p in parts):
        raise InputError(f"--{name} must be patch indices like 3,4,17 (row-major, 0 = the top-left patch) or a "
                         f"fraction like 0.3, got {validate.show(value)}")
    return [int(p) for p in parts]


def _intervene(args) -> int:
    setting = _model_setting(args)
    remove, keep = _patches_option("remove", args.remove), _patches_option("keep", args.keep)
    if remove is not None and keep is not None:
        raise InputError("give --remove or --keep, not both")
    order = validate.choice("--order", args.order, ("explanation", "random"))
    seed = validate.seed(args.seed)
    from vit.explanations.maps import explain, method_name  # noqa: PLC0415 - torch, after the first checks

    method = method_name(args.method)
    out = None if args.out is None else _out_folder(args.out)
    image, loaded = _image_and_model(args, setting)
    from vit.interventions.run import head_importance, head_pairs, intervene, ranked  # noqa: PLC0415

    cfg = loaded.config
    ablated = head_pairs(args.ablate, cfg.num_layers, cfg.num_heads)
    inp = loaded.input(image)
    for name, value in (("remove", remove), ("keep", keep)):
        if isinstance(value, float):  # a fraction: ranked by the explanation or at random
            import torch  # noqa: PLC0415

            saliency = (torch.zeros(cfg.grid_size, cfg.grid_size) if order == "random"
                        else explain(loaded, inp, method=method, target=args.target).map)
            chosen = ranked(saliency, value, order, seed)
            remove, keep = (chosen, None) if name == "remove" else (None, chosen)
    w = intervene(loaded, inp, keep=keep, remove=remove, ablate=ablated, ablation=args.ablation, top_k=args.top_k,
                  target=args.target, grey=args.grey)
    drops = head_importance(loaded, inp, target=w.target, ablation=w.ablation) if args.head_importance else None
    written = []
    if out:
        shown = Display()
        base.captioned(whatif.intervention_view(w, shown.opacity, shown.cmap)).save(out / "whatif.png")
        written.append(out / "whatif.png")
        if drops is not None:
            grid = whatif.HeadGrid(cfg.num_layers, cfg.num_heads, w.ablated, drops, w.label, w.ablation)
            base.captioned(whatif.head_grid_view(grid, shown.cmap)).save(out / "heads.png")
            written.append(out / "heads.png")
    if args.json:
        doc = {**w.to_dict(), "weights": loaded.weights, "status": loaded.status, "timings_ms": w.timings_ms}
        if drops is not None:
            doc["head_importance"] = drops.tolist()
        print(_strict_json(doc))
    else:
        _say(loaded.status)
        taken = whatif.change_words(w) or "nothing taken away"
        print(f"what if: {taken}")
        print(f"p({w.label}): {w.prob_before:.2%} -> {w.prob_after:.2%}"
              + ("" if w.grey_prob is None else f" (grey fill instead: {w.grey_prob:.2%})"))
        for before, after in zip(w.topk_before, w.topk):
            print(f"  {before.prob:7.2%}  {before.label:<24} {after.prob:7.2%}  {after.label}")
        if drops is not None:
            print(f"head importance (drop in p({w.label}) with each head alone off; rows: layers, columns: heads):")
            for l, row in enumerate(drops, 1):
                print(f"  {l:>3} " + " ".join(f"{v:+.3f}" for v in row))
    for path in written:
        _say(f"wrote {path}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _train_parser(sub) -> None:
    t = sub.add_parser("train-shapes", help="train vit_tiny_shapes from scratch on drawn shapes (minutes, no download)")
    t.add_argument("--out", default=None, help="the .pth to write, the .json goes beside it "
                                               "(default assets/vit_tiny_shapes.pth)")
    t.add_argument("--recipe", default="sketch", choices=("sketch", "mixed", "plain"),  # train.SHIPPED, .RECIPES
                   help="sketch (default): the shipped file's, drawings plain, varied and sketched with a pen, fixed "
                        "steps (about 40 minutes on a 2-core CPU); mixed: the file before it, no sketches (15 "
                        "minutes); plain: one plain shape per drawing, a 15-minute budget")
    t.add_argument("--epochs", default=None, help="passes over the drawn training set (default: the recipe's, "
                                                  "28 sketch, 18 mixed, 40 plain)")
    t.add_argument("--seed", default=0, help="seeds the drawings, the init and the order (default 0)")
    t.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    t.add_argument("--minutes", default=None, help="a time budget of the training loop: the schedule fits it, and "
                                                   "the result depends on the machine (default: the recipe's, 15 "
                                                   "for plain, none for the others)")


def _train_shapes(args) -> int:
    epochs = None if args.epochs is None else validate.epochs(args.epochs)
    seed = validate.seed(args.seed)
    minutes = None if args.minutes is None else validate.minutes(args.minutes)
    _check_device(args.device)
    out = _pth_out(args.out)  # before training: a place it cannot write is refused now, not after minutes
    _check_cuda(args.device)
    from vit.model.train import RECIPES, train_shapes  # noqa: PLC0415 - torch, after the checks

    meta = train_shapes(out, epochs, seed, args.device, settings=RECIPES[args.recipe], minutes=minutes)
    acc = meta["accuracy"]
    native = str(meta["config"]["patch_size"])
    cut = " (the time budget ended it)" if meta["steps"] < meta["steps_planned"] else ""
    print(f"{meta['display_name']}: trained in {meta['training_time_s']:.0f} s on {meta['device']}, "
          f"{meta['steps']} of {meta['steps_planned']} steps{cut}; "
          f"accuracy at P = {native}: {acc['patch_size'][native]:.1%} on {meta['eval']['images']} fresh drawings")
    print("by patch size: " + ", ".join(f"{p}: {a:.1%}" for p, a in acc["patch_size"].items()))
    print("by depth:      " + ", ".join(f"{d}: {a:.1%}" for d, a in acc["depth"].items()))
    _say(f"wrote {meta['weights']['file']} (sha256 {meta['weights']['sha256'][:12]}...) and its .json")
    return 0
def _out_folder(value: str) -> Path:
    """The ``--out`` folder, created now: an impossible one is refused before any work is done."""
    if not value.strip():
        raise InputError("--out must name a folder, got an empty name")
    out = Path(value)
    try:
        if out.exists() and not out.is_dir():
            raise InputError(f"--out must be a folder, but {str(out)!r} is a file")
        out.mkdir(parents=True, exist_ok=True)
        writable = os.access(out, os.W_OK)
    except OSError as exc:
        raise InputError(f"--out: cannot create the folder {_short(out)!r} ({_os_reason(exc, out)})") from None
    if not writable:
        raise InputError(f"--out: cannot write into the folder {str(out)!r} (permission denied)")
    return out


def _pth_out(value: str | None) -> Path | None:
    """``train-shapes --out``: a .pth path whose folder can take the .pth and the .json, checked before training."""
    if value is None:
        return None
    if not value.endswith(".pth"):
        raise InputError(f"--out must be a .pth path, got {value!r}")
    return _file_out(value, ".pth", beside=".json")


def _file_out(value: str, suffix: str, beside: str | None = None) -> Path:
    """An ``--out`` file (and one ``beside`` it): its folder created and written to now, before any work."""
    out = Path(value)
    try:
        if out.is_dir():
            raise InputError(f"--out must be a {suffix} file, but {_short(out)!r} is a folder")
        out.parent.mkdir(parents=True, exist_ok=True)
        _check_name_fits(out.with_suffix(beside) if beside else out)
        with tempfile.TemporaryFile(dir=out.parent):  # the one sure test: write a file there
            pass
    except OSError as exc:
        raise InputError(f"--out: cannot write {_short(out)!r} ({_os_reason(exc, out)})") from None
    return out


def _check_name_fits(path: Path) -> None:
    """Raise ENAMETOOLONG for a file name the folder's file system cannot hold (the .json is one longer)."""
    try:
        limit = os.pathconf(path.parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    if len(os.fsencode(path.name)) > limit:
        raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG))


def _os_reason(exc: OSError, path: Path) -> str:
    if exc.errno == errno.ENAMETOOLONG and any(len(os.fsencode(part)) > 255 for part in path.parts):
        return "a name in the path is too long: at most 255 bytes per name"
    if exc.errno == errno.ENAMETOOLONG:
        return "the path is too long"
    if exc.errno in (errno.EEXIST, errno.ENOTDIR):  # mkdir under a file: /dev/null/x.pth says "File exists"
        return "a part of the path is a file, not a folder"
    return exc.strerror or str(exc)


def _short(path: Path, limit: int = 80) -> str:
    """A path cut for a message: a 5,000-character --out is not printed whole."""
    text = str(path)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _printable(text: str) -> str:
    """The text with control characters escaped (``\x1b`` for ESC): a file name cannot drive the terminal."""
    return "".join(ch.encode("unicode_escape").decode("ascii") if unicodedata.category(ch) in ("Cc", "Cf")
                   else ch for ch in text)


def _say(text: str, file=None) -> None:
    print(_printable(text), file=file or sys.stdout)


def _strict_json(doc) -> str:
    """One JSON object as RFC 8259 has it: NaN and infinities (a broken model) written as null."""
    return json.dumps(_finite_or_null(doc), allow_nan=False)


def _finite_or_null(value):
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite_or_null(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_null(v) for v in value]
    return value


def _check_finite_weights(loaded, weights: str) -> None:
    """Refuse a model whose weights hold NaN or infinity: every output would be NaN."""
    import torch  # noqa: PLC0415 - torch is already loaded by load_model

    tensors = [*loaded.module.parameters(), *loaded.module.buffers()]
    bad = sum(int((~torch.isfinite(t)).sum()) for t in tensors if t.is_floating_point())
    if bad:
        total = sum(t.numel() for t in tensors)
        raise InputError(f"--weights {weights!r}: expected finite numbers, got {bad:,} NaN or infinite values "
                         f"among the model's {total:,} (the checkpoint is broken)")


def _is_file(value: str) -> bool:
    try:
        return Path(value).is_file()
    except (OSError, ValueError):  # a name too long, a NUL byte
        return False


def _hub_registered(model: str) -> str:
    """A Hub repository id or folder registered from its config.json (no weights, no torch), any other name as it
    is. The CLI's user is the operator: the app never does this for a name a visitor typed."""
    from vit.model import hubconfig  # noqa: PLC0415

    if model in PRESETS or not hubconfig.is_hub_name(model):
        return model
    return hubconfig.read_spec(model).name


def _model_setting(args):
    """The model options checked (no torch yet): a bad option fails fast."""
    args.model = _hub_registered(args.model)
    setting = validate.setting(args.model, args.patch_size, args.depth)
    named = ("imagenet", "random", "trained") if setting.name in TRAINED_HERE else ("imagenet", "random")
    if setting.name in HUB_MODELS:
        named = ("imagenet", "pretrained", "random")
    if args.weights not in named and not _is_file(args.weights):
        raise InputError(f"--weights must be {', '.join(named)} or an existing .pth file, "
                         f"got {_short(Path(args.weights))!r}")
    _check_device(args.device)
    validate.dtype(args.dtype)
    return setting


def _check_device(device: str | None) -> None:
    if device is not None and device not in ("cpu", "cuda"):
        raise InputError(f"--device must be cpu or cuda, got {device!r}")


def _check_cuda(device: str | None) -> None:
    import torch  # noqa: PLC0415 - after the checks: bad input fails fast

    if device == "cuda" and not torch.cuda.is_available():
        raise InputError("--device cuda asked for, but no CUDA GPU is available")


def _image_and_model(args, setting):
    """The image (a bad one fails before torch is even imported), then the model, with a warning if untrained."""
    image = load_image(args.image)
    _check_cuda(args.device)
    from vit.model.load import load_setting  # noqa: PLC0415

    loaded = load_setting(setting, args.weights, args.device, progress=_progress(setting.name), dtype=args.dtype)
    _check_finite_weights(loaded, args.weights)
    if loaded.status.startswith("UNTRAINED:"):
        _say(f"warning: {loaded.status_detail}", file=sys.stderr)
    return image, loaded


def _explain(args) -> int:
    from vit.explanations.maps import method_name  # noqa: PLC0415 - torch is imported, but only after the checks below

    setting = _model_setting(args)
    method = method_name(args.method)
    steps = validate.steps(args.steps)
    from vit.explanations.perturb import BASELINES, perturbation_curves  # noqa: PLC0415

    baseline = validate.choice("baseline", args.baseline, BASELINES)
    out = None if args.out is None else _out_folder(args.out)
    image, loaded = _image_and_model(args, setting)
    from vit.explanations.maps import explain  # noqa: PLC0415

    e = explain(loaded, image, method=method, target=args.target, layer=args.gradcam_layer, versus=args.versus)
    curves = perturbation_curves(loaded, image, e.map, e.target, steps, baseline) if args.curves else {}
    written = []
    if out:
        shown = Display()  # the app's display defaults
        base.captioned(why.explanation_view(e, shown.opacity, shown.cmap)).save(out / "explanation.png")
        written.append(out / "explanation.png")
        if curves:
            base.captioned(why.curves_view(e, curves)).save(out / "curves.png")
            written.append(out / "curves.png")
    if args.json:
        doc = {"model": loaded.name, "weights": loaded.weights, "status": loaded.status, "patch_size": e.patch_size,
               "grid": list(e.grid), "method": e.method, "target": e.target, "label": e.label, "prob": e.prob,
               "versus": e.versus, "versus_label": e.versus_label, "map": e.map.tolist(), "timings_ms": e.timings_ms,
               "layer": e.layer}
        for mode in ("deletion", "insertion"):
            if curves:
                c = curves[mode, "saliency"]
                r = curves[mode, "random"]
                doc[mode] = {"fractions": c.fractions, "probs": c.probs, "auc": c.auc, "baseline": c.baseline,
                             "random": {"probs": r.probs, "auc": r.auc}}
        print(_strict_json(doc))
    else:
        _say(loaded.status)
        at = "" if e.layer is None else f", read at block {e.layer}'s norm1"
        rather = "" if e.versus is None else f" rather than {e.versus_label!r} (class {e.versus})"
        print(f"{METHODS[e.method].title} for {e.label!r} (class {e.target}, p = {e.prob:.2%}){rather} on a "
              f"{e.grid[0]}x{e.grid[1]} grid of {e.patch_size}-px patches{at}:")
        top = e.map.flatten().topk(min(5, e.map.numel()))
        for value, index in zip(top.values.tolist(), top.indices.tolist()):
            r, c = divmod(index, e.grid[1])
            print(f"  patch (row {r}, col {c}) = token {index + 1}: {value:.4g}")
        for (mode, order), c in curves.items():
            print(f"{mode:<9} {order + ' order':<15} AUC {c.auc:.3f} ({c.better})  "
                  + " ".join(f"{p:.2f}" for p in c.probs))
    for path in written:
        _say(f"wrote {path}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _analyze(args) -> int:
    setting = _model_setting(args)
    classes = setting.native.num_classes
    top_k = validate.top_k(args.top_k, classes) if classes else 0  # a backbone has nothing to predict
    fusion = validate.head_fusion(args.head_fusion)
    discard = validate.discard_ratio(args.discard_ratio)
    out = None if args.out is None else _out_folder(args.out)  # before the analysis, not after it
    image, loaded = _image_and_model(args, setting)
    from vit.analysis.run import analyze  # noqa: PLC0415

    result = analyze(loaded, image, top_k=top_k, head_fusion=fusion, discard_ratio=discard)
    written = _write_views(result, out) if out else []
    if args.json:
        print(_strict_json(result.to_json()))
    else:
        _say(result.status)
        print(f"input {result.input_size[0]}x{result.input_size[1]}, patch {result.patch_size}, "
              f"grid {result.grid[0]}x{result.grid[1]}, {result.num_tokens} tokens (N+{result.num_prefix_tokens}: "
              f"{', '.join(result.prefix_token_names)} and the patches), depth {result.depth}, {result.dtype}")
        for s in result.stages:
            print(f"  {s.name:<28} {s.notation:<18} {tuple(s.shape)}")
        for p in result.topk:
            print(f"{p.prob:7.2%}  {p.label}")
        if not result.has_classifier:
            print("this model has no classifier (a backbone): no predictions")
    for path in written:  # on stderr under --json, whose stdout is one JSON object
        _say(f"wrote {path}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _write_views(a, out: Path) -> list[Path]:
    """Every view the registry gives a file name, as a captioned PNG drawn as the app first shows it."""
    written = []
    for name in pictures.OUT_PICTURES:
        view = pictures.draw(a, name, pictures.Display())
        path = out / pictures.PICTURES[name].out_file
        base.captioned(view).save(path)
        written.append(path)
    return written


def _lesson_parser(sub) -> None:
    s = sub.add_parser("lesson", help="the lesson (11.4.1 to 11.4.7) on one image as 16:9 slides: a PDF or PNGs")
    s.add_argument("image", help="path of a JPEG/PNG/WebP/GIF/BMP/TIFF image")
    _model_options(s)
    s.add_argument("--out", default=None, help="the .pdf to write (default lesson.pdf); with --format png, a "
                                               "folder for one PNG per step (default lesson/)")
    s.add_argument("--format", default="pdf", help="pdf (default: one page per step, searchable text) or png "
                                                   "(one 1920x1080 picture per step)")
    s.add_argument("--lang", default="en", help="the text's language: en (default) or zh (Simplified Chinese, as the "
                                              "book's Chinese edition; drawn in Noto Sans CJK where installed)")


def _lesson(args) -> int:
    from vit.lesson import export as lesson_export  # noqa: PLC0415 - torch-free; matplotlib only when it writes

    setting = _model_setting(args)
    fmt, lang = lesson_export.file_format(args.format), lesson_export.language(args.lang)
    default = "lesson.pdf" if fmt == "pdf" else "lesson"
    out = _pdf_out(args.out or default) if fmt == "pdf" else _out_folder(args.out or default)  # before the model
    image, loaded = _image_and_model(args, setting)
    from vit.analysis.run import analyze  # noqa: PLC0415

    result = analyze(loaded, image)
    if fmt == "pdf":
        written = [lesson_export.write_pdf(result, out, lang=lang)]
    else:
        written = lesson_export.write_pngs(result, out, lang=lang)
    _say(result.status)
    for path in written:
        _say(f"wrote {path}")
    return 0


def _pdf_out(value: str) -> Path:
    """``lesson --out``: a .pdf path whose folder takes a file, checked before the model runs."""
    if not value.lower().endswith(".pdf"):
        raise InputError(f"--out must be a .pdf path (or use --format png and a folder), got {_short(Path(value))!r}")
    return _file_out(value, ".pdf")


def _download(args) -> int:
    from vit.model.checkpoints import CHECKPOINTS, DownloadError, cached_path, download  # noqa: PLC0415

    hub_ids = [m for m in args.models if m not in PRESETS and "/" in m]
    names = [validate.model_name(m) for m in args.models if m not in hub_ids] or ([] if hub_ids else _DOWNLOADABLE)
    failed = sum(not _download_hub(m) for m in hub_ids)
    for name in names:
        if name in TRAINED_HERE:
            print(f"{DISPLAY_NAMES[name]}: nothing to download, its weights ship in assets/ "
                  f"(retrain with `python -m vit train-shapes`)")
            continue
        if cached_path(name).is_file():
            _say(f"{DISPLAY_NAMES[name]}: already cached at {cached_path(name)}")
            continue
        try:
            path = download(name, progress=_progress(f"{name} ({CHECKPOINTS[name].file_size_mb:.0f} MB)"))
            _say(f"{DISPLAY_NAMES[name]}: saved {path}")
        except DownloadError as exc:
            failed += 1
            _say(f"error: {exc}", file=sys.stderr)
    return 1 if failed else 0


def _download_hub(model: str) -> bool:
    """Prefetch a Hub model's files into the Hugging Face cache; says what happened; False if it failed."""
    from vit.model import hub, hubconfig  # noqa: PLC0415

    spec = hubconfig.read_spec(model)
    if spec.folder is not None:
        _say(f"{spec.display_name}: a local folder, nothing to download")
        return True
    if spec.why_not_read:
        _say(f"error: {spec.why_not_read}; check the network (or unset HF_HUB_OFFLINE) and try again",
             file=sys.stderr)
        return False
    try:
        path = hub.weights_file(spec, progress=_progress(model))
    except hubconfig.FileUnavailable as exc:
        _say(f"error: {exc}; check the network (or unset HF_HUB_OFFLINE) and try again", file=sys.stderr)
        return False
    _say(f"{spec.display_name}: cached at {path}")
    return True


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        commands = {"analyze": _analyze, "explain": _explain, "intervene": _intervene, "download": _download,
                    "train-shapes": _train_shapes, "lesson": _lesson}
        return commands[args.command](args)
    except InputError as exc:
        _say(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
