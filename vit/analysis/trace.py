"""The tracer: every stage of a forward pass under the chapter's names, with its shape, and what the views need.

A context manager in the spirit of vit-pytorch's ``Recorder``: hooks attached on entry, always removed on exit; the
model's code knows nothing of it. No layer's attention weights are ever whole: :func:`attention_streamed` reduces
them a block of rows at a time (why: docs/performance.md); :func:`attention_kept` keeps them whole for autograd.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from vit.analysis.rollout import distance_sums, fuse_heads, patch_distances
from vit.config import ROW_BLOCK_BYTES
from vit.model.modules import ViTForImageClassification, attention_weights
from vit.model.partial import classify_each
from vit.validate import HEAD_FUSIONS

Watch = Callable[[int, Tensor, Tensor], None]  # (layer index, 0-based; attention output (B, N+1, D); weights)


@contextmanager
def attention_kept(layers: Sequence[nn.Module], watch: Watch | None = None) -> Iterator[dict[int, Tensor]]:
    """While open, every block's attention is asked for ``need_weights=True``: the yielded dict fills with index in
    ``layers`` -> (B, h, N+1, N+1), in the autograd graph; or ``watch(index, output, weights)`` sees each as it
    streams by and ``None`` is handed on in its place, so nothing downstream holds them."""
    kept: dict[int, Tensor] = {}

    def ask(_module, args, kwargs):
        kwargs["need_weights"] = True
        return args, kwargs

    def take(index: int):
        def hook(_module, _inputs, output):
            out, weights = output  # (B, N+1, D), (B, h, N+1, N+1)
            if watch is None:
                kept[index] = weights
                return None
            watch(index, out, weights)
            return out, None

        return hook

    handles = []
    try:
        for i, layer in enumerate(layers):
            handles.append(layer.attn.register_forward_pre_hook(ask, with_kwargs=True))
            handles.append(layer.attn.register_forward_hook(take(i)))
        yield kept
    finally:
        for handle in handles:
            handle.remove()


RowsWatch = Callable[[int, int, Tensor], None]  # (layer index, 0-based; first row of the block; weights (B, h, R, T))


def attention_by_row_blocks(q: Tensor, k: Tensor, v: Tensor, watch: Callable[[int, Tensor], None]) -> Tensor:
    """softmax(q kᵀ / √d) v, a block of R query rows at a time: (B, h, Tq, D/h), (B, h, T, D/h) x 2 -> (B, h, Tq, D/h).
    Each (B, h, R, T) block is shown to ``watch(start, weights)``, which must not keep it: the next one overwrites it.
    """
    B, h, rows, d = q.shape
    tokens = k.shape[-2]
    blocks = -(-rows // max(1, ROW_BLOCK_BYTES // (4 * B * h * tokens)))
    block = -(-rows // blocks)  # rows per block, as even as can be
    # (Bh, T, d): each made contiguous once per layer, not per block; q and k in float32 once, as their weights are
    q, k, v = q.float().flatten(0, 1), k.float().flatten(0, 1), v.flatten(0, 1)
    buffer = q.new_empty(B * h * block * tokens)  # every block's weights in turn
    out = v.new_empty(B, rows, h, d)  # (B, Tq, h, D/h): the attention joins the heads without a copy
    for start in range(0, rows, block):
        r = min(block, rows - start)
        w = attention_weights(q[:, start : start + r], k, out=buffer[: B * h * r * tokens].view(B * h, r, tokens))
        watch(start, w.unflatten(0, (B, h)))  # (B, h, R, T)
        out[:, start : start + r] = (w.to(v.dtype) @ v).unflatten(0, (B, h)).transpose(1, 2)  # -> (B, R, h, D/h)
    return out.transpose(1, 2)  # (B, h, Tq, D/h)


class RowBlocks(nn.Module):
    """An attention's ``attend`` while :func:`attention_streamed` is open. Once closed it passes every call on to
    the module it replaced, so the plain attention is computed even if a trace on another thread left it in place."""

    def __init__(self, replaced: nn.Module, watch: Callable[[int, Tensor], None]):
        super().__init__()
        self.replaced, self.watch, self.closed = replaced, watch, False

    def forward(self, q: Tensor, k: Tensor, v: Tensor, need_weights: bool = False) -> tuple[Tensor, None]:
        if self.closed:
            return self.replaced(q, k, v, need_weights)
        return attention_by_row_blocks(q, k, v, self.watch), None  # no dropout: for looking inside, not training


@contextmanager
def attention_streamed(layers: Sequence[nn.Module], watch: RowsWatch) -> Iterator[None]:
    """While open, every block's attention runs by :func:`attention_by_row_blocks`, each block of weights shown to
    ``watch(index, start, weights)``. Module state, as hooks are: one traced run at a time per model (the lock)."""
    swapped = []
    try:
        for i, layer in enumerate(layers):
            attn = layer.attn
            rows = RowBlocks(attn.attend, lambda start, weights, i=i: watch(i, start, weights))
            attn.attend = rows
            swapped.append((attn, rows))
        yield
    finally:
        for attn, rows in reversed(swapped):
            rows.closed = True
            while isinstance(attn.attend, RowBlocks) and attn.attend.closed:  # ours, and any closed before it
                attn.attend = attn.attend.replaced


@dataclass(frozen=True)
class Stage:
    """One row of the stage table."""

    name: str  # what the chapter calls it
    module: str  # where it is in the model ("encoder.layers.0.attn")
    notation: str  # the chapter's shape notation
    shape: tuple[int, ...]  # the real shape
    params: int  # parameters of the module that produced it
    layer: int | None = None  # 1-based encoder block ("layer 1" = encoder.layers.0); None outside the encoder


def counted_params(stages: list[Stage]) -> list[int]:
    """Each stage's parameters not already counted by an earlier (overlapping) stage: they sum to the model's. A
    stage around earlier ones adds what they did not count (a block's two LayerNorms)."""

    def inside(module: str, outer: str) -> bool:
        return module == outer or module.startswith(outer + ".")

    counted: list[tuple[str, int]] = []  # (module, parameters counted for it)
    out = []
    for s in stages:
        if s.params == 0 or any(inside(s.module, m) for m, _ in counted):
            out.append(0)
            continue
        new = s.params - sum(n for m, n in counted if inside(m, s.module))
        counted.append((s.module, new))
        out.append(new)
    return out


def wide(t: Tensor) -> Tensor:
    """A tensor the record keeps, in float32 where the model runs narrower (bfloat16); float64 stays float64."""
    return t if t.dtype in (torch.float32, torch.float64) or not t.is_floating_point() else t.float()


@dataclass
class TraceRecord:
    stages: list[Stage] = field(default_factory=list)
    fused: Tensor | None = None  # (L, B, N+1, N+1): fusions[head_fusion]
    fusions: dict[str, Tensor] = field(default_factory=dict)  # fusion -> (L, B, N+1, N+1)
    cls_attention: list[Tensor] = field(default_factory=list)  # L x (B, h, N+1)
    queries: list[Tensor] = field(default_factory=list)  # L x (B, N+1, D)
    keys: list[Tensor] = field(default_factory=list)  # L x (B, N+1, D)
    cls_tokens: list[Tensor] = field(default_factory=list)  # L x (B, D)
    residual: Tensor | None = None  # (L, B, 4): mean ||X||, ||MSA(LN(X))||, ||MLP(LN(H))||, ||Y|| per block
    token_norms: Tensor | None = None  # (L, B, N+1): ||Y_i|| of each block's output tokens
    lens_index: Tensor | None = None  # (L, B, N) int64: top-1 class of head(norm(Y_i)) for each patch token
    lens_prob: Tensor | None = None  # (L, B, N) float32: its probability
    attention_distance: Tensor | None = None  # (L, B, h): mean attention distance in pixels
    logits: Tensor | None = None  # (B, K)
    layer_logits: list[Tensor] = field(default_factory=list)  # L x (B, K): each block's early exit, the model's head


# Columns of TraceRecord.residual, in the order the block computes them.
RESIDUAL_PARTS = ("stream", "attention", "mlp", "output")


def _params(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


class Tracer:
    """``with Tracer(model) as record: model(x)`` fills ``record`` (a :class:`TraceRecord`); ``fusions`` are kept
    in ``fused_dtype`` (float16 in ``vit.analyze``: rollout within 1e-3 of float32's)."""

    def __init__(self, model: ViTForImageClassification, head_fusion: str = "mean", keep_qk: bool = True,
                 fusions: Sequence[str] = HEAD_FUSIONS, fused_dtype: torch.dtype = torch.float32):
        if not isinstance(model, nn.Module):
            raise TypeError(f"Tracer takes the nn.Module (loaded.module), got {type(model).__name__}")
        for fusion in (head_fusion, *fusions):
            if fusion not in HEAD_FUSIONS:
                raise ValueError(f"head_fusion must be one of {', '.join(HEAD_FUSIONS)}, got {fusion!r}")
        self.model = model
        self.head_fusion = head_fusion
        self.fusions = tuple(dict.fromkeys((head_fusion, *fusions)))  # each once, head_fusion first
        self.fused_dtype = fused_dtype
        self.keep_qk = keep_qk
        self.record = TraceRecord()
        self._handles: list = []
        self._attention_hooks = ExitStack()
        self._names: dict[nn.Module, str] = {}
        self._grid: tuple[int, int] | None = None  # (rows, cols), from the patch conv's output
        self._distances: Tensor | None = None  # (N, N) pixels between patches, built at the first layer
        self._aside = False  # True while the tracer runs the norm and head itself: an early exit, the lens

    @contextmanager
    def _computing_aside(self) -> Iterator[None]:
        """While open, the hooks on the final norm and the head ignore what runs through them (an early exit)."""
        self._aside = True
        try:
            yield
        finally:
            self._aside = False

    def _stage(self, name: str, module_name: str, notation: str, module: nn.Module, layer: int | None = None):
        def hook(_module, _inputs, output):
            if self._aside:
                return
            self.record.stages.append(
                Stage(name, module_name, notation, tuple(output.shape), _params(module), layer))

        return hook

    def _attention_rows(self, index: int, start: int, weights: Tensor) -> None:
        """One block of a layer's weights, rows start..start+R-1 of (B, h, N+1, N+1), into the record's summaries."""
        weights = wide(weights.detach())  # (B, h, R, T), float32 from a bfloat16 model: fused and summed in float32
        stop = start + weights.shape[-2]
        if start == 0:
            self.record.cls_attention.append(weights[:, :, 0, :].clone())  # (B, h, N+1)
        if not self.record.fusions:
            B, h, T = weights.shape[0], weights.shape[1], weights.shape[-1]
            shape = (self._depth, B, T, T)  # (L, B, N+1, N+1)
            self.record.fusions = {f: weights.new_empty(shape, dtype=self.fused_dtype) for f in self.fusions}
            self.record.fused = self.record.fusions[self.head_fusion]
            self.record.attention_distance = weights.new_zeros(self._depth, B, h)
        for fusion, kept in self.record.fusions.items():  # (B, h, R, T) -> (B, R, T): its rows of layer ``index``
            kept[index, :, start:stop] = fuse_heads(weights, fusion)
        prefix = weights.shape[-1] - self._distances_for(weights).shape[-1]  # T - N
        first = max(start, prefix)  # the block's patch rows: their distances among the patches
        if first < stop:
            rows = weights[:, :, first - start :, prefix:]  # (B, h, R', N): patch rows, patch columns
            distances = self._distances[first - prefix : stop - prefix]  # (R', N)
            self.record.attention_distance[index] += distance_sums(rows, distances)  # (B, h)

    def _distances_for(self, weights: Tensor) -> Tensor:
        """d_ij between the patches of this run's grid, in pixels: (N, N), built once."""
        if self._distances is None:
            self._distances = patch_distances(self._grid, self.model.config.patch_size, weights.device)
        return self._distances

    def _attention_out(self, index: int):
        """After a layer's attention: its stage, the mean distance, and MSA(LN(X)) before it joins the stream."""
        layer = index + 1
        attn = self.model.encoder.layers[index].attn

        def hook(_module, _inputs, output):
            out, _ = output  # (B, N+1, D)
            B, T = out.shape[:2]
            self.record.stages.append(Stage(f"layer {layer} attention weights", self._names[attn],
                                            "(B, h, N+1, N+1)", (B, attn.num_heads, T, T), _params(attn), layer))
            self.record.attention_distance[index] /= self._distances.shape[-1]  # a mean over the N query patches
            self._residual(layer, 1, out)

        return hook

    @property
    def _depth(self) -> int:
        return len(self.model.encoder.layers)

    def _residual(self, layer: int, part: int, x: Tensor) -> Tensor:
        """Record the mean over the tokens of ||x_i||_2 for ``RESIDUAL_PARTS[part]``; returns ||x_i||: (B, N+1)."""
        norms = torch.linalg.vector_norm(x.detach().float(), dim=-1)  # (B, N+1, D) -> (B, N+1)
        if self.record.residual is None:
            self.record.residual = norms.new_zeros(self._depth, norms.shape[0], len(RESIDUAL_PARTS))
        self.record.residual[layer - 1, :, part] = norms.mean(dim=-1)  # (B,)
        return norms

    def _block_in(self, layer: int):
        def hook(_module, args):
            self._residual(layer, 0, args[0])  # X, the stream entering the block

        return hook

    def _mlp_out(self, layer: int):
        def hook(_module, _inputs, output):
            self._residual(layer, 2, output)  # MLP(LN(H))

        return hook

    def _grid_of(self, _module, _inputs, output):
        self._grid = tuple(output.shape[-2:])  # (B, D, H/P, W/P) -> (H/P, W/P)

    def _keep(self, store: list):
        def hook(_module, _inputs, output):
            store.append(wide(output.detach()))

        return hook

    def _layer_out(self, layer: int, module_name: str, module: nn.Module):
        stage = self._stage(f"layer {layer} output", module_name, "(B, N+1, D)", module, layer)

        def hook(_module, inputs, output):
            stage(_module, inputs, output)
            self.record.cls_tokens.append(wide(output[:, 0].detach()).clone())  # (B, D)
            # Early exit through the family's own head (DeiT: both heads; DINOv2: with the patch mean).
            with self._computing_aside():
                self.record.layer_logits.append(wide(self.model.classify(output.detach())))  # (B, T, D) -> (B, K)
            norms = self._residual(layer, 3, output)  # Y: (B, N+1)
            if self.record.token_norms is None:
                self.record.token_norms = norms.new_empty(self._depth, *norms.shape)
            self.record.token_norms[layer - 1] = norms
            self._lens(layer, output)

        return hook

    @torch.no_grad()
    def _lens(self, layer: int, output: Tensor) -> None:
        """The early exit of every patch token: top-1 of softmax(head(norm(Y_i))), i = 1..N (after the prefix)."""
        patches = output[:, self.model.config.num_prefix_tokens:].detach()  # (B, T, D) -> (B, N, D)
        with self._computing_aside():  # the norm's and the head's stages are the forward pass's, not the lens'
            logits = classify_each(self.model, patches)  # (B, N, D) -> (B, N, K)
        if logits.shape[-1]:
            prob, index = logits.float().softmax(dim=-1).max(dim=-1)  # (B, N) each
        else:  # a backbone: no class to exit to
            prob, index = patches.new_zeros(patches.shape[:2]), patches.new_zeros(patches.shape[:2], dtype=torch.long)
        if self.record.lens_index is None:
            self.record.lens_index = index.new_empty(self._depth, *index.shape)
            self.record.lens_prob = prob.new_empty(self._depth, *prob.shape)
        self.record.lens_index[layer - 1] = index
        self.record.lens_prob[layer - 1] = prob

    def _image(self, _module, args):
        x = args[0]
        self.record.stages.append(Stage("image", "input", "(B, C, H, W)", tuple(x.shape), 0))

    def _class_token(self, module_name: str):
        def hook(_module, args):
            if not self._aside:
                self.record.stages.append(Stage("class token", module_name, "(B, D)", tuple(args[0].shape), 0))

        return hook

    def _logits(self, module_name: str, module: nn.Module):
        stage = self._stage("logits", module_name, "(B, K)", module)

        def hook(_module, inputs, output):
            if not self._aside:
                stage(_module, inputs, output)
                self.record.logits = wide(output.detach())

        return hook

    def __enter__(self) -> TraceRecord:
        m = self.model
        emb = m.embedding
        names = self._names = {module: name for name, module in m.named_modules()}  # -> "encoder.layers.0.attn"
        add = self._handles.append
        add(m.register_forward_pre_hook(self._image))
        add(emb.patch_embed.proj.register_forward_hook(self._grid_of))
        add(emb.patch_embed.proj.register_forward_hook(
            self._stage("patch conv", names[emb.patch_embed.proj], "(B, D, H/P, W/P)", emb.patch_embed.proj)))
        add(emb.patch_embed.register_forward_hook(
            self._stage("patch tokens", names[emb.patch_embed], "(B, N, D)", emb.patch_embed)))
        add(emb.add_cls_token.register_forward_hook(
            self._stage("with class token", names[emb.add_cls_token], "(B, N+1, D)", emb.add_cls_token)))
        add(emb.pos_embed.register_forward_hook(
            self._stage("with position", names[emb.pos_embed], "(B, N+1, D)", emb.pos_embed)))
        for i, layer in enumerate(m.encoder.layers):
            n = i + 1  # people count layers from 1
            add(layer.register_forward_pre_hook(self._block_in(n)))
            if self.keep_qk:
                add(layer.attn.q_proj.register_forward_hook(self._keep(self.record.queries)))
                add(layer.attn.k_proj.register_forward_hook(self._keep(self.record.keys)))
            add(layer.attn.register_forward_hook(self._attention_out(i)))
            add(layer.mlp.register_forward_hook(self._mlp_out(n)))
            add(layer.mlp.act.register_forward_hook(
                self._stage(f"layer {n} MLP hidden", names[layer.mlp.act], "(B, N+1, 4D)", layer.mlp, n)))
            add(layer.register_forward_hook(self._layer_out(n, names[layer], layer)))
        add(m.encoder.norm.register_forward_hook(
            self._stage("final norm", names[m.encoder.norm], "(B, N+1, D)", m.encoder.norm)))
        # ViTClassificationHead.forward selects the class token (x[:, 0]); head.head only reads it.
        add(m.head.head.register_forward_pre_hook(self._class_token(names[m.head])))
        add(m.head.register_forward_hook(self._logits(names[m.head.head], m.head)))
        self._attention_hooks.enter_context(attention_streamed(m.encoder.layers, self._attention_rows))
        return self.record

    def __exit__(self, *exc) -> None:
        self._attention_hooks.close()
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

