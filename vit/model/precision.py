"""The precision a model runs in: float32 (the reference) or bfloat16 where this machine computes it faster.

bfloat16 keeps float32's range with an 8-bit mantissa; processors with native bfloat16 matrix units (AVX512_BF16
and AMX on x86, Apple's M2 and later, every recent GPU) run its matmuls 2-4x faster, and the matmuls are nearly
all of a ViT's time. ``"auto"`` asks the machine once: on CUDA whether the device supports bfloat16, on a CPU a
short matmul timed in both precisions (bfloat16 where it is at least :data:`FASTER` times quicker).

A model "in bfloat16" (:func:`to`) has its linear layers in bfloat16, where the matmuls are, but those of its first
:data:`FLOAT32_BLOCKS` encoder blocks; the rest stays float32: the patch embedding (the pixels rounded to bfloat16
moved every attention map by ~1 % of its maximum), the residual stream and the norms (the sums that carry each
layer's rounding into the next). The first blocks' rounding is carried and grown by every block after them: with
all blocks in bfloat16 the shapes model's min fusion (its smallest maps, maxima down to 0.13) was up to 2.9 % of
its maximum off float32's (60 two-shape drawings), with the first block in float32 up to 2.6 %, with the first two
up to 2.0 % (300 drawings); on ViT-B/16 that is 2 of 12 blocks, ~1/6 of the matmuls. What needs float32
downstream (softmax sums, rollout's products over the layers, the norms shown to the class, the explanations'
relevance rows) is accumulated in float32 by the code that reads the model (``vit.analysis``, ``vit.explanations``).
"""

from __future__ import annotations

import functools
import time

import torch
from torch import nn

from vit import validate

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}
FASTER = 1.5  # "auto" takes bfloat16 on a CPU where its matmul is at least this many times quicker
FLOAT32_BLOCKS = 2  # the first encoder blocks, whose linear layers stay float32 (the module docstring says why)
PROBE = 512  # the side of the timed matmul (0.27 GFLOP: a few ms in either precision)


def resolve(dtype: object = "float32", device: str | torch.device = "cpu") -> torch.dtype:
    """``"float32"``, ``"bfloat16"``, ``"auto"`` (or ``torch.float32`` / ``torch.bfloat16``) as a torch dtype."""
    name = validate.dtype(dtype)
    return auto(str(torch.device(device).type)) if name == "auto" else DTYPES[name]


@functools.cache
def auto(device_type: str = "cpu") -> torch.dtype:
    """bfloat16 where this machine runs it faster, else float32 (measured once per device type)."""
    if device_type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32
    if device_type != "cpu":
        return torch.float32
    seconds = {dtype: _matmul_seconds(dtype) for dtype in (torch.float32, torch.bfloat16)}
    return torch.bfloat16 if seconds[torch.float32] >= FASTER * seconds[torch.bfloat16] else torch.float32


def _matmul_seconds(dtype: torch.dtype, repeats: int = 5) -> float:
    """The quickest of ``repeats`` (PROBE x PROBE) @ (PROBE x PROBE) matmuls in ``dtype`` on the CPU."""
    a = torch.randn(PROBE, PROBE).to(dtype)
    a @ a  # the first call sets up the kernel
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - start)
    return best


def to(module: nn.Module, dtype: torch.dtype) -> nn.Module:
    """``module`` (a :class:`vit.model.modules.ViTForImageClassification`) in ``dtype``, in place: float32 whole;
    otherwise its linear layers in ``dtype`` (each casts what comes in, a forward pre-hook, and gives ``dtype`` out)
    but those of the first :data:`FLOAT32_BLOCKS` encoder blocks, and everything else in float32 (the module
    docstring says why)."""
    module.float()
    if dtype != torch.float32:
        kept = set(module.encoder.layers[:FLOAT32_BLOCKS].modules())
        for layer in module.modules():
            if isinstance(layer, nn.Linear) and layer not in kept:
                layer.to(dtype).register_forward_pre_hook(_cast_input)
    return module


def _cast_input(layer: nn.Linear, args: tuple) -> tuple:
    return tuple(a.to(layer.weight.dtype) if torch.is_tensor(a) else a for a in args)


def of(module: nn.Module) -> torch.dtype:
    """The precision ``module`` runs in (:func:`to`): its linear layers' (the head's, never kept float32)."""
    dtypes = {m.weight.dtype for m in module.modules() if isinstance(m, nn.Linear)}
    return next(iter(dtypes - {torch.float32}), torch.float32)


def name(dtype: torch.dtype) -> str:
    """torch.bfloat16 -> "bfloat16"."""
    return str(dtype).removeprefix("torch.")
