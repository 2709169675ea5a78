"""Training ``vit_tiny_shapes`` from scratch on drawn shapes (``vit.shapes``): a DeiT-style recipe (Touvron et al.
2021), the square's eight symmetries as augmentation, the masks as dense labels (token labelling, Jiang et al. 2021)
and random patch sizes (FlexiViT, Beyer et al. 2023) through the very functions ``load_model`` applies at another P."""

from __future__ import annotations

import json
import math
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor
from torch.func import functional_call

from vit import shapes
from vit.config import DISPLAY_NAMES, PRESETS, ViTConfig, grid_for_patch_size, patch_size_range
from vit.model import families
from vit.model.modules import ViTEmbedding, ViTForImageClassification
from vit.model.partial import classify_each
from vit.model.resample import pi_resize_kernel, resample_pos_embed

NAME = "vit_tiny_shapes"
EVAL_SEED_OFFSET = 10_000  # the accuracy tables are measured on seed + this: drawings never trained on
EVAL_IMAGES = 2000

Progress = Callable[[int, int, float], None]


@dataclass(frozen=True)
class TrainSettings:
    """A recipe; the defaults are the *plain* one (plain one-shape drawings, a 15-minute budget)."""

    epochs: int = 40
    train_images: int = 16_384  # drawn once (vit.shapes.sample_arrays, or training_set for a mix)
    batch_size: int = 64  # small batches: more updates for the same compute
    lr: float = 2e-3
    weight_decay: float = 0.05
    warmup_fraction: float = 0.05
    label_smoothing: float = 0.1
    patch_sizes: tuple[int, ...] = tuple(range(6, 25))  # FlexiViT: P drawn uniformly from these ...
    native_share: float = 0.5  # ... except for this share of the steps, which run at the native P,
    flexi_after: float = 0.7  # and every step before this fraction of the run (first learn the shapes)
    two_share: float = 0.0  # of the training drawings with two shapes (targets 1/2 and 1/2) ...
    varied_share: float = 0.0  # ... and of those in the varied style (docs/shapes-model.md)
    sketch_share: float = 0.0  # ... and of those sketched with a pen (vit.shapes: style "sketch")
    recolour: bool = False  # per image: colours inverted, grey or channels permuted (:func:`recolour`)
    token_weight: float = 1.0  # token labelling: weight of the loss on the patch tokens under the shape
    token_coverage: float = 0.25  # a patch is "under the shape" when the mask covers this much of it
    keep_share: float = 1.0  # token dropout: the share of patch tokens kept (those under a shape first) ...
    keep_until: float = 0.8  # ... in the steps before this fraction of the run; every token after it
    max_seconds: float | None = 900.0  # a time budget: the schedule runs on max(steps, time) done (not repeatable)
    seed: int = 0


# The recipe shipped before SKETCH (docs/shapes-model.md has the two recipes' times and tables).
MIXED = TrainSettings(epochs=18, train_images=36_864, patch_sizes=tuple(range(5, 17)), flexi_after=0.4,
                      two_share=0.25, varied_share=0.6, recolour=True, keep_share=0.5, keep_until=0.75,
                      max_seconds=None)
# The shipped file's recipe, for anyone's drawing: MIXED's with pen sketches and twice the drawings.
SKETCH = TrainSettings(epochs=28, train_images=73_728, patch_sizes=tuple(range(5, 17)), flexi_after=0.4,
                       two_share=0.3, varied_share=0.5, sketch_share=0.35, recolour=True, keep_share=0.5,
                       keep_until=0.85, max_seconds=None)
RECIPES = {"mixed": MIXED, "plain": TrainSettings(), "sketch": SKETCH}
SHIPPED = "sketch"  # the recipe of assets/vit_tiny_shapes.pth: `python -m vit train-shapes` with no --recipe


def to_tensor(images: np.ndarray) -> Tensor:
    """(n, S, S, 3) uint8 drawings -> (n, 3, S, S) uint8, the form kept in memory."""
    return torch.from_numpy(images).permute(0, 3, 1, 2).contiguous()


def normalise(x: Tensor, name: str = NAME) -> Tensor:
    """uint8 (B, 3, S, S) -> float (B, 3, S, S) with the family's mean and std (as its preprocessing)."""
    mean, std = (torch.tensor(v, device=x.device).view(1, 3, 1, 1) for v in families.normalisation(name))
    return (x.float() / 255.0 - mean) / std


