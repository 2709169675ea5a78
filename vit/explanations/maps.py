"""Why this class? Explanation maps for a chosen class, and the class-agnostic ones they are compared with.

Every map is over the patch grid, (rows, cols), raw values (the methods: docs/explanations.md). The gradient
methods explain ``logit[A] - logit[B]`` for "why A rather than B?"; their memory: docs/performance.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor, nn

from vit import cost, validate
from vit.analysis import rollout
from vit.analysis.trace import attention_kept, wide
from vit.config import display_name
from vit.errors import InputError
from vit.explanations import lrp
from vit.explanations.methods import AUTO, DEFAULT_METHOD, METHODS, default_gradcam_layer
from vit.explanations.occlusion import occlusion
from vit.model.loaded import LoadedModel

WHOLE_GRAPH_BYTES = 256 * 2**20  # AttnLRP keeps the whole autograd graph below this, recomputes blocks above


@dataclass(frozen=True)
class Explanation:
    """An explanation map for one class of one image."""

    method: str  # a METHODS key
    target: int  # the class explained (an index into the model's classes)
    label: str  # its name
    prob: float  # its softmax probability on the unperturbed image
    map: Tensor = field(repr=False)  # (rows, cols) over the patches, raw values (see METHODS)
    timings_ms: dict[str, float] = field(repr=False)
    patch_size: int  # P: each map cell covers P x P input pixels
    image: np.ndarray = field(repr=False)  # (H, W, 3) uint8: the image as the model saw it
    probs: Tensor = field(repr=False)  # (K,) the softmax over every class (the top-k; a perturbation curve's start)
    layer: int | None = None  # Grad-CAM: the block (1..L) whose norm1 output was read; None for the other methods
    versus: int | None = None  # "rather than" this class: the map explains logit[target] - logit[versus]
    versus_label: str | None = None

    @property
    def grid(self) -> tuple[int, int]:
        """(rows, cols) of patches."""
        return tuple(self.map.shape)


def attention_contribution(weights: Tensor, grads: Tensor) -> Tensor:
    """Chefer's per-layer term mean_h[(dA * A)^+]: (..., h, T, T) twice -> (..., T, T), in float32 from a bfloat16
    model (the relevance row multiplies L of them)."""
    return (wide(grads) * wide(weights)).clamp(min=0).mean(dim=-3)


def relevance_step(row: Tensor, contribution: Tensor) -> Tensor:
    """One factor of e_q^T (I + C_L) ... (I + C_1), taken from the left: row (I + C) = row + row C."""
    return row + row @ contribution


def gradcam_map(activations: Tensor, grads: Tensor, num_prefix: int = 1) -> Tensor:
    """Grad-CAM over the patch tokens, the ``num_prefix`` tokens before them left out: (T, D) activations and their
    gradients -> (N,). w_d = mean_t d(logit)/d(a_td); map_t = ReLU(sum_d w_d a_td)."""
    weights = grads[num_prefix:].mean(dim=0)  # (D,)
    return (activations[num_prefix:] @ weights).clamp(min=0)  # (N, D) @ (D,) -> (N,)


@contextmanager
def _output_kept(module: nn.Module) -> Iterator[list[Tensor]]:
    """While open, every output of ``module`` is appended to the yielded list (graph kept)."""
    kept: list[Tensor] = []
    handle = module.register_forward_hook(lambda _m, _i, output: kept.append(output))
    try:
        yield kept
    finally:
        handle.remove()


def _top1(logits: Tensor, target: int | None) -> int:
    """The class asked about, or the model's top-1 when none was asked."""
    return int(logits[0].argmax()) if target is None else target


def _question(logits: Tensor, target: int | None, versus) -> tuple[int, int | None]:
    """(A, B) of "why A rather than B?": A the class asked (or the top-1); B ``versus``, the strongest class other
    than A for :data:`AUTO`, or None (the plain question)."""
    target = _top1(logits, target)
    if versus == AUTO:
        others = [int(i) for i in logits[0].argsort(descending=True, stable=True) if int(i) != target]
        versus = others[0] if others else None
    return target, versus


def _score(logits: Tensor, target: int, versus: int | None) -> Tensor:
    """What a gradient method explains: logit[A], or logit[A] - logit[B]."""
    return logits[0, target] - (0 if versus is None else logits[0, versus])


