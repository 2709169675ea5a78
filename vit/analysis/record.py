"""The result of one analysis: numbers only, and the views computed from them. Display-only changes (layer, head,
clicked patch, discard ratio, head fusion) are answered from what is kept, without the model."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
from torch import Tensor

from vit.analysis import rollout
from vit.analysis.trace import RESIDUAL_PARTS, Stage, counted_params
from vit.bounded import BoundedDict


@dataclass(frozen=True)
class Prediction:
    index: int
    label: str
    prob: float


@dataclass(frozen=True)
class LayerPrediction:
    layer: int  # 1..depth
    index: int  # early-exit top-1 class at this layer
    label: str
    prob: float
    final_class_prob: float  # probability of the final top-1 class at this layer


@dataclass(frozen=True)
class ResidualNorms:
    """One pre-norm block's equations in numbers, H = X + MSA(LN(X)), Y = H + MLP(LN(H)): means over the N+1 tokens
    of a token's Euclidean norm."""

    layer: int  # 1..depth
    stream: float  # ||X||_2, the residual stream entering the block
    attention: float  # ||MSA(LN(X))||_2, the attention branch before it is added
    mlp: float  # ||MLP(LN(H))||_2, the MLP branch before it is added
    output: float  # ||Y||_2, the block's output


MAX_VARIANTS = 16  # fusion and discard variants an analysis remembers (each: its rollout rows only)
_variants_lock = threading.Lock()