def augment(x: Tensor, generator: torch.Generator) -> Tensor:
    """Each image turned by one of the square's 8 symmetries (a mask stacked as a channel turns with it)."""
    for op in (lambda t: t.flip(-1), lambda t: t.flip(-2), lambda t: t.transpose(-1, -2)):
        pick = torch.rand(x.shape[0], generator=generator) < 0.5
        x = torch.where(pick.view(-1, 1, 1, 1).to(x.device), op(x), x)
    return x


def recolour(x: Tensor, generator: torch.Generator, invert: float = 0.15, grey: float = 0.1,
             permute: float = 0.25) -> Tensor:
    """Per normalised image, independently: colours inverted (255 - v is -x at mean 0.5), grey, or channels permuted."""
    B = x.shape[0]
    pick = lambda p: (torch.rand(B, generator=generator) < p).view(-1, 1, 1, 1).to(x.device)  # noqa: E731
    x = torch.where(pick(invert), -x, x)
    x = torch.where(pick(grey), x.mean(dim=1, keepdim=True).expand_as(x), x)
    order = torch.stack([torch.randperm(3, generator=generator) for _ in range(B)]).to(x.device)  # (B, 3)
    shuffled = torch.gather(x, 1, order.view(B, 3, 1, 1).expand_as(x))
    return torch.where(pick(permute), shuffled, x)


def embed_at_patch_size(embedding: ViTEmbedding, x: Tensor, patch_size: int) -> Tensor:
    """The embedding at patch size p inside the autograd graph, (B, C, H, W) -> (B, N+1, D): what
    ``load_model(..., patch_size=p)`` does to the weights (timm's ``PatchEmbed.set_input_size``), without a copy."""
    if patch_size == embedding.patch_embed.patch_size:
        return embedding(x)
    proj, grid = embedding.patch_embed.proj, embedding.grid
    kernel = pi_resize_kernel(proj.weight, (patch_size, patch_size))  # (D, C, P, P) -> (D, C, p, p)
    tokens = F.conv2d(x, kernel, proj.bias, stride=patch_size)  # (B, C, H, W) -> (B, D, H/p, W/p)
    new_grid = tuple(tokens.shape[-2:])
    tokens = embedding.add_cls_token(tokens.flatten(2).transpose(1, 2))  # -> (B, N, D) -> (B, N+1, D)
    weight = embedding.pos_embed.weight  # (1, covered + N, D): its prefix rows are kept as they are
    pos = resample_pos_embed(weight, grid, new_grid, weight.shape[1] - grid[0] * grid[1])  # at the new grid
    # The position embedding's own forward with the resampled weight (torch.func swaps it in for the call).
    tokens = functional_call(embedding.pos_embed, {"weight": pos}, (tokens,))  # (B, N+1, D)
    return embedding.norm_pre(embedding.dropout(tokens))


def flexi_tokens(model: ViTForImageClassification, x: Tensor, patch_size: int, keep: Tensor | None = None) -> Tensor:
    """The model at patch size P up to its last block, differentiably: (B, C, S, S) -> (B, N+1, D), before the
    final norm; with ``keep``, (B, M) indices of the patch tokens the blocks see, (B, M+1, D)."""
    if patch_size != model.config.patch_size:
        side = grid_for_patch_size(model.config.image_size, patch_size) * patch_size
        if side != x.shape[-1]:
            x = F.interpolate(x, size=(side, side), mode="bilinear", align_corners=False, antialias=True)
    tokens = embed_at_patch_size(model.embedding, x, patch_size)  # (B, C, H, W) -> (B, N+1, D)
    if keep is not None:  # positions are already added: a kept token stays where it was
        patches = torch.gather(tokens[:, 1:], 1, keep.unsqueeze(-1).expand(-1, -1, tokens.shape[-1]))  # (B, M, D)
        tokens = torch.cat([tokens[:, :1], patches], dim=1)  # (B, M+1, D)
    for layer in model.encoder.layers:
        tokens = layer(tokens)  # (B, N+1, D)
    return tokens


def kept_tokens(classes: Tensor, share: float, generator: torch.Generator) -> Tensor:
    """Token dropout (PatchDropout, Liu et al. 2023) sparing the shapes: (B, N) token classes (-1: background)
    -> (B, M) kept indices, M = ceil(share x N), every token under a shape first."""
    B, N = classes.shape
    M = max(1, math.ceil(share * N))
    score = torch.rand(B, N, generator=generator).to(classes.device) + (classes >= 0).float()  # shapes first
    return score.topk(M, dim=1).indices  # (B, M)