def _block_inputs(model: nn.Module, x: Tensor) -> list[Tensor]:
    """A forward pass without gradients that keeps each block's input: L x (B, N+1, D), then the last output."""
    kept = []
    with torch.no_grad():
        tokens = model.embedding(x)  # (B, C, H, W) -> (B, N+1, D)
        for layer in model.encoder.layers:
            kept.append(tokens)
            tokens = layer(tokens)  # fused attention: nothing (h, N+1, N+1) is kept
    return [*kept, tokens]


def _rollout(model: nn.Module, x: Tensor, target: int | None, _versus=None) -> tuple[Tensor, Tensor, int, None]:
    """Class token's row of the mean-fused rollout: (logits (1, K), (N+1,), target)."""
    layers = list(model.encoder.layers)
    fused = []
    with torch.no_grad(), attention_kept(layers) as kept:
        tokens = model.embedding(x)
        for i, layer in enumerate(layers):
            tokens = layer(tokens)
            fused.append(rollout.fuse_heads(wide(kept.pop(i)[0]), "mean"))  # (h, T, T) -> (T, T); the weights go
        logits = model.classify(tokens)  # (B, N+1, D) -> (B, K)
    return logits, rollout.rollout_rows(fused, every_depth=False)[0], _top1(logits, target), None


def _attention(model: nn.Module, x: Tensor, target: int | None, _versus=None) -> tuple[Tensor, Tensor, int, None]:
    """The last layer's class-token attention, mean over heads: (logits (1, K), (N+1,), target)."""
    last = model.encoder.layers[-1]
    with torch.no_grad(), attention_kept([last]) as kept:
        logits = model(x)
    return logits, wide(kept[0][0, :, 0]).mean(dim=0), _top1(logits, target), None  # (h, T) -> (T,)


def _grad_rollout(model: nn.Module, x: Tensor, target: int | None,
                  versus=None) -> tuple[Tensor, Tensor, int, int | None]:
    """Chefer et al.'s relevance row of the class token: (logits (1, K), (N+1,), target, versus). Each block is
    recomputed, layer L first: e_0ᵀ (I + C_L) ... (I + C_1) from the left, so no (N+1) x (N+1) outlives its layer."""
    layers = list(model.encoder.layers)
    *inputs, tokens = _block_inputs(model, x)
    with torch.enable_grad():
        tokens.requires_grad_()
        logits = model.classify(tokens)  # (B, N+1, D) -> (B, K)
        target, versus = _question(logits, target, versus)
        (grad,) = torch.autograd.grad(_score(logits, target, versus), tokens)  # d logit / d Y_L: (B, N+1, D)
    row = torch.zeros(tokens.shape[1], dtype=wide(tokens).dtype, device=tokens.device)
    row[0] = 1.0
    for i in range(len(layers) - 1, -1, -1):  # layer L first: the row is taken from the left
        block_in = inputs[i].requires_grad_()
        with torch.enable_grad(), attention_kept([layers[i]]) as kept:
            block_out = layers[i](block_in)
            grad, weights_grad = torch.autograd.grad(block_out, [block_in, kept[0]], grad_outputs=grad)
        row = relevance_step(row, attention_contribution(kept.pop(0)[0].detach(), weights_grad[0]))
        del block_out, weights_grad
        inputs[i] = None  # this block's input is no longer needed
    return logits.detach(), row, target, versus


def _gradcam(model: nn.Module, x: Tensor, target: int | None, versus, layer: int) -> tuple[Tensor, Tensor, int, int]:
    """Grad-CAM on block ``layer``'s ``norm1`` output (1-based): (logits (1, K), (N+1,) with 0 for the class token,
    target, versus)."""
    *inputs, _ = _block_inputs(model, x)
    layers = list(model.encoder.layers)
    block = layers[layer - 1]
    with torch.enable_grad(), _output_kept(block.norm1) as kept:
        tokens = inputs[layer - 1].requires_grad_()  # the block's input, (B, N+1, D)
        for later in layers[layer - 1:]:
            tokens = later(tokens)  # (B, N+1, D)
        logits = model.classify(tokens)  # (B, N+1, D) -> (B, K)
        target, versus = _question(logits, target, versus)
        (grads,) = torch.autograd.grad(_score(logits, target, versus), kept[0])
    prefix = model.config.num_prefix_tokens
    cam = gradcam_map(wide(kept[0][0].detach()), wide(grads[0]), prefix)  # (N,)
    return logits.detach(), torch.cat([cam.new_zeros(prefix), cam]), target, versus  # (N+1,): the other rows' layout


