"""The precision a model runs in: float32 (the reference) or bfloat16 where this machine computes it faster.

bfloat16 keeps float32's range with an 8-bit mantissa; processors with native bfloat16 matrix units (AVX512_BF16
and AMX on x86, Apple's M2 and later, every recent GPU) run its matmuls 2-4x faster, and the matmuls are nearly
all of a ViT's time. ``"auto"`` asks the machine once: on CUDA whether the device supports bfloat16, on a CPU a
short matmul timed in both precisions (bfloat16 where it is at least :data:`FASTER` times quicker). What needs
float32 to stay right (softmax sums, rollout's products over the layers, the norms shown to the class, the
explanations' relevance rows) is accumulated in float32 by the code that reads the model (``vit.analysis``,
``vit.explanations``), whatever the model's precision.
"""

from __future__ import annotations

import functools
import time

import torch

from vit import validate

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}
FASTER = 1.5  # "auto" takes bfloat16 on a CPU where its matmul is at least this many times quicker
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


def name(dtype: torch.dtype) -> str:
    """torch.bfloat16 -> "bfloat16"."""
    return str(dtype).removeprefix("torch.")
