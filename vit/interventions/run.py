"""``intervene`` and ``head_importance``: what the model says when it cannot see some patches, or some heads are off.

    >>> import vit
    >>> loaded = vit.load_model("vit_tiny_shapes")
    >>> w = vit.intervene(loaded, "assets/shapes-star.png", remove=[27, 28, 35, 36], ablate=[(4, 1)])
    >>> w.label, w.prob_before, w.prob_after      # the class, its probability before and after
    >>> vit.head_importance(loaded, "assets/shapes-star.png")   # (L, h): the drop when each head alone is off

Patches are numbered row-major from 0 (the top-left patch); (layer, head) pairs from 1, as the app numbers them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from vit import validate
from vit.analysis.record import Prediction
from vit.analysis.rollout import rollout_rows
from vit.analysis.trace import attention_kept
from vit.config import display_name
from vit.cost import check_budget, estimate, fused_itemsize
from vit.errors import InputError
from vit.explanations.maps import require_classifier, target_index
from vit.explanations.perturb import compose, patch_ranking
from vit.interventions import forward
from vit.model.loaded import LoadedModel
from vit.model.partial import classify_from

BATCH_TOKENS = 8192  # images per batch in head importance = this // T: all 12 heads at 197 tokens, 2 at 3,137
SHOWN_INDICES = 8  # a message quotes at most this many patch indices


@dataclass(frozen=True, eq=False)
class Intervention:
    """The model's answer with some patches removed and some heads switched off, beside its answer without."""

    model: str
    display_name: str
    patch_size: int
    depth: int
    num_heads: int
    grid: tuple[int, int]  # (rows, cols) of patches
    image: np.ndarray = field(repr=False)  # (H, W, 3) uint8, the pixels the model sees
    kept: list[int]  # patch indices the model ran on, row-major from 0
    removed: list[int]  # the others
    ablated: tuple[tuple[int, int], ...]  # (layer, head) pairs switched off, 1-based
    ablation: str  # "zero" or "mean"
    target: int  # the class followed: the unchanged model's top-1 unless asked
    label: str
    probs: Tensor = field(repr=False)  # (K,) softmax after the intervention
    probs_before: Tensor = field(repr=False)  # (K,) softmax of the unchanged model on the whole image
    topk: list[Prediction]
    topk_before: list[Prediction]
    rollout: np.ndarray = field(repr=False)  # (rows, cols): the class token's rollout over the kept patches, else NaN
    grey_probs: Tensor | None = field(default=None, repr=False)  # (K,) the same patches greyed instead (or None)
    num_prefix_tokens: int = 1
    prefix_token_names: tuple[str, ...] = ("class",)
    timings_ms: dict = field(default_factory=dict)

    @property
    def prob_before(self) -> float:
        return float(self.probs_before[self.target])

    @property
    def prob_after(self) -> float:
        return float(self.probs[self.target])

    @property
    def grey_prob(self) -> float | None:
        return None if self.grey_probs is None else float(self.grey_probs[self.target])

    @property
    def changed(self) -> bool:
        """Whether anything was taken away."""
        return bool(self.removed or self.ablated)

    def to_dict(self) -> dict:
        """Plain numbers for JSON: the CLI's ``--json`` and the app's API."""
        def preds(items):
            return [{"index": p.index, "label": p.label, "prob": p.prob} for p in items]

        return {"model": self.model, "patch_size": self.patch_size, "depth": self.depth, "grid": list(self.grid),
                "kept": self.kept, "removed": self.removed, "ablated": [list(p) for p in self.ablated],
                "ablation": self.ablation, "target": self.target, "label": self.label,
                "prob_before": self.prob_before, "prob_after": self.prob_after, "grey_prob": self.grey_prob,
                "topk": preds(self.topk), "topk_before": preds(self.topk_before)}


