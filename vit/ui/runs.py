"""Running the model for a request: its turn in the fair queue, the weights, progress layer by layer.

One run at a time holds the model (:class:`vit.serve.queue.FairQueue`); a page request that no
longer matters (its tab sent a newer one) waits instead of being refused, and stops at the
next layer once it is no longer wanted.
"""

from __future__ import annotations

import time

from vit import cost as costs
from vit import validate
from vit.ui import gpu, meter
from vit.ui.inputs import load_image
from vit.ui.state import RUNS, fair_queue, kept


def _progress_reporter(progress, label: str):
    def report(done: int, total: int) -> None:
        if total:
            progress((done // 1_000_000, total // 1_000_000), desc=f"downloading the {label} weights", unit="MB")
        else:
            progress(None, desc=f"downloading the {label} weights: {done / 1e6:.0f} MB")

    return report


def run(source, filename, setting, top_k, head_fusion, discard_ratio, progress, session, still_wanted=None):
    """Decode, wait for the model's turn, fetch weights, run: the :class:`vit.Analysis` and timings.

    ``still_wanted()`` (the page) says whether the tab still wants this run; while another run of
    the same tab holds the model, the request waits instead of being refused, and gives up
    when it is no longer wanted (``None`` is returned).
    """
    from vit.serve.queue import Busy  # noqa: PLC0415

    name, patch_size, depth = setting
    c = costs.estimate(name, patch_size, depth)
    costs.check_budget(c)  # before any download or model run
    pil = load_image(source, filename)  # a bad file fails here, before any weights load
    display = c.display_name
    progress(0.02, desc="waiting for the model (one analysis at a time, the quickest first)")
    while True:
        if still_wanted is not None and not still_wanted():
            return None, 0.0
        try:
            with fair_queue().turn(session, meter.estimated_seconds(c)):
                if still_wanted is not None and not still_wanted():
                    return None, 0.0
                progress(0.05, desc=f"loading {display}")
                gpu.fetch_weights(name, _progress_reporter(progress, display))
                progress(0.4, desc=f"running {display} on your image (~{meter.estimated_seconds(c):.0f} s)")
                t1 = time.perf_counter()
                on_layer = _layer_progress(progress, display, still_wanted)
                args = (name, patch_size, depth, pil, top_k, head_fusion, discard_ratio)
                try:
                    # ZeroGPU runs run_model in another process: no callbacks cross.
                    a = gpu.run_model(*args) if gpu.spaces is not None else gpu.run_model(*args, on_layer=on_layer)
                except Superseded:
                    return None, 0.0
                RUNS["model"] += 1
                return a, time.perf_counter() - t1
        except Busy:
            if still_wanted is None:
                raise
            time.sleep(0.05)  # this tab's previous run is finishing; it will be dropped


class Superseded(Exception):
    """A newer request of the same tab arrived: this run stops at the next layer."""


def _layer_progress(progress, display: str, still_wanted):
    """Progress layer by layer; a run the tab no longer wants stops at the next layer."""

    def on_layer(done: int, total: int) -> None:
        if still_wanted is not None and not still_wanted():
            raise Superseded
        progress(0.4 + 0.5 * done / total, desc=f"running {display}: layer {done} of {total}")

    return on_layer


def timing(a, run_s: float, t0: float, t2: float) -> str:
    return (f"Time: model run {1e3 * run_s:.0f} ms (traced forward {a.timings_ms.get('forward_traced', 0):.0f} ms)"
            f" · drawing {1e3 * (time.perf_counter() - t2):.0f} ms · total {1e3 * (time.perf_counter() - t0):.0f} ms")


def with_options(key: str, head_fusion, discard_ratio):
    """The analysis of ``key`` with another head fusion or discard ratio (no model run).

    The kept analysis holds every fusion's maps and remembers its recent variants
    (:meth:`vit.Analysis.with_options`): a variant shares its tensors, so nothing more goes
    into the store, and its rollout rows are computed when first drawn.
    """
    a = kept(key)
    return a.with_options(validate.head_fusion(head_fusion), validate.discard_ratio(discard_ratio))
