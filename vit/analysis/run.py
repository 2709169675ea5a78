"""``analyze``: one image through the model under the tracer, into an :class:`~vit.analysis.record.Analysis`.

    >>> import vit
    >>> result = vit.analyze(vit.load_model("vit_b_16"), "assets/cat.jpg")
    >>> result.topk[0].label, result.rollout().shape
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import contextmanager

import torch

from vit import validate
from vit.analysis.record import Analysis, LayerPrediction, Prediction
from vit.analysis.trace import Tracer, TraceRecord
from vit.config import display_name
from vit.cost import check_budget, estimate, fused_itemsize
from vit.model import precision
from vit.model.loaded import LoadedModel, ModelInput


@torch.inference_mode()
def analyze(
    loaded: LoadedModel,
    image,
    top_k: int | None = None,
    head_fusion: str = "mean",
    discard_ratio: float = 0.0,
    on_layer: Callable[[int, int], None] | None = None,
) -> Analysis:
    """Run the model on one image under the tracer: an :class:`Analysis` with every view's numbers. Every head
    fusion is kept (``Analysis.with_options``); ``on_layer(layers_done, L)`` may raise to stop the run."""
    if not isinstance(loaded, LoadedModel):
        raise TypeError(f"analyze takes what vit.load_model returns (a LoadedModel), got {type(loaded).__name__}")
    cfg, model = loaded.config, loaded.module
    top_k = validate.top_k(top_k, cfg.num_classes) if cfg.has_classifier else 0  # a backbone predicts nothing
    head_fusion = validate.head_fusion(head_fusion)
    discard_ratio = validate.discard_ratio(discard_ratio)
    check_budget(estimate(loaded.setting))  # refuse before anything runs
    timings = {}
    t0 = time.perf_counter()
    inp = loaded.input(image)
    x = inp.x  # (1, C, H, W)
    t1 = time.perf_counter()
    timings["preprocess"] = (t1 - t0) * 1e3

    # Every fusion's maps, for display-only changes; float16 when large (vit.cost.fused_itemsize): rollout
    # from them stays within 1e-3 of float32's, and fused attention rows are fused in float32 from the heads.
    fused_dtype = torch.float32 if fused_itemsize(cfg.num_layers, cfg.num_tokens) == 4 else torch.float16
    tracer = Tracer(model, head_fusion=head_fusion, fused_dtype=fused_dtype)
    with loaded.lock, tracer as record, _each_layer(model, on_layer):
        model(x)
    t2 = time.perf_counter()
    timings["forward_traced"] = (t2 - t1) * 1e3

    result = _analysis(loaded, inp, record, top_k, head_fusion, discard_ratio)  # rollout: when first asked for
    timings["explain"] = (time.perf_counter() - t2) * 1e3
    timings["total"] = (time.perf_counter() - t0) * 1e3
    result.timings_ms = timings
    return result


def _analysis(loaded: LoadedModel, inp: ModelInput, record: TraceRecord, top_k: int, head_fusion: str,
              discard_ratio: float) -> Analysis:
    """The :class:`Analysis` of one traced run: predictions, early exits, and what the tracer kept for image 0."""
    cfg, x, names = loaded.config, inp.x, loaded.class_names
    probs = record.logits[0].float().softmax(-1).cpu()  # (K,); (0,) for a backbone
    values, indices = probs.topk(top_k)
    topk = [Prediction(int(i), names[i], float(p)) for p, i in zip(values, indices)]
    layer_predictions = []
    if cfg.has_classifier:  # early exit through the family's own head, as the tracer computed it: (L, K)
        layer_probs = torch.stack([t[0] for t in record.layer_logits]).float().softmax(-1).cpu()
        final = topk[0].index
        layer_predictions = [
            LayerPrediction(l + 1, int(p.argmax()), names[int(p.argmax())], float(p.max()), float(p[final]))
            for l, p in enumerate(layer_probs)
        ]
    return Analysis(
        model=loaded.name,
        display_name=display_name(loaded.name),
        weights=loaded.weights,
        status=loaded.status,
        dtype=precision.name(loaded.dtype),
        patch_size=cfg.patch_size,
        depth=cfg.num_layers,
        num_heads=cfg.num_heads,
        input_size=(x.shape[-2], x.shape[-1]),
        grid=(x.shape[-2] // cfg.patch_size, x.shape[-1] // cfg.patch_size),
        image=inp.view,
        stages=record.stages,
        probs=probs,
        topk=topk,
        layer_predictions=layer_predictions,
        cls_attention=torch.stack([a[0] for a in record.cls_attention]).cpu(),  # (L, h, N+1)
        # The large ones stay on the model's device: the views' rows and maps are computed there, and only
        # what a view draws is copied back (Analysis.on_cpu() moves them all, for a process without the device).
        fusions={f: maps[:, 0] for f, maps in record.fusions.items()},  # each (L, N+1, N+1)
        queries=[q[0] for q in record.queries],
        keys=[k[0] for k in record.keys],
        head_fusion=head_fusion,
        discard_ratio=discard_ratio,
        source_size=inp.source_size,
        residual_means=record.residual[:, 0].cpu(),  # (L, 4)
        token_norms=record.token_norms[:, 0].cpu(),  # (L, N+1)
        attention_distance=record.attention_distance[:, 0].cpu(),  # (L, h)
        lens_index=record.lens_index[:, 0].cpu(),  # (L, N)
        lens_prob=record.lens_prob[:, 0].cpu(),  # (L, N)
        prefix_token_names=cfg.prefix_token_names,
        has_classifier=cfg.has_classifier,
    )


@contextmanager
def _each_layer(model, on_layer: Callable[[int, int], None] | None):
    """Call ``on_layer(n, L)`` after each of the L encoder blocks while the context is open."""
    layers = list(model.encoder.layers)
    handles = [] if on_layer is None else [
        layer.register_forward_hook(lambda *_, n=n: on_layer(n, len(layers))) for n, layer in enumerate(layers, 1)]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
