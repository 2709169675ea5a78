"""Running the model for a request: its turn in the fair queue, the weights, progress layer by layer. A request
no longer wanted leaves the line or stops at the next layer; a long run gives way there to a quicker one."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from vit import cost as costs
from vit import i18n, validate
from vit.errors import InputError
from vit.serve.prefetch import FETCHES
from vit.serve.queue import Busy, Turn, Withdrawn, take_turn
from vit.serve.sessions import positive_number
from vit.ui import gpu, gradio_internals, inputs, meter, startup
from vit.ui.inputs import Number, load_image
from vit.ui.lang import of as language_of
from vit.ui.lang import progress_in
from vit.ui.state import RUNS, SESSIONS, fair_queue, kept, model_cache, session_of
from vit.validate import Setting

log = logging.getLogger("vit.app")

# Where the progress bar stands (0 to 1) at each stage; the layers take PROGRESS_LAYERS of the bar.
PROGRESS_LOADING, PROGRESS_WAITING, PROGRESS_RUNNING, PROGRESS_LAYERS, PROGRESS_DRAWING = 0.02, 0.05, 0.4, 0.5, 0.8


def _progress_reporter(progress, label: str) -> Callable[[int, int], None]:
    def report(done: int, total: int) -> None:
        if total:
            progress((done // 1_000_000, total // 1_000_000), "progress-downloading", model=label, unit="MB")
        else:
            progress(None, "progress-downloading-mb", model=label, mb=f"{done / 1e6:.0f}")

    return report


def run(source, filename: str | None, setting: Setting, top_k: int, head_fusion: str, discard_ratio: float,
        progress, session: str, still_wanted: Callable[[], bool] | None = None, lang: str = "en"):
    """Decode, fetch the weights, wait for the turn, run: (the Analysis, its seconds), or (None, 0.0) if not wanted."""
    c = costs.estimate(setting)
    costs.check_budget(c)  # before any download or model run
    check_duration(meter.estimated_seconds(c), i18n.text("what-analysis", lang, setting=setting.display_name), lang)
    progress = progress_in(progress, lang)  # told keys, written in the page's language
    reader = gradio_internals.reader()  # a job nobody reads runs for nobody: not decoded, not run
    if not reader.arrives():
        return _gone(still_wanted)
    image = load_image(source, filename, reader)  # decoded once, here: a bad file fails before the weights

    def wanted() -> bool:
        return reader.there() and (still_wanted is None or still_wanted())

    # The weights before the model's turn: a download (or, offline, its failure) never holds the model from others.
    progress(PROGRESS_LOADING, "progress-loading", model=setting.display_name)
    FETCHES.wait(setting.name, lambda report: startup.fetch_weights(setting, report),  # one download, waited on
                 _progress_reporter(progress, setting.display_name))  # by a bounded share of the model's handlers
    seconds = turn_seconds(setting, c)
    progress(PROGRESS_WAITING, "progress-waiting")
    in_line = _waiting_progress(progress, PROGRESS_WAITING)
    try:
        with take_turn(fair_queue(), session, seconds, give_up=lambda: still_wanted is None or not wanted(),
                       resource=setting, wanted=wanted, report=in_line) as turn:
            if not wanted():
                return _gone(still_wanted)
            progress(PROGRESS_RUNNING, "progress-running", model=setting.display_name, seconds=f"{seconds:.0f}")
            # The meter learns this machine's speed from runs of a model already built (a build is not the run's
            # FLOPs); not on ZeroGPU, whose time is the GPU's allocation.
            learn = gpu.spaces is None and not model_cache().build_estimate(setting).seconds
            t1 = time.perf_counter()
            timed = _TimedTurn(turn)  # the seconds it gives its turn away to quicker runs are not the model's
            # ZeroGPU runs run_model in another process: no callbacks cross.
            on_layer = None if gpu.spaces is not None else _layer_progress(progress, setting.display_name, wanted,
                                                                           timed)
            a = gpu.run_model(setting, image, top_k, head_fusion, discard_ratio,
                              **({} if on_layer is None else {"on_layer": on_layer}))
            RUNS["model"] += 1
            run_s = time.perf_counter() - t1
            if learn:
                meter.record_run(c, run_s - timed.paused)
            return a, run_s
    except (Superseded, Withdrawn):
        return _gone(still_wanted)  # no longer wanted: a newer request of the session, or its client is gone
    except Busy:
        if still_wanted is None:
            raise
        return None, 0.0  # this session's previous run was still finishing, and this one is no longer wanted


class _TimedTurn:
    """A :class:`~vit.serve.queue.Turn` adding up the seconds it gave way: the meter learns the model's own time."""

    def __init__(self, turn: Turn):
        self.turn, self.paused = turn, 0.0

    def give_way(self, *args, **kwargs) -> bool:
        t = time.perf_counter()
        try:
            return self.turn.give_way(*args, **kwargs)
        finally:
            self.paused += time.perf_counter() - t


def turn_seconds(setting: Setting, c: costs.Cost, cache=None) -> float:
    """The seconds a run holds the model: the forward, plus the build where ``cache`` lacks it (not on ZeroGPU)."""
    seconds = meter.estimated_seconds(c)
    if gpu.spaces is not None:
        return seconds
    build = (cache if cache is not None else model_cache()).build_estimate(setting)  # an empty cache is falsy
    if build.seconds:
        log.info("%s is not in the model cache: its build adds ~%.1f s and ~%.1f GB to the run's estimate",
                 setting.display_name, build.seconds, build.nbytes / 1e9)
    return seconds + build.seconds