def _attnlrp(model: nn.Module, x: Tensor, target: int | None, versus=None,
             recompute: bool | None = None) -> tuple[Tensor, Tensor, int, int | None]:
    """AttnLRP's relevance: (logits (1, K), (T,) with 0 for the prefix tokens, target, versus). ``recompute``: one
    block at a time (None: above :data:`WHOLE_GRAPH_BYTES`); the rules are each block's own, so both paths agree."""
    if recompute is None:
        recompute = lrp_memory(model.config, recompute=False) > WHOLE_GRAPH_BYTES
    with torch.enable_grad(), lrp.rules(model), lrp.patch_tokens(model) as patches:
        if not recompute:
            logits = model(x)  # (B, K)
            target, versus = _question(logits, target, versus)
            (grad,) = torch.autograd.grad(_score(logits, target, versus), patches[0])
        else:
            *inputs, tokens = _block_inputs(model, x)
            tokens.requires_grad_()
            logits = model.classify(tokens)  # (B, N+1, D) -> (B, K)
            target, versus = _question(logits, target, versus)
            (grad,) = torch.autograd.grad(_score(logits, target, versus), tokens)
            for i in range(len(inputs) - 1, -1, -1):
                block_in = inputs[i].requires_grad_()
                (grad,) = torch.autograd.grad(model.encoder.layers[i](block_in), block_in, grad_outputs=grad)
                inputs[i] = None
            embedded = model.embedding(x)  # (B, N+1, D), from the patch tokens kept as a leaf
            (grad,) = torch.autograd.grad(embedded, patches[-1], grad_outputs=grad)
    relevance = lrp.token_relevance(patches[-1], grad)  # (N,)
    return logits.detach(), torch.cat([relevance.new_zeros(model.config.num_prefix_tokens), relevance]), target, versus


def _occlusion(model: nn.Module, x: Tensor, target: int | None, _versus=None) -> tuple[Tensor, Tensor, int, None]:
    return (*occlusion(model, x, target), None)


_RUN: dict[str, Callable[..., tuple[Tensor, Tensor, int, int | None]]] = {
    "attnlrp": _attnlrp,
    "occlusion": _occlusion,
    "rollout": _rollout,
    "attention": _attention,
    "grad_rollout": _grad_rollout,
    "gradcam": _gradcam,
}


def grad_memory(config) -> int:
    """Bytes gradient rollout and Grad-CAM take beyond the weights (float32): L block inputs (T, D), and for
    one block four (h, T, T) (probabilities, gradients, product) and about 20 (T, D)."""
    T, D, h, L = config.num_tokens, config.embed_dim, config.num_heads, config.num_layers
    return 4 * (L * T * D + 4 * h * T * T + 20 * T * D)


def lrp_memory(config, recompute: bool = True) -> int:
    """Bytes AttnLRP takes beyond the weights (float32): about 28 (T, D) per block kept by autograd (fused
    attention keeps no (h, T, T)); recomputing, the L block inputs and one block's."""
    T, D, L = config.num_tokens, config.embed_dim, config.num_layers
    return 4 * T * D * (L + 28 if recompute else 28 * L)


def check_memory(loaded: LoadedModel, method: str) -> None:
    """Refuse, naming the smallest patch size that fits, a method over the server's memory budget."""
    if not METHODS[method].gradient:
        cost.check_budget(cost.estimate(loaded.setting))
        return
    memory = lrp_memory if method == "attnlrp" else grad_memory
    budget = cost.MEMORY_BUDGET_GB * 1e9
    need = memory(loaded.config)
    if need <= budget:
        return
    fits = [p for p in range(loaded.config.patch_size + 1, validate.patch_size_range(loaded.name)[1] + 1)
            if memory(validate.setting(loaded.name, p, loaded.config.num_layers).config) <= budget]
    where = f"the smallest patch size that fits is {fits[0]}" if fits else "no patch size fits"
    raise InputError(f"{METHODS[method].title} at patch size {loaded.config.patch_size} needs about "
                     f"{need / 1e9:.1f} GB for one layer's attention and its gradient; this server allows "
                     f"{cost.MEMORY_BUDGET_GB:g} GB, so {where}.")


def method_name(value) -> str:
    """A METHODS key, or an InputError naming the parameter and the choices."""
    return validate.choice("method", value.replace("-", "_") if isinstance(value, str) else value, tuple(METHODS))


