"""The precision a model runs in: float32 (the reference) or bfloat16 where this machine computes it faster.

``"auto"`` asks the processor, never a clock, so every start on a machine gives the same answer: on CUDA whether
the device supports bfloat16; on a CPU bfloat16 only on x86 with a bfloat16 matrix instruction, else float32. In
bfloat16 the linear layers are, but those of the first :data:`FLOAT32_BLOCKS` blocks; the patch embedding, the
residual stream and the norms stay float32 (why, with the figures: docs/performance.md, "vit.model.precision").
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
    """``"auto"`` on a CPU: bfloat16 on x86 whose ``flags`` (as /proc/cpuinfo names them) hold one of
    :data:`BF16_FLAGS`, else float32 (arm too; x86 without them emulates bfloat16 matmuls)."""
    return torch.bfloat16 if machine.lower() in X86 and BF16_FLAGS & {f.lower() for f in flags} else torch.float32


def cpu_flags(cpuinfo: Path = CPUINFO) -> frozenset[str]:
    """The CPU's feature flags from Linux's ``/proc/cpuinfo``; none where there is no such file (macOS, Windows)."""
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
    """``module`` in ``dtype``, in place: float32 whole, or its linear layers in ``dtype`` (each casting what comes
    in) but those of the first :data:`FLOAT32_BLOCKS` blocks, and everything else in float32."""
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