def patch_indices(value, num_patches: int, name: str) -> list[int]:
    """Sorted, distinct patch indices 0..N-1 from an iterable of integers; one sentence naming ``name`` otherwise."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise InputError(f"{name} must be a list of patch indices from 0 to {num_patches - 1} (row-major, "
                         f"0 = the top-left patch), got {validate.show(value)}")
    items = list(value)
    if len(items) > num_patches:
        raise InputError(f"{name} names {len(items)} patches, but the image has {num_patches}")
    bad = [v for v in items if validate.as_integer(v) is None or not 0 <= validate.as_integer(v) < num_patches]
    if bad:
        shown = ", ".join(validate.show(v) for v in bad[:SHOWN_INDICES]) + (", ..." if len(bad) > SHOWN_INDICES else "")
        raise InputError(f"{name} must hold patch indices from 0 to {num_patches - 1} (row-major, 0 = the "
                         f"top-left patch; this image has {num_patches} patches), got {shown}")
    return sorted({validate.as_integer(v) for v in items})


def kept_patches(keep, remove, num_patches: int) -> list[int]:
    """The patches the model runs on: ``keep``, or all but ``remove``, or all; never none."""
    if keep is not None and remove is not None:
        raise InputError("give keep or remove, not both: keep names the patches the model sees, remove the ones "
                         "it does not")
    if keep is not None:
        kept = patch_indices(keep, num_patches, "keep")
    else:
        removed = set(patch_indices(remove, num_patches, "remove") if remove is not None else ())
        kept = [i for i in range(num_patches) if i not in removed]
    if not kept:
        raise InputError(f"at least one patch must stay (this image has {num_patches}): "
                         f"{'keep is empty' if keep is not None else 'remove names every patch'}")
    return kept


def head_pairs(value, num_layers: int, num_heads: int) -> tuple[tuple[int, int], ...]:
    """(layer, head) pairs, 1-based, distinct and sorted; ``"9:5,10:2"`` is read too."""
    if isinstance(value, str):
        value = [part.split(":") for part in value.replace(" ", "").split(",") if part]
    if value is None:
        return ()
    try:
        pairs = [tuple(p) for p in value]
    except TypeError:
        pairs = [()]
    allowed = f"(layer, head) pairs with layer from 1 to {num_layers} and head from 1 to {num_heads}"
    out = set()
    for p in pairs:
        layer, head = (validate.as_integer(p[0]), validate.as_integer(p[1])) if len(p) == 2 else (None, None)
        if layer is None or head is None or not (1 <= layer <= num_layers and 1 <= head <= num_heads):
            shown = ":".join(map(str, p)) if all(isinstance(v, str) for v in p) else validate.show(tuple(p))
            raise InputError(f"ablate must hold {allowed} (this model has {num_layers} layers of {num_heads} heads), "
                             f"got {shown}")
        out.add((layer, head))
    return tuple(sorted(out))


def ranked(saliency: Tensor, fraction, order: str = "explanation", seed: int = 0) -> list[int]:
    """The first ``round(fraction N)`` patches by decreasing ``saliency`` (rows, cols), ties by index, or random:
    what "keep only / remove the top x %" names."""
    fraction = validate.number("fraction", fraction, 0.0, 1.0)
    order = validate.choice("order", order, ("explanation", "random"))
    ranking = patch_ranking(saliency, "saliency" if order == "explanation" else "random", seed)
    return sorted(int(i) for i in ranking[: round(fraction * saliency.numel())])


def _predictions(probs: Tensor, names: list[str], k: int) -> list[Prediction]:
    values, indices = probs.topk(k)
    return [Prediction(int(i), names[i], float(p)) for p, i in zip(values, indices)]


def _on_grid(row: Tensor, kept: list[int], grid: tuple[int, int]) -> np.ndarray:
    """Rollout over the kept patches placed on the (rows, cols) grid, NaN where a patch was removed."""
    heat = np.full(grid[0] * grid[1], np.nan, dtype=np.float32)
    heat[kept] = row.float().cpu().numpy()
    return heat.reshape(grid)


@torch.inference_mode()
def intervene(loaded: LoadedModel, image, keep=None, remove=None, ablate=(), ablation: str = "zero",
              top_k: int | None = None, target=None, grey: bool = False) -> Intervention:
    """Run the model on some of its patches (``keep`` or ``remove``, row-major from 0), with some heads off
    (``ablate``: 1-based (layer, head) pairs), beside the unchanged model: an :class:`Intervention`. ``grey``: also
    run the removed patches greyed to the normalisation mean instead, every token kept (the deletion test's way).
    """
    if not isinstance(loaded, LoadedModel):
        raise TypeError(f"intervene takes what vit.load_model returns (a LoadedModel), got {type(loaded).__name__}")
    require_classifier(loaded)
    cfg, model = loaded.config, loaded.module
    kept = kept_patches(keep, remove, cfg.num_patches)
    ablated = head_pairs(ablate, cfg.num_layers, cfg.num_heads)
    ablation = validate.choice("ablation", ablation, forward.ABLATIONS)
    top_k = validate.top_k(top_k, cfg.num_classes)
    target = target_index(target, loaded.class_names)
    check_budget(estimate(loaded.setting))
    t0 = time.perf_counter()
    inp = loaded.input(image)
    x, grid = inp.x, (cfg.grid_size, cfg.grid_size)  # (1, C, H, W)
    on = forward.heads_on(ablated, cfg.num_layers, cfg.num_heads).to(x.device) if ablated else None
    subset = None if len(kept) == cfg.num_patches else torch.tensor(kept, device=x.device)
    dtype = torch.float32 if fused_itemsize(cfg.num_layers, cfg.num_prefix_tokens + len(kept)) == 4 else torch.float16
    with loaded.lock:
        t1 = time.perf_counter()
        fused = []  # L x (T', T'): each layer's attention fused over the heads still on
        probs = _probs(model, x, subset, on, ablation, fused, dtype)  # (K,)
        # The unchanged model through the same blocks (model(x)'s fused attention rounds otherwise in bfloat16).
        before = probs if subset is None and on is None else _probs(model, x, None, None, ablation)
        t2 = time.perf_counter()
        grey_probs = None
        if grey:
            mask = torch.zeros(1, cfg.num_patches, dtype=torch.bool)
            mask[0, kept] = True
            greyed = compose(x, torch.zeros_like(x), mask, grid, cfg.patch_size)  # (1, C, H, W)
            out = model.embedding(greyed)  # (1, N+1, D): every token, the same heads off
            for l, layer in enumerate(model.encoder.layers):
                out = forward.heads_off(layer, out, None if on is None else on[l], ablation)
            grey_probs = model.classify(out)[0].float().softmax(-1).cpu()
    row = rollout_rows(fused, every_depth=False)[0, cfg.num_prefix_tokens:]  # (n,): the kept patches
    target = int(before.argmax()) if target is None else target
    names = loaded.class_names
    return Intervention(
        model=loaded.name, display_name=display_name(loaded.name), patch_size=cfg.patch_size, depth=cfg.num_layers,
        num_heads=cfg.num_heads, grid=grid, image=inp.view, kept=kept,
        removed=sorted(set(range(cfg.num_patches)) - set(kept)), ablated=ablated, ablation=ablation,
        target=target, label=names[target], probs=probs, probs_before=before, topk=_predictions(probs, names, top_k),
        topk_before=_predictions(before, names, top_k), rollout=_on_grid(row, kept, grid), grey_probs=grey_probs,
        num_prefix_tokens=cfg.num_prefix_tokens, prefix_token_names=cfg.prefix_token_names,
        timings_ms={"preprocess": (t1 - t0) * 1e3, "intervene": (t2 - t1) * 1e3,
                    "total": (time.perf_counter() - t0) * 1e3},
    )


def _probs(model, x: Tensor, subset: Tensor | None, on: Tensor | None, ablation: str, fused: list | None = None,
           dtype: torch.dtype = torch.float32) -> Tensor:
    """The softmax (K,) of the model on the patches ``subset`` (None: all) with the heads ``on`` (None: all), each
    block's attention written out as the tracer computes it; each layer's fused attention appended to ``fused``."""

    def keep(l: int, _out, weights: Tensor) -> None:
        if fused is not None:
            fused.append(forward.fused_over_heads_on(weights[0], None if on is None else on[l]).to(dtype))  # (T', T')

    tokens = forward.embed(model, x, subset)  # (1, P + n, D)
    with attention_kept(model.encoder.layers, keep):
        for l, layer in enumerate(model.encoder.layers):
            tokens = forward.heads_off(layer, tokens, None if on is None else on[l], ablation)
    return model.classify(tokens)[0].float().softmax(-1).cpu()


@torch.inference_mode()
def head_importance(loaded: LoadedModel, image, target=None, ablation: str = "zero",
                    on_layer: Callable[[int, int], None] | None = None,
                    turn: Callable[[], AbstractContextManager] = nullcontext, batch: int | None = None) -> np.ndarray:
    """The drop in the target's probability when each head alone is switched off: (L, h), positive = it helped.
    A head off in layer l re-runs blocks l..L only: h (L + 1) / 2 forward passes' worth. ``turn``: entered around
    each batch of ``batch`` heads, outside the lock, so that a server's other runs go in between."""
    if not isinstance(loaded, LoadedModel):
        raise TypeError(f"head_importance takes what vit.load_model returns (a LoadedModel), "
                        f"got {type(loaded).__name__}")
    require_classifier(loaded)
    cfg, model = loaded.config, loaded.module
    ablation = validate.choice("ablation", ablation, forward.ABLATIONS)
    target = target_index(target, loaded.class_names)
    check_budget(estimate(loaded.setting))
    x = loaded.input(image).x  # (1, C, H, W)
    layers = list(model.encoder.layers)
    L, h = len(layers), cfg.num_heads
    with turn(), loaded.lock:
        streams = [model.embedding(x)]  # streams[l]: block l's input, (1, T, D)
        for layer in layers:
            streams.append(layer(streams[-1]))
        probs = model.classify(streams[-1])[0].float().softmax(-1)  # (K,)
    target = int(probs.argmax()) if target is None else target
    off_one = 1.0 - torch.eye(h, device=x.device)  # row i: head i off, the others on
    per_batch = batch or max(1, BATCH_TOKENS // cfg.num_tokens)
    drops = torch.zeros(L, h)
    for l in range(L):
        after = []
        for rows in off_one.split(per_batch):
            with turn(), loaded.lock:
                t = forward.heads_off(layers[l], streams[l].expand(len(rows), -1, -1), rows, ablation)  # (b, T, D)
                after.append(classify_from(model, t, l + 1).float().softmax(-1)[:, target])
        drops[l] = probs[target] - torch.cat(after).cpu()
        if on_layer is not None:
            on_layer(l + 1, L)
    return drops.numpy()