def require_classifier(loaded: LoadedModel) -> None:
    """Refuse, with the sentence the predictions show, to explain a class on a backbone (no head, no classes)."""
    if not loaded.config.has_classifier:
        raise InputError(f"this model has no classifier ({display_name(loaded.name)} is a backbone): there is no "
                         "class to explain; its attention, rollout and tokens can still be shown")


def target_index(value, class_names: list[str], name: str = "target") -> int | None:
    """None (the top-1), a class index 0..K-1, or a class name; anything else is an InputError naming ``name``."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip() in class_names:
        return class_names.index(value.strip())
    if isinstance(value, str) and not value.strip().lstrip("-").isdigit():
        raise InputError(f"{name} must be a class index from 0 to {len(class_names) - 1} or one of the model's "
                         f"class names, got {validate.show(value)}")
    return validate.class_index(value, len(class_names), name)


def versus_index(value, class_names: list[str], target: int | None) -> int | str | None:
    """"Rather than" which class: :data:`AUTO` (the strongest other, also for "" and "auto"), None or "none" (the
    plain question), or a class index or name other than ``target``."""
    if isinstance(value, str) and value.strip().lower() in ("", AUTO):
        return AUTO
    if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
        return None
    versus = target_index(value, class_names, "versus")
    if versus == target:
        raise InputError(f"versus must be another class than the one explained ({class_names[target]}): the map "
                         "answers \"why A rather than B?\"")
    return versus


def gradcam_layer(loaded: LoadedModel, value=None) -> int:
    """Grad-CAM's block, 1..L: ``value`` checked, or the default for this model."""
    L = loaded.config.num_layers
    if value is None:
        return default_gradcam_layer(loaded.name, L)
    number = value if isinstance(value, int) and not isinstance(value, bool) else (
        int(value) if isinstance(value, str) and value.strip().isdigit() else None)
    if number is None or not 1 <= number <= L:
        raise InputError(f"layer (Grad-CAM's block) must be an integer from 1 to {L} for this model, "
                         f"got {validate.show(value)}")
    return number


def explain(loaded: LoadedModel, image, method: str = DEFAULT_METHOD, target=None, layer=None,
            versus=AUTO) -> Explanation:
    """Which patches made the model say ``target`` (index, name or None: the top-1) rather than ``versus`` ("auto":
    the strongest other; None: the plain logit)? An :class:`Explanation`: one (rows, cols) map by a :data:`METHODS`.

        >>> e = vit.explain(loaded, "assets/shapes-heart_and_circle.png")   # AttnLRP: why the top-1, not the 2nd?
        >>> vit.explain(loaded, "assets/cat.jpg", target="tiger", versus=None).map   # why tiger, plainly

    ``image`` as :func:`vit.images.load_image` takes it, or ``loaded.input(image)`` to preprocess once;
    ``layer``: Grad-CAM's block 1..L (None: :func:`gradcam_layer`'s default).
    """
    if not isinstance(loaded, LoadedModel):
        raise TypeError(f"explain takes what vit.load_model returns (a LoadedModel), got {type(loaded).__name__}")
    method = method_name(method)
    require_classifier(loaded)
    target = target_index(target, loaded.class_names)
    versus = versus_index(versus, loaded.class_names, target) if METHODS[method].contrastive else None
    layer = gradcam_layer(loaded, layer) if method == "gradcam" else None
    check_memory(loaded, method)
    t0 = time.perf_counter()
    inp = loaded.input(image)
    x = inp.x  # (1, C, H, W)
    t1 = time.perf_counter()
    model = loaded.module
    with loaded.lock, torch.inference_mode(False):
        extra = () if layer is None else (layer,)
        logits, row, target, versus = _RUN[method](model, x, target, versus, *extra)  # (1, K), (N+1,), A, B
    t2 = time.perf_counter()
    probs = logits[0].float().softmax(-1).cpu()  # (K,)
    grid = x.shape[-2] // loaded.config.patch_size, x.shape[-1] // loaded.config.patch_size
    return Explanation(
        method=method, target=target, label=loaded.class_names[target], prob=float(probs[target]),
        map=rollout.patch_grid(row.detach().float().cpu(), grid, loaded.config.num_prefix_tokens),
        timings_ms={"preprocess": (t1 - t0) * 1e3, "explain": (t2 - t1) * 1e3},
        patch_size=loaded.config.patch_size, image=inp.view, probs=probs, layer=layer, versus=versus,
        versus_label=None if versus is None else loaded.class_names[versus],
    )
