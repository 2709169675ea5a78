"""The precision a model runs in: float32 (the reference) or bfloat16 where this machine computes it faster.

bfloat16 keeps float32's range with an 8-bit mantissa; processors with native bfloat16 matrix units (AVX512_BF16
and AMX on x86, Apple's M2 and later, every recent GPU) run its matmuls 2-4x faster, and the matmuls are nearly
all of a ViT's time. ``"auto"`` asks the processor, never a clock, so every start on the same machine gives the same
answer: on CUDA whether the device supports bfloat16; on a CPU (:func:`cpu_dtype`) bfloat16 only on x86 with a
bfloat16 matrix instruction (:data:`BF16_FLAGS`, read from Linux's ``/proc/cpuinfo``), else float32. Timing a short
matmul, as ``"auto"`` did before, flipped its answer on a busy machine (issue 56). Arm stays float32: torch's macOS
wheels do not use Apple's bfloat16 dot instructions and their float32 goes to Accelerate (pytorch/torchchat#1444),
and on a Graviton3 a bfloat16 ``bmm`` measured ~27x slower than float32 (pytorch/pytorch#151934).

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
import platform
from collections.abc import Iterable
from pathlib import Path

import torch
from torch import nn

from vit import validate

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}
BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})  # x86 bfloat16 matmul instructions, as /proc/cpuinfo names them
X86 = frozenset({"x86_64", "amd64"})  # platform.machine() on x86 (Linux, macOS; Windows says AMD64)
CPUINFO = Path("/proc/cpuinfo")
FLOAT32_BLOCKS = 2  # the first encoder blocks, whose linear layers stay float32 (the module docstring says why)


def resolve(dtype: object = "float32", device: str | torch.device = "cpu") -> torch.dtype:
    """``"float32"``, ``"bfloat16"``, ``"auto"`` (or ``torch.float32`` / ``torch.bfloat16``) as a torch dtype."""
    name = validate.dtype(dtype)
    return auto(str(torch.device(device).type)) if name == "auto" else DTYPES[name]


@functools.cache
def auto(device_type: str = "cpu") -> torch.dtype:
    """bfloat16 where this processor has native bfloat16 matmuls, else float32 (asked once per device type)."""
    if device_type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32
    if device_type != "cpu":
        return torch.float32
    return cpu_dtype(cpu_flags(), platform.machine())


def cpu_dtype(flags: Iterable[str], machine: str) -> torch.dtype:
    """``"auto"`` on a CPU: bfloat16 on x86 (``machine`` as :func:`platform.machine` names it) whose ``flags`` (as
    /proc/cpuinfo names them) hold one of :data:`BF16_FLAGS`, else float32: arm (Apple silicon, Graviton) too, and
    x86 without them, where torch's bfloat16 matmul is emulated (the module docstring says why)."""
    return torch.bfloat16 if machine.lower() in X86 and BF16_FLAGS & {f.lower() for f in flags} else torch.float32


def cpu_flags(cpuinfo: Path = CPUINFO) -> frozenset[str]:
    """The CPU's feature flags from Linux's ``/proc/cpuinfo`` (``flags`` lines on x86, ``Features`` on arm); none
    where there is no such file (macOS, Windows: ``"auto"`` is float32 there)."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return frozenset()
    flags: set[str] = set()
    for line in text.splitlines():
        key, colon, value = line.partition(":")
        if colon and key.strip().lower() in ("flags", "features"):
            flags.update(value.split())
    return frozenset(flags)


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