@dataclass
class Analysis:
    """Everything the views need for one image on one model (no batch dimension); the methods return CPU tensors.
    The prefix tokens come before the patches (row-major): T = N + prefix tokens where (N+1) is written."""

    model: str  # "vit_b_16"
    display_name: str  # "ViT-B/16"
    weights: str  # what was loaded: "imagenet", "random" or a file path
    status: str
    patch_size: int
    depth: int
    num_heads: int
    input_size: tuple[int, int]  # (H, W)
    grid: tuple[int, int]  # (rows, cols)
    image: np.ndarray  # (H, W, 3) uint8: the pixels the model sees
    stages: list[Stage]
    probs: Tensor  # (K,)
    topk: list[Prediction]
    layer_predictions: list[LayerPrediction]
    cls_attention: Tensor  # (L, h, N+1) each head's class-token row
    # "mean"/"max"/"min" -> (L, N+1, N+1) head-fused attention per layer (float16 if large); with queries and keys,
    # kept on the model's device, where the views' rows are computed
    fusions: dict[str, Tensor]
    queries: list[Tensor]  # L x (N+1, D)
    keys: list[Tensor]  # L x (N+1, D)
    head_fusion: str
    discard_ratio: float
    timings_ms: dict[str, float] = field(default_factory=dict)
    _rows: dict = field(default_factory=dict, repr=False, compare=False)  # query -> (L, N+1) rollout rows
    # (fusion, discard) -> Analysis
    _variants: BoundedDict = field(default_factory=lambda: BoundedDict(MAX_VARIANTS), repr=False, compare=False)
    source_size: tuple[int, int] | None = None  # (W, H) of the upload before preprocessing (crop, resize)
    residual_means: Tensor | None = None  # (L, 4): mean ||X||, ||MSA(LN(X))||, ||MLP(LN(H))||, ||Y|| per block
    token_norms: Tensor | None = None  # (L, N+1): ||Y_l,i||_2 of every token after every block
    attention_distance: Tensor | None = None  # (L, h): mean attention distance in pixels
    lens_index: Tensor | None = None  # (L, N) int64: each patch token's early-exit top-1 class per layer
    lens_prob: Tensor | None = None  # (L, N) float32: its probability
    # The tokens before the patches, by name: ("class",), or ("class", "distillation"), ("class", "register 1", ...).
    prefix_token_names: tuple[str, ...] = ("class",)
    has_classifier: bool = True  # False for a backbone: topk and layer_predictions are empty
    dtype: str = "float32"  # the precision the model ran in ("bfloat16": its numbers here are float32 all the same)

    @property
    def fused(self) -> Tensor:
        """The head-fused maps of this analysis's fusion, (L, N+1, N+1), for rollout (float16 when large)."""
        return self.fusions[self.head_fusion]

    @property
    def num_patches(self) -> int:
        return self.grid[0] * self.grid[1]

    @property
    def num_prefix_tokens(self) -> int:
        """The tokens before the patches (1: the class token; DeiT adds its distillation token, DINOv2 registers)."""
        return len(self.prefix_token_names)

    @property
    def num_tokens(self) -> int:
        """T = N + prefix (N+1 for the chapter's model)."""
        return self.num_patches + self.num_prefix_tokens

    @property
    def nbytes(self) -> int:
        """Memory this analysis keeps, with its variants' rollout rows (they share every other tensor)."""
        tensors = [*self.fusions.values(), self.cls_attention, self.probs, *self.queries, *self.keys]
        tensors += [t for t in (self.residual_means, self.token_norms, self.attention_distance, self.lens_index,
                                self.lens_prob) if t is not None]
        with _variants_lock:  # a redraw in another thread may be adding a variant or rows
            for a in (self, *self._variants.values()):
                tensors += list(a._rows.values())
        return sum(t.numel() * t.element_size() for t in tensors) + self.image.nbytes

    @property
    def params(self) -> int:
        """The model's parameter count, each module counted once (see :func:`vit.analysis.trace.counted_params`)."""
        return sum(counted_params(self.stages))

    def rollout_matrix_row(self, layer: int | None = None, query: int = 0) -> Tensor:
        """Rollout row of ``query`` up to ``layer`` (1..depth, default depth): (N+1,). Every depth's rows come from
        one pass and are remembered per query: another layer costs nothing."""
        upto = self.depth if layer is None else layer
        if not 1 <= upto <= self.depth:
            raise ValueError(f"layer must be from 1 to {self.depth}, got {upto}")
        if query not in self._rows:
            self._rows[query] = rollout.rollout_rows(self.fused, query, self.discard_ratio,
                                                      self.num_prefix_tokens)  # (L, N+1)
        return self._rows[query][upto - 1].clone()

    def rollout(self, layer: int | None = None, query: int = 0) -> Tensor:
        """:meth:`rollout_matrix_row` over the patches: (rows, cols)."""
        return rollout.patch_grid(self.rollout_matrix_row(layer, query), self.grid, self.num_prefix_tokens)

    def attention(self, layer: int, head: int | None = None, query: int = 0) -> Tensor:
        """Raw attention of token ``query`` (0: the class token, 1 + r cols + c: patch (r, c)) at ``layer`` and
        ``head``, both from 1: (N+1,). ``head`` None fuses the float32 per-head rows by ``head_fusion``."""
        rows = self.head_rows(layer, query)  # (h, N+1)
        if head is None:
            return rollout.fuse_heads(rows.unsqueeze(-2), self.head_fusion).squeeze(-2)  # (h, 1, N+1) -> (N+1,)
        return rows[self._head_index(head)].clone()

    def _head_index(self, head: int) -> int:
        if not 1 <= head <= self.num_heads:
            raise ValueError(f"head must be from 1 to {self.num_heads}, got {head}")
        return head - 1

    def head_rows(self, layer: int, query: int = 0) -> Tensor:
        """Every head's attention of ``query`` at ``layer`` (1-based) over all N+1 tokens: (h, N+1)."""
        if query == 0:
            return self.cls_attention[layer - 1]
        return rollout.attention_from_qk(self.queries[layer - 1], self.keys[layer - 1], self.num_heads, query).cpu()

    def attention_map(self, layer: int, head: int | None = None, query: int = 0) -> Tensor:
        """:meth:`attention` over the patches (``layer`` and ``head`` 1-based): (rows, cols)."""
        return rollout.patch_grid(self.attention(layer, head, query), self.grid, self.num_prefix_tokens)

    def head_maps(self, layer: int, query: int = 0) -> Tensor:
        """Every head's attention of ``query`` at ``layer`` over the patches: (h, rows, cols)."""
        return rollout.patch_grid(self.head_rows(layer, query), self.grid, self.num_prefix_tokens)

    def attention_matrix(self, layer: int, head: int) -> Tensor:
        """One head's whole attention map at ``layer`` and ``head``, both 1-based, from the kept queries and keys:
        (N+1, N+1)."""
        index = self._head_index(head)
        return rollout.attention_from_qk(self.queries[layer - 1], self.keys[layer - 1], self.num_heads,
                                         head=index).cpu()

    def residual(self) -> list[ResidualNorms]:
        """The residual stream per block, layers 1..depth (see :class:`ResidualNorms`)."""
        assert self.residual_means is not None, "this analysis was built without the residual norms"
        return [ResidualNorms(layer, **dict(zip(RESIDUAL_PARTS, map(float, row))))
                for layer, row in enumerate(self.residual_means, 1)]

    def mean_attention_distance(self) -> Tensor:
        """Each head's mean attention distance in pixels, (depth, h) (ViT paper, Fig. 7 right): the mean over query
        patches i of sum_j A_ij d_ij among the patches (rows renormalised), reduced by the tracer as weights stream."""
        assert self.attention_distance is not None, "this analysis was built without attention distances"
        return self.attention_distance.clone()

    def patch_lens(self, layer: int) -> tuple[Tensor, Tensor]:
        """The logit lens on each patch token of block ``layer`` (1-based): (top-1 class int64, its prob), each
        (rows, cols)."""
        assert self.lens_index is not None, "this analysis was built without the patch lens"
        rows, cols = self.grid
        return (self.lens_index[layer - 1].reshape(rows, cols).clone(),
                self.lens_prob[layer - 1].reshape(rows, cols).clone())

    def with_options(self, head_fusion: str | None = None, discard_ratio: float | None = None) -> Analysis:
        """The same analysis with another head fusion or discard ratio (no model run): it shares every tensor but
        its rollout rows, computed when first drawn; the last :data:`MAX_VARIANTS` are remembered."""
        fusion = self.head_fusion if head_fusion is None else head_fusion
        discard = self.discard_ratio if discard_ratio is None else discard_ratio
        if (fusion, discard) == (self.head_fusion, self.discard_ratio):
            return self
        if fusion not in self.fusions:
            raise ValueError(f"head_fusion must be one of {', '.join(self.fusions)}, got {fusion!r}")
        with _variants_lock:  # redraws of one analysis may come from several server threads
            found = self._variants.get((fusion, discard))
            if found is None:
                found = self.untried()
                found.head_fusion, found.discard_ratio = fusion, discard
                self._variants[(fusion, discard)] = found  # the least recently used goes past MAX_VARIANTS
        return found

    def on_cpu(self) -> Analysis:
        """This analysis with every tensor on the CPU (ZeroGPU hands it from its GPU worker to the server)."""
        if self.queries and self.queries[0].device.type == "cpu":
            return self
        return Analysis(**dict(self.__dict__, fusions={f: m.cpu() for f, m in self.fusions.items()},
                               queries=[q.cpu() for q in self.queries], keys=[k.cpu() for k in self.keys],
                               _rows={}, _variants=BoundedDict(MAX_VARIANTS)))

    def untried(self) -> Analysis:
        """This analysis sharing its tensors but no rollout rows or variants (what a benchmark times)."""
        return Analysis(**dict(self.__dict__, _rows={}, _variants=BoundedDict(MAX_VARIANTS)))

    def to_json(self) -> dict:
        """The CLI's ``--json`` object."""
        return {
            "model": self.model,
            "weights": self.weights,
            "status": self.status,
            "patch_size": self.patch_size,
            "depth": self.depth,
            "input_size": list(self.input_size),
            "grid": list(self.grid),
            "num_patches": self.num_patches,
            "num_tokens": self.num_tokens,
            "prefix_tokens": list(self.prefix_token_names),
            "has_classifier": self.has_classifier,
            "stages": [{"name": s.name, "module": s.module, "shape": list(s.shape), "params": s.params}
                       for s in self.stages],
            "topk": [{"index": p.index, "label": p.label, "prob": p.prob} for p in self.topk],
            "layer_predictions": [
                {"layer": p.layer, "index": p.index, "label": p.label, "prob": p.prob,
                 "final_class_prob": p.final_class_prob}
                for p in self.layer_predictions
            ],
            "rollout": _unfused_rollout(self).tolist(),
            "residual": [vars(r) for r in self.residual()],
            "mean_attention_distance": self.mean_attention_distance().tolist(),  # depth x h, pixels
            "dtype": self.dtype,
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
        }


def _unfused_rollout(a: Analysis) -> np.ndarray:
    """The JSON's rollout: mean head fusion, no discard, class-token row, raw values: (rows, cols)."""
    plain = a.with_options("mean", 0.0)
    return plain.rollout().numpy().astype(float)