def token_targets(masks: Tensor, patch_size: int, side: int, coverage: float) -> Tensor:
    """Which patch tokens lie under the shape: (B, 1, S, S) float masks -> (B, N) bool at patch size P."""
    if masks.shape[-1] != side:
        masks = F.interpolate(masks, size=(side, side), mode="bilinear", align_corners=False, antialias=True)
    covered = F.avg_pool2d(masks, patch_size)  # (B, 1, H/P, W/P)
    return covered.flatten(1) >= coverage  # (B, N)


def token_labelling_loss(model: ViTForImageClassification, z: Tensor, targets: Tensor) -> Tensor:
    """Token labelling (Jiang et al. 2021, "All Tokens Matter"), the masks as dense labels: every patch token of
    z (B, N+1, D) that shows part of a shape is trained to name it. ``targets``: (B, N), -1 for background."""
    logits = classify_each(model, z[:, 1:])  # (B, N, D) -> (B, N, K)
    if not (targets >= 0).any():
        return logits.sum() * 0.0
    return F.cross_entropy(logits[targets >= 0], targets[targets >= 0])


def token_classes(masks: Tensor, labels: Tensor, patch_size: int, side: int, coverage: float) -> Tensor:
    """(B, k, S, S) masks and (B, k) labels (-1: none) -> each patch token's class (B, N), -1 background, first wins."""
    out = torch.full((masks.shape[0], (side // patch_size) ** 2), -1, dtype=torch.long, device=masks.device)
    for j in range(masks.shape[1]):
        under = token_targets(masks[:, j:j + 1], patch_size, side, coverage) & (labels[:, j:j + 1] >= 0)  # (B, N)
        out = torch.where(under & (out < 0), labels[:, j:j + 1].expand_as(out), out)
    return out


def soft_targets(labels: Tensor, num_classes: int, smoothing: float) -> Tensor:
    """(B, k) labels (-1: none) -> (B, K): the probability split evenly between an image's classes, then smoothed
    (with one class, ``F.cross_entropy``'s own ``label_smoothing`` target)."""
    valid = (labels >= 0).float()  # (B, k)
    target = torch.zeros(labels.shape[0], num_classes, device=labels.device)
    target.scatter_add_(1, labels.clamp(min=0), valid / valid.sum(1, keepdim=True))
    return (1 - smoothing) * target + smoothing / num_classes


def _optimizer(model: ViTForImageClassification, settings: TrainSettings) -> torch.optim.AdamW:
    """AdamW; no weight decay on biases, norms, the class token and the position embedding."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim < 2 or "cls_token" in name or "pos_embed" in name else decay).append(p)
    groups = [{"params": decay, "weight_decay": settings.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=settings.lr, betas=(0.9, 0.999))


def _schedule(done: float, warmup: float) -> float:
    """The learning rate's factor with ``done`` (0..1) of the run behind: linear warmup, then cosine decay."""
    if done < warmup:
        return max(done / warmup, 1e-3)
    return 0.5 * (1 + math.cos(math.pi * min(1.0, (done - warmup) / max(1e-9, 1 - warmup))))


def _check_data(config: ViTConfig, images: Tensor, labels: Tensor, settings: TrainSettings) -> None:
    """Refuse, saying what was expected, images, labels or patch sizes ``train`` cannot use."""
    if images.ndim != 4 or images.shape[1:] != (3, config.image_size, config.image_size):
        raise ValueError(f"expected images (n, 3, {config.image_size}, {config.image_size}), "
                         f"got {tuple(images.shape)}")
    if images.dtype != torch.uint8 or labels.shape[:1] != images.shape[:1] or labels.ndim not in (1, 2):
        raise ValueError(f"expected uint8 images and one label (or a row of labels) per image, got {images.dtype} "
                         f"and {tuple(labels.shape)} labels for {images.shape[0]} images")
    lo, hi = patch_size_range(NAME) if config == PRESETS[NAME] else (1, config.image_size)
    if any(not lo <= p <= hi for p in settings.patch_sizes):
        raise ValueError(f"patch sizes must lie in {lo}..{hi}, got {settings.patch_sizes}")


def _step(model: ViTForImageClassification, optimizer: torch.optim.Optimizer, settings: TrainSettings,
          x: Tensor, y: Tensor, mask: Tensor | None, patch_size: int,
          drop: torch.Generator | None = None) -> float:
    """One optimiser step at patch size P on (B, C, S, S) images, (B, k) classes (-1: no k-th shape) and
    (B, k, S, S) masks (None: the class token alone); returns the class token's loss."""
    classes = keep = None
    if mask is not None:
        side = grid_for_patch_size(model.config.image_size, patch_size) * patch_size
        classes = token_classes(mask, y, patch_size, side, settings.token_coverage)  # (B, N)
        if drop is not None:
            keep = kept_tokens(classes, settings.keep_share, drop)  # (B, M)
            classes = torch.gather(classes, 1, keep)  # (B, M)
    z = flexi_tokens(model, x, patch_size, keep)  # (B, N+1, D) (or M+1), the last block's output
    target = soft_targets(y, model.config.num_classes, settings.label_smoothing)  # (B, K)
    loss = -(target * F.log_softmax(model.classify(z), dim=-1)).sum(-1).mean()
    total_loss = loss
    if classes is not None and settings.token_weight:
        total_loss = loss + settings.token_weight * token_labelling_loss(model, z, classes)
    optimizer.zero_grad(set_to_none=True)
    total_loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()


def train(
    config: ViTConfig,
    images: Tensor,
    labels: Tensor,
    settings: TrainSettings = TrainSettings(),
    device: str | torch.device = "cpu",
    progress: Progress | None = None,
    masks: Tensor | None = None,
) -> tuple[ViTForImageClassification, list[float]]:
    """Train a ViT from scratch on (n, 3, S, S) uint8 images, (n,) or (n, k) labels (-1: none) and, for token
    labelling, (n, S, S) or (n, k, S, S) masks; returns the model (eval, on the CPU) and every step's loss."""
    _check_data(config, images, labels, settings)
    if labels.ndim == 1:
        labels = labels.view(-1, 1)  # (n,) -> (n, 1): one shape per image
    if masks is not None and masks.ndim == 3:
        masks = masks.unsqueeze(1)  # (n, S, S) -> (n, 1, S, S)
    device = torch.device(device)
    torch.manual_seed(settings.seed)
    generator = torch.Generator().manual_seed(settings.seed)
    rng = np.random.default_rng(settings.seed)
    model = ViTForImageClassification(config).to(device).train()  # PyTorch's default init
    optimizer = _optimizer(model, settings)
    n = images.shape[0]
    per_epoch = math.ceil(n / settings.batch_size)
    total = settings.epochs * per_epoch
    budget = settings.max_seconds
    t0 = time.perf_counter()

    def done() -> float:  # how much of the run is behind us, 0..1
        by_steps = len(losses) / total
        return by_steps if budget is None else max(by_steps, (time.perf_counter() - t0) / budget)

    losses: list[float] = []
    for _ in range(settings.epochs):
        order = torch.randperm(n, generator=generator)
        for start in range(0, n, settings.batch_size):
            if done() >= 1.0:
                break
            for group in optimizer.param_groups:
                group["lr"] = settings.lr * _schedule(done(), settings.warmup_fraction)
            index = order[start:start + settings.batch_size]
            x = normalise(images[index].to(device))  # (B, C, S, S)
            if masks is not None:
                x = torch.cat([x, masks[index].to(device).float()], dim=1)  # (B, C+k, S, S)
            x = augment(x, generator)
            dropping = settings.keep_share < 1 and done() < settings.keep_until
            x, mask = x[:, :3], (x[:, 3:] if masks is not None and (settings.token_weight or dropping) else None)
            if settings.recolour:
                x = recolour(x, generator)
            y = labels[index].to(device)
            native = (rng.random() < settings.native_share or not settings.patch_sizes
                      or done() < settings.flexi_after)
            patch_size = config.patch_size if native else int(rng.choice(settings.patch_sizes))
            losses.append(_step(model, optimizer, settings, x, y, mask, patch_size, generator if dropping else None))
            if progress:
                progress(len(losses), total, losses[-1])
    if progress and losses and len(losses) < total:  # the time budget ended it: close the bar
        progress(len(losses), len(losses), losses[-1])
    return model.cpu().eval(), losses


@torch.inference_mode()
def accuracy(loaded, images, labels, batch_size: int = 250) -> float:
    """Top-1 accuracy of a :class:`~vit.model.loaded.LoadedModel` on PIL images, through its own preprocessing."""
    device = loaded.device
    correct = 0
    for start in range(0, len(images), batch_size):
        x = torch.cat([loaded.preprocess(im) for im in images[start:start + batch_size]]).to(device)
        y = torch.as_tensor(labels[start:start + batch_size], device=device)
        correct += int((loaded(x).argmax(-1) == y).sum())
    return correct / max(1, len(images))


def accuracy_tables(weights: str | Path, images, labels, device: str | torch.device = "cpu") -> dict:
    """``{"patch_size": {"4": acc, ...}, "depth": {"1": acc, ...}}`` at each P and depth, via ``load_model``."""
    from vit.model.load import load_model  # noqa: PLC0415 - api imports this module's neighbours

    lo, hi = patch_size_range(NAME)
    native = PRESETS[NAME]
    by_patch = {str(P): accuracy(load_model(NAME, str(weights), patch_size=P, device=device), images, labels)
                for P in range(lo, hi + 1)}
    by_depth = {str(d): accuracy(load_model(NAME, str(weights), depth=d, device=device), images, labels)
                for d in range(1, native.num_layers + 1)}
    return {"patch_size": by_patch, "depth": by_depth}


@torch.inference_mode()
def two_shape_table(weights: str | Path, seed: int, device: str | torch.device = "cpu",
                    images: int = EVAL_IMAGES) -> dict:
    """On fresh two-shape drawings at the native P: the shares with both shapes top two, in the top three, one top-1."""
    from vit.model.load import load_model  # noqa: PLC0415

    loaded = load_model(NAME, str(weights), device=device)
    pictures, pairs, _ = shapes.sample(images, seed, loaded.config.image_size, two=True)
    top_two = three = one = 0
    for start in range(0, images, 250):
        x = torch.cat([loaded.preprocess(im) for im in pictures[start:start + 250]]).to(loaded.device)
        ranked = loaded.module(x).argsort(-1, descending=True).cpu()  # (B, K)
        for row, pair in zip(ranked, pairs[start:start + 250]):
            top_two += set(row[:2].tolist()) == set(pair)
            three += set(pair) <= set(row[:3].tolist())
            one += int(row[0]) in pair
    return {"images": images, "seed": seed, "top_two": top_two / images, "both_in_top_three": three / images,
            "one_top_one": one / images}


def _draw_part(args: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n, seed, size, two_share, varied_share, start, sketch_share = args
    return shapes.training_set(n, seed, size, two_share, varied_share, start, sketch_share)


def draw_training_set(settings: TrainSettings, size: int, workers: int = 1) -> tuple[np.ndarray, ...]:
    """``shapes.training_set`` for ``settings``, drawn by ``workers`` processes (the same arrays for any number)."""
    n = settings.train_images
    if settings.two_share == settings.varied_share == settings.sketch_share == 0:
        return shapes.sample_arrays(n, settings.seed, size)  # the plain recipe's data: one plain shape each
    if workers <= 1 or n < 1024:
        return shapes.training_set(n, settings.seed, size, settings.two_share, settings.varied_share,
                                   sketch_share=settings.sketch_share)
    import multiprocessing  # noqa: PLC0415

    bounds = np.linspace(0, n, 8 * workers + 1).astype(int)
    parts = [(int(b - a), settings.seed, size, settings.two_share, settings.varied_share, int(a),
              settings.sketch_share) for a, b in zip(bounds, bounds[1:])]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        drawn = pool.map(_draw_part, parts)
    return tuple(np.concatenate(arrays) for arrays in zip(*drawn))


def progress_bar(label: str, stream=sys.stderr, width: int = 30) -> Progress:
    """A one-line text progress bar: step, loss, speed and time left."""
    t0 = time.perf_counter()
    state = {"shown": -1.0}

    def report(step: int, total: int, loss: float) -> None:
        now = time.perf_counter() - t0
        if now - state["shown"] < 0.5 and step < total:
            return
        state["shown"] = now
        done = int(width * step / total)
        left = now / step * (total - step)
        print(f"\r{label} [{'#' * done}{'.' * (width - done)}] {step}/{total} loss {loss:.3f} "
              f"{now:.0f}s elapsed, ~{left:.0f}s left", end="", file=stream, flush=True)
        if step >= total:
            print(file=stream, flush=True)

    return report


def train_shapes(
    out: str | Path | None = None,
    epochs: int | None = None,
    seed: int = 0,
    device: str | torch.device | None = None,
    settings: TrainSettings | None = None,
    minutes: float | None = None,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
    workers: int = 2,
) -> dict:
    """Draw the data, train ``vit_tiny_shapes``, measure it, write ``<out>.pth`` and ``<out>.json``; returns the JSON.
    Without ``minutes`` (a budget for the loop) the run is the same on every machine, whatever ``workers``."""
    from vit.model.load import default_device, load_model  # noqa: PLC0415

    settings = settings or RECIPES[SHIPPED]
    settings = TrainSettings(**{**asdict(settings), "seed": seed,
                                **({} if epochs is None else {"epochs": epochs}),
                                **({} if minutes is None else {"max_seconds": 60.0 * minutes})})
    if settings.epochs < 1:
        raise ValueError(f"epochs must be at least 1, got {settings.epochs}")
    out = Path(out) if out is not None else families.weights_path(NAME)
    device = default_device() if device is None else torch.device(device)
    config = PRESETS[NAME]
    t0 = time.perf_counter()
    log(f"drawing {settings.train_images:,} training images (seed {seed}, {workers} processes)...")
    arrays, labels, masks = draw_training_set(settings, config.image_size, workers)
    images, labels, masks = to_tensor(arrays), torch.from_numpy(labels), torch.from_numpy(masks)
    t1 = time.perf_counter()
    log(f"drew them in {t1 - t0:.0f} s; training {DISPLAY_NAMES[NAME]} on {device} "
        f"({torch.get_num_threads()} threads), {settings.epochs} epochs")
    model, losses = train(config, images, labels, settings, device, progress_bar("training"), masks)
    t2 = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), out)
    log(f"trained in {t2 - t1:.0f} s; wrote {out}; measuring accuracy on {EVAL_IMAGES} fresh drawings...")
    eval_seed = seed + EVAL_SEED_OFFSET
    test_images, test_labels, _ = shapes.sample(EVAL_IMAGES, eval_seed, config.image_size)
    tables = accuracy_tables(out, test_images, test_labels, device)
    log("measuring the two-shape and varied-style tables...")
    tables["two_shapes"] = two_shape_table(out, eval_seed + 1, device)
    varied_images, varied_labels, _ = shapes.sample(EVAL_IMAGES, eval_seed + 2, config.image_size, style="varied")
    tables["varied"] = {"8": accuracy(load_model(NAME, str(out), device=device), varied_images, varied_labels)}
    t3 = time.perf_counter()
    meta = _meta(out, settings, device, losses, tables, eval_seed, (t1 - t0, t2 - t1, t3 - t0))
    out.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta


def record(key: str, table, path: str | Path | None = None) -> None:
    """``<json>[key] = table`` in the JSON beside the weights: a benchmark's ``--record`` keeps its figures there."""
    path = Path(path) if path is not None else families.meta_path(NAME)
    meta = json.loads(path.read_text(encoding="utf-8"))
    meta[key] = table
    path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


def _meta(out: Path, settings: TrainSettings, device: torch.device, losses: list[float], tables: dict,
          eval_seed: int, seconds: tuple[float, float, float]) -> dict:
    """The JSON written beside the weights; ``seconds``: drawing, training and the whole run."""
    drawing, training, total = seconds
    return {
        "name": NAME,
        "display_name": DISPLAY_NAMES[NAME],
        "config": asdict(PRESETS[NAME]),
        "classes": list(shapes.CLASSES),
        "normalisation": dict(zip(("mean", "std"), families.normalisation(NAME))),
        "seed": settings.seed,
        "settings": asdict(settings),
        "device": str(device),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "machine": platform.processor() or platform.machine(),
        "drawing_time_s": round(drawing, 1),
        "training_time_s": round(training, 1),
        "total_time_s": round(total, 1),
        "steps": len(losses),
        "steps_planned": settings.epochs * math.ceil(settings.train_images / settings.batch_size),
        "final_loss": round(float(np.mean(losses[-20:])), 4),
        "eval": {"seed": eval_seed, "images": EVAL_IMAGES},
        "accuracy": tables,
        "weights": {"file": out.name, "bytes": out.stat().st_size, "sha256": families.sha256(out)},
    }
