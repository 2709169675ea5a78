"""What one analysis costs, from the config alone (no torch, no model built): the app's cost meter, and the
refusal, before anything runs, of a setting over this server's memory budget.

Per encoder block with T = N+1 tokens of width D and an MLP of width 4D: the q, k, v and output projections take
4 T D^2 multiply-adds, the MLP 8 T D^2, the attention scores and their weighted sum 2 T^2 D; FLOPs are twice that.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from vit.config import ROW_BLOCK_BYTES, native_config
from vit.errors import InputError
from vit.validate import Setting

# Memory one analysis may take beyond the model's weights (attention summaries kept, plus the two buffers
# of softmax rows while a layer's attention runs). ViT-H/14 at patch 4 needs ~3.0 GB.
MEMORY_BUDGET_GB = float(os.environ.get("VIT_MEMORY_BUDGET_GB", "4"))
FUSIONS_KEPT = 3  # head fusions an analysis keeps (mean, max, min: vit.analysis.trace), each (L, N+1, N+1)
# ... in float32 while all of them take at most this, else in float16 (half the memory; rollout within 1e-3).
FP32_FUSED_MAX_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Cost:
    name: str
    display_name: str
    patch_size: int
    native_patch_size: int
    depth: int  # L run
    heads: int  # h
    dim: int  # D
    grid: int  # patches per side
    input_size: int  # grid x P pixels
    tokens: int  # T = N + prefix (N+1 for the chapter's model)
    attention_per_head: int  # (N+1)^2
    attention_total: int  # L h (N+1)^2: what keeping every map would mean
    gflops: float  # 2 L (12 T D^2 + 2 T^2 D)
    kept_bytes: int  # what the analysis keeps (Analysis.nbytes): fused maps (float16), q and k, rows, picture
    peak_bytes: int  # kept + a layer's scores and weights, a block of rows at a time, while it runs
    weights_bytes: int  # the model's parameters (float32)


def estimate(setting: Setting) -> Cost:
    """The cost of analysing one image at a setting."""
    native, patch_size, depth, grid = setting.native, setting.patch_size, setting.depth, setting.grid
    T, D, h = grid * grid + native.num_prefix_tokens, native.embed_dim, native.num_heads  # T = N + prefix
    macs_per_layer = 4 * T * D * D + 2 * T * D * native.mlp_dim + 2 * T * T * D
    kept = fused_itemsize(depth, T) * FUSIONS_KEPT * depth * T * T  # every fusion's maps, (L, N+1, N+1) each
    kept += 4 * depth * (2 * T * D + h * T)  # queries and keys (L x (N+1, D) each), class-token rows (L, h, N+1)
    kept += depth * (4 * 4 + 4 * T + 4 * h + 12 * grid * grid)  # residual means, token norms, distances, patch lens
    kept += 4 * depth * T  # the class token's rollout rows of every depth (L, N+1)
    kept += 3 * (grid * patch_size) ** 2 + 4 * native.num_classes  # the picture (H, W, 3) uint8, the probabilities
    per_layer_params = 4 * D * D + 4 * D + 2 * D * native.mlp_dim + native.mlp_dim + D + 4 * D
    params = depth * per_layer_params + (T + 1) * D + 3 * patch_size**2 * D + D + 2 * D + (D + 1) * native.num_classes
    return Cost(
        name=setting.name, display_name=setting.display_name, patch_size=patch_size,
        native_patch_size=native.patch_size, depth=depth, heads=h, dim=D, grid=grid, input_size=grid * patch_size,
        tokens=T, attention_per_head=T * T, attention_total=depth * h * T * T,
        gflops=2 * depth * macs_per_layer / 1e9, kept_bytes=kept,
        peak_bytes=kept + 2 * min(4 * h * T * T, ROW_BLOCK_BYTES),  # a block's weights, their float32 copy (bfloat16)
        weights_bytes=4 * params,
    )


def checkpoint_bytes(name: str) -> int:
    """A family's whole checkpoint in bytes (every layer, at its own patch size): what a build reads."""
    native = native_config(name)
    return estimate(Setting(name, native.patch_size, native.num_layers)).weights_bytes


def fused_itemsize(depth: int, tokens: int) -> int:
    """Bytes per entry of the fused maps an analysis keeps: 4 (float32) or, for large ones, 2 (float16): from
    ViT-B/16 at patch 8 on (785 tokens: 89 MB in float32); at patch 4 the three fusions take 708 MB, not 1.4 GB."""
    return 4 if 4 * FUSIONS_KEPT * depth * tokens**2 <= FP32_FUSED_MAX_BYTES else 2


def check_budget(cost: Cost, budget_gb: float | None = None) -> None:
    """Refuse, with a message naming the setting and the limit, an analysis over the memory budget."""
    budget_gb = MEMORY_BUDGET_GB if budget_gb is None else budget_gb
    if cost.peak_bytes > budget_gb * 1e9:
        raise InputError(key="refusal-budget", model=cost.display_name, P=cost.patch_size, L=cost.depth,
                         T=f"{cost.tokens:,}", need=f"{cost.peak_bytes / 1e9:.1f}", budget=f"{budget_gb:g}")