MAX_RUN_ENV = "VIT_MAX_RUN_S"
MAX_RUN_S = 300.0  # the longest model work one action may ask for, estimated (head importance at ViT-B/16, P = 8: ~160)


def max_run_s() -> float:
    """One action's longest estimated model time: ``$VIT_MAX_RUN_S`` (checked at start), else :data:`MAX_RUN_S`."""
    return positive_number(os.environ, MAX_RUN_ENV, MAX_RUN_S, "seconds")


def check_duration(seconds: float, what: str, lang: str = "en") -> None:
    """Refuse up front an action estimated over :func:`max_run_s`: it would hold the model from the whole class."""
    limit = max_run_s()
    if seconds > limit:
        raise InputError(i18n.text("too-long", lang, what=what, seconds=seconds, limit=limit, env=MAX_RUN_ENV))


class ClientGone(InputError):
    """An API request whose client stopped reading its event stream: it is not run (or stops at a layer)."""


GONE = "Nobody was reading this request's answer any more: it was stopped."


def _gone(still_wanted: Callable[[], bool] | None):
    """A run no longer wanted: the page's gets nothing; an API one, whose caller awaits an analysis, is refused."""
    if still_wanted is None:
        raise ClientGone(GONE)
    return None, 0.0


class Superseded(Exception):
    """A newer request of the same session arrived, or its page is gone: this run stops at the next layer."""


def _waiting_progress(progress, where: float, paused_at: tuple[int, int] | None = None) -> Callable[[int, float], None]:
    """The progress text while in line, before the run or paused after layer ``paused_at`` (n, total)."""

    def report(place: int, seconds: float) -> None:
        if paused_at is None:
            key, fields = meter.waiting_message(place, seconds)
            progress(where, key, **fields)
        else:
            progress(where, "progress-paused", n=paused_at[0], total=paused_at[1],
                     waiting=meter.waiting_words(place, seconds, progress.lang))

    return report


def _layer_progress(progress, display: str, wanted: Callable[[], bool], turn: Turn) -> Callable[[int, int], None]:
    """Progress per layer; there a run no longer wanted stops, and a long one gives way to a quicker one."""

    def on_layer(done: int, total: int) -> None:
        if not wanted():
            raise Superseded
        where = PROGRESS_RUNNING + PROGRESS_LAYERS * done / total
        progress(where, "progress-layer", model=display, n=done, total=total)
        if done < total and turn.give_way(wanted, _waiting_progress(progress, where, (done, total))):
            progress(where, "progress-layer", model=display, n=done, total=total)

    return on_layer


def timing(a, run_s: float, t0: float, t2: float, lang: str = "en") -> str:
    return i18n.text("timing", lang, **timing_fields(a, run_s, t0, t2))


def timing_fields(a, run_s: float, t0: float, t2: float) -> dict:
    """A run's timing line's numbers (ms), kept so that the line is written again in another language."""
    return dict(dtype=a.dtype, run=1e3 * run_s, traced=a.timings_ms.get("forward_traced", 0),
                drawing=1e3 * (time.perf_counter() - t2), total=1e3 * (time.perf_counter() - t0))


def with_options(key: str, head_fusion: str, discard_ratio: Number):
    """``key``'s analysis with another head fusion or discard ratio: a variant sharing its tensors, no model run."""
    a = kept(key)
    return a.with_options(validate.head_fusion(head_fusion), validate.discard_ratio(discard_ratio))


PATIENCE_S = 120.0  # how long a tab's model work waits for its session's own run to finish before giving up
# Each tab's model work: (what a refusal over the time limit calls it, its counter in vit.ui.state.RUNS).
WORK = {"why": ("what-explanation", "explain"), "whatif": ("what-action", "whatif")}


def shown_image(request, image: object, key: str, tab: str) -> tuple:
    """(Setting, decoded image) of the analysis shown; refused (``<tab>-changed``) if the page shows another."""
    session = SESSIONS.get(session_of(request))
    if image is None or session.shown is None or session.key != key or session.shown.image != inputs.image_id(image):
        raise InputError(i18n.text(f"{tab}-changed", language_of(request)))
    source, filename = inputs.image_source(image)
    return meter.analysis_setting(kept(key)), load_image(source, filename)


@contextmanager
def model_turn(request, image: object, key: str, factor: float, what: str, progress, tab: str,
               running: str = "progress-method-running") -> Iterator[tuple]:
    """A tab's model work (``factor`` forward passes) in its turn, refused over the time limit: (setting, PIL)."""
    lang = language_of(request)
    progress = progress_in(progress, lang)  # its words in the page's language
    setting, pil = shown_image(request, image, key, tab)
    seconds = meter.estimated_seconds(costs.estimate(setting)) * factor
    words, counter = WORK[tab]
    check_duration(seconds, i18n.text(words, lang), lang)
    progress(0.05, "progress-method-waiting", what=what)
    deadline = time.monotonic() + PATIENCE_S
    with take_turn(fair_queue(), session_of(request), seconds, give_up=lambda: time.monotonic() > deadline):
        progress(0.3, running, what=what, seconds=f"{max(seconds, 0.1):.1f}")
        yield setting, pil
        RUNS[counter] += 1
