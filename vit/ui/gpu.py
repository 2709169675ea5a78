"""The model work of a request: under ZeroGPU's ``spaces.GPU`` on a ZeroGPU Space, for a duration computed from the
setting's cost (docs/performance.md, "ZeroGPU durations"); an ordinary call everywhere else."""

from __future__ import annotations

import logging
import math
from contextlib import nullcontext

from vit import cost as costs
from vit.explanations.methods import forward_passes
from vit.ui import meter, state
from vit.validate import Setting

try:  # Hugging Face's ZeroGPU package: there on Spaces, needed nowhere else (app.py imports it before torch)
    import spaces
except ImportError:
    spaces = None

log = logging.getLogger("vit.app")

# How long a run may hold a ZeroGPU GPU (zerogpu_seconds), from the setting's cost: docs/performance.md.
ZEROGPU_START_S = 10.0  # ZeroGPU forks its GPU worker and starts CUDA before our code runs
ZEROGPU_LOAD_BYTES_PER_S = 0.5e9  # checkpoint from the disk cache to a model on the GPU: read, resample, copy
ZEROGPU_KEPT_BYTES_PER_S = 1.0e9  # kept maps to host memory (1.5 GB/s measured), then to the server process
ZEROGPU_MARGIN = 2.0  # a slice of a shared machine: twice the estimate before ZeroGPU stops a run
# A curve's batch of perturbed images, against one forward pass (a map's own: methods.forward_passes).
CURVES_FACTOR = 8.0


def gpu(duration):
    """``spaces.GPU(duration=duration)`` where the ``spaces`` package is installed, else the function as it is."""
    if spaces is None:
        return lambda fn: fn
    return spaces.GPU(duration=duration)


def zerogpu_seconds(c: costs.Cost) -> int:
    """How long a run of ``c`` may hold a ZeroGPU GPU: start-up, model onto the GPU, the run (docs/performance.md)."""
    load = c.weights_bytes / ZEROGPU_LOAD_BYTES_PER_S
    run = c.gflops / meter.GPU_GFLOPS + c.kept_bytes / ZEROGPU_KEPT_BYTES_PER_S
    return math.ceil(ZEROGPU_START_S + ZEROGPU_MARGIN * (load + run))


def gpu_seconds(setting: Setting, *_, **__) -> int:
    """:func:`run_model`'s ZeroGPU duration: ``spaces.GPU`` calls it with the run's own arguments."""
    return zerogpu_seconds(costs.estimate(setting))


@gpu(duration=gpu_seconds)
def run_model(setting: Setting, image, top_k: int, head_fusion: str, discard_ratio: float, on_layer=None):
    """The GPU work of one analysis, in its fair-queue turn: the model from the model cache, the traced run.

    On ZeroGPU it runs in the GPU worker (``on_layer`` cannot cross) and builds the model here, not at import as
    ZeroGPU's docs prefer: the setting is known per request only."""
    from vit.analysis import run  # noqa: PLC0415 - imports torch

    loaded = state.model_cache().get(setting, "imagenet")
    if loaded.status != loaded.status_detail:
        log.warning("%s: %s", setting.display_name, loaded.status_detail)  # the whole reason, for the teacher's log
    a = run.analyze(loaded, image, top_k=top_k, head_fusion=head_fusion, discard_ratio=discard_ratio,
                    on_layer=on_layer)
    return a if spaces is None else a.on_cpu()  # ZeroGPU pickles it to the server's process, which has no GPU


def explain_seconds(setting: Setting, image=None, method: str = "", *_, **__) -> int:
    """:func:`run_explanation`'s ZeroGPU duration: an analysis's, plus the method's and the curves' passes."""
    c = costs.estimate(setting)
    grid = setting.config.grid_size
    return zerogpu_seconds(c) + math.ceil(ZEROGPU_MARGIN * (forward_passes(method, grid, grid) + CURVES_FACTOR)
                                          * c.gflops / meter.GPU_GFLOPS)


@gpu(duration=explain_seconds)
def run_explanation(setting: Setting, image, method: str, target: int, curves: bool = False,
                    baseline: str = "mean", layer: int | None = None, versus: int | str | None = None):
    """The GPU work of "Why this class?", as :func:`run_model`'s: (Explanation, {(mode, order): Curve} or {})."""
    from vit.explanations.maps import explain  # noqa: PLC0415 - imports torch
    from vit.explanations.perturb import perturbation_curves  # noqa: PLC0415

    loaded = state.model_cache().get(setting, "imagenet")
    e = explain(loaded, inp := loaded.input(image), method=method, target=target, layer=layer,  # preprocessed once
                versus=versus)
    return e, (perturbation_curves(loaded, inp, e, e.target, baseline=baseline) if curves else {})


def intervene_seconds(setting: Setting, *_, **__) -> int:
    """:func:`run_intervention`'s ZeroGPU duration: an analysis' allowance and three forward passes more."""
    c = costs.estimate(setting)
    return zerogpu_seconds(c) + math.ceil(ZEROGPU_MARGIN * 3 * c.gflops / meter.GPU_GFLOPS)


@gpu(duration=intervene_seconds)
def run_intervention(setting: Setting, image, removed: list[int], ablated: list[tuple[int, int]], ablation: str,
                     grey: bool):
    """The GPU work of "What if?": a :class:`vit.Intervention`, as :func:`run_model` runs an analysis."""
    from vit.interventions.run import intervene  # noqa: PLC0415 - imports torch

    loaded = state.model_cache().get(setting, "imagenet")
    return intervene(loaded, image, remove=removed, ablate=ablated, ablation=ablation, grey=grey)


def importance_seconds(setting: Setting, *_, **__) -> int:
    """:func:`run_head_importance`'s ZeroGPU duration: h (L + 1) / 2 forward passes."""
    c = costs.estimate(setting)
    forwards = setting.native.num_heads * (setting.depth + 1) / 2
    return zerogpu_seconds(c) + math.ceil(ZEROGPU_MARGIN * forwards * c.gflops / meter.GPU_GFLOPS)


@gpu(duration=importance_seconds)
def run_head_importance(setting: Setting, image, target: int, ablation: str, on_layer=None, turn=None):
    """The GPU work of "Head importance": the (L, h) drops (``on_layer``: progress; ``turn``: the model's turn, taken
    anew for each layer; both in this process only, where the caller takes no turn around it)."""
    from vit.interventions.run import head_importance  # noqa: PLC0415 - imports torch

    loaded = state.model_cache().get(setting, "imagenet")
    return head_importance(loaded, image, target=target, ablation=ablation, on_layer=on_layer,
                           turn=turn or nullcontext, batch=1 if turn else None)  # a turn: one head at a time
