"""The text around the pictures: the cost meter, the weights banner, the out-of-date notice.

Pure functions of a setting or an analysis (torch-free: the meter answers before torch loads).
"""

from __future__ import annotations

import html
import os
import re
import statistics
import sys
import threading
from collections import deque

from vit import cost as costs
from vit import i18n
from vit.config import DISPLAY_NAMES, display_name, native_config
from vit.errors import InputError
from vit.model.families import is_trained_here
from vit.validate import Setting

# Throughput of the traced forward pass on a CPU core, measured with torch 2 on 2 cores:
# ViT-B/16 at 224 px (35 GFLOPs) takes 0.45 s. Used only to say what will be slow.
CPU_GFLOPS_PER_CORE = 38.0
GPU_GFLOPS = 20_000.0
SLOW_S = 2.0  # above this a setting waits for the Analyze button, and the meter says so
# The meter learns from this server's own recent analyses: the fixed rate above was 2.5-2.7x too fast for
# ViT-B/16 on a loaded 2-core machine (classroom review, 2026-12-04). Each analysis long enough to be mostly
# arithmetic records how much longer it took than the fixed rate says; estimates are scaled by the median of
# the last RECENT_RUNS (a median: one run slowed by a model build or a burst of load moves it little).
RECENT_RUNS = 20
LEARN_FROM_S = 0.05  # runs the fixed rate puts under this are mostly overhead, not FLOPs: not learnt from
SLOWDOWN_BOUNDS = (0.25, 16.0)  # the learnt factor never goes beyond these, whatever the record says
TRAINED_MODEL = DISPLAY_NAMES["vit_tiny_shapes"]  # offered when ImageNet weights cannot be had


def hardware(lang: str = "en") -> tuple[str, float]:
    """("a 2-core CPU", GFLOP/s) for the machine this server runs on, in ``lang``; torch is not imported for it."""
    if _cuda():
        return i18n.text("hw-gpu", lang), GPU_GFLOPS
    return i18n.text("hw-cpu", lang, cores=_cores()), CPU_GFLOPS_PER_CORE * _cores()


def _cuda() -> bool:
    """Whether torch, if something imported it, sees a GPU. Another thread may still be importing it (the startup
    download, the pre-warm): ``import`` waits for that import to finish, where ``sys.modules`` would hand over a
    half-initialised module (AttributeError: partially initialized module 'torch' has no attribute 'cuda')."""
    if "torch" not in sys.modules:
        return False
    import torch  # noqa: PLC0415 - imported already (or being imported): this waits for it, nothing more

    return torch.cuda.is_available()


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class RunRecord:
    """A small bounded record of this server's recent analyses: how many times longer each model run took than
    the fixed rate (:func:`hardware`) estimated. Thread-safe: the server's runs finish in several threads."""

    def __init__(self, size: int = RECENT_RUNS):
        self._ratios: deque[float] = deque(maxlen=size)
        self._lock = threading.Lock()

    def add(self, gflops: float, seconds: float) -> None:
        """A finished model run of ``gflops`` GFLOPs that took ``seconds`` (the model's time, not the queue's)."""
        fixed = gflops / hardware()[1]
        if fixed >= LEARN_FROM_S and seconds > 0:
            with self._lock:
                self._ratios.append(seconds / fixed)

    def slowdown(self) -> float:
        """The median measured / fixed-rate time of the recent runs (bounded by :data:`SLOWDOWN_BOUNDS`);
        1.0 before any run."""
        with self._lock:
            ratios = list(self._ratios)
        if not ratios:
            return 1.0
        low, high = SLOWDOWN_BOUNDS
        return min(high, max(low, statistics.median(ratios)))

    def clear(self) -> None:
        with self._lock:
            self._ratios.clear()

    def __len__(self) -> int:
        return len(self._ratios)


RECENT = RunRecord()  # this server's


def record_run(c: costs.Cost, seconds: float) -> None:
    """Learn from an analysis of cost ``c`` whose model run took ``seconds`` here (:data:`RECENT`)."""
    RECENT.add(c.gflops, seconds)


def estimated_seconds(c: costs.Cost) -> float:
    """The model time of a run of cost ``c`` on this server: its FLOPs at the fixed rate of :func:`hardware`,
    scaled by what the recent runs here took (:meth:`RunRecord.slowdown`)."""
    return c.gflops / hardware()[1] * RECENT.slowdown()


def over_budget(c: costs.Cost) -> bool:
    return c.peak_bytes > costs.MEMORY_BUDGET_GB * 1e9  # read at call time: tests and admins change it


def cost_markdown(c: costs.Cost, shown: bool = False, lang: str = "en") -> str:
    """The cost meter: tokens, attention entries, GFLOPs, and a warning when it will be slow.

    ``shown``: the pictures show this setting already, so a slow one no longer asks for Analyze.
    """
    where, _ = hardware(lang)
    seconds = estimated_seconds(c)
    time = i18n.text("about-seconds", lang, seconds=seconds) if seconds >= 0.05 else i18n.text("under-a-tenth", lang)
    mb = c.kept_bytes / 1e6
    lines = [
        i18n.text("meter-setting", lang, model=model_words(c.name, c.display_name, lang), P=c.patch_size,
                  native=c.native_patch_size, L=c.depth, grid=c.grid, size=c.input_size),
        i18n.text("meter-tokens", lang, tokens=f"{c.tokens:,}", per_head=f"{c.attention_per_head:,}",
                  total=f"{c.attention_total:,}"),
        i18n.text("meter-flops", lang, gflops=f"{c.gflops:,.1f}", time=time, where=where,
                  mb=f"{mb:,.0f}" if mb >= 1 else f"{mb:.1f}"),
    ]
    if over_budget(c):
        lines.append(i18n.text("meter-too-big", lang, gb=c.peak_bytes / 1e9, limit=costs.MEMORY_BUDGET_GB))
    elif seconds > SLOW_S and not shown:
        lines.append(i18n.text("meter-slow", lang, seconds=seconds, where=where))
    return "\n\n".join(lines)


def cost_meter(setting: Setting | str, patch_size=None, depth=None, shown: bool = False, lang: str = "en") -> str:
    """The cost meter for a :class:`~vit.validate.Setting` (or a model name, patch size and depth to validate
    first); a bad setting is described instead of raised."""
    try:
        return cost_markdown(costs.estimate(setting, patch_size, depth), shown, lang)
    except InputError as exc:
        return f"⚠ {exc}"


def setting_words(setting: Setting, lang: str = "en") -> str:
    """"ViT-B/16, P = 16, L = 12": how the banner and the notice name a setting (the model as ``lang`` names it)."""
    return f"{model_words(setting.name, setting.display_name, lang)}, P = {setting.patch_size}, L = {setting.depth}"


def model_words(name: str, display: str, lang: str = "en") -> str:
    """Model ``name``'s name in ``lang``: the page's own where it has one (``model-<name>`` in
    :data:`vit.i18n.PAGE`, the menu's label: "ViT-Tiny 形状，在这里训练"), else ``display`` ("ViT-B/16")."""
    words = i18n.PAGE.get(f"model-{name}")
    return words[i18n.language(lang)] if words else display


def analysis_setting(a) -> Setting:
    """The setting an analysis ran at (valid: it ran)."""
    return Setting(a.model, a.patch_size, a.depth)


def banner_html(analysis=None, lang: str = "en") -> str:
    """The weights banner: which weights run and what the pictures show, in a colour and a word.

    In English it says the model's own status; in Chinese, a summary of it (what was loaded and changed)."""
    offer, shows = "", ""
    if analysis is None:
        kind, head, text = "idle", i18n.text("banner-idle-head", lang), i18n.text("banner-idle", lang)
    else:
        native = native_config(analysis.model)
        text = analysis.status if i18n.language(lang) == "en" else status_words(analysis, native, lang)
        pretrained = i18n.text("banner-trained-here" if analysis.weights == "trained" else "banner-pretrained", lang)
        if analysis.weights == "random":
            kind, head = "bad", i18n.text("banner-untrained", lang)
            text = re.sub(r"^UNTRAINED:?\s*", "", text)
            offer = trained_offer(analysis.model)
        elif (analysis.patch_size, analysis.depth) != (native.patch_size, native.num_layers):
            kind, head = "warn", i18n.text("banner-modified", lang, head=pretrained)
        else:
            kind, head = "ok", pretrained
        setting = setting_words(analysis_setting(analysis), lang)
        setting += "" if analysis.dtype == "float32" else f", {analysis.dtype}"  # where not the reference
        head = i18n.text("banner-showing", lang, head=head, setting=setting)
        shows = f' data-setting="{html.escape(setting)}"'  # what a pinned copy of a picture says it shows (PIN_JS)
    body = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text.replace("->", "→")))
    if kind == "bad":  # why a download failed is for the teacher: in smaller print
        body = re.sub(r" \([^()]{40,}\)", lambda m: f'<span class="detail">{m.group(0)}</span>', body)
    return banner_div(kind, f"<b>{html.escape(head)}</b> · {body}{offer}", shows)


def banner_div(kind: str, inner: str, attributes: str = "") -> str:
    """The banner's box. It shows two lines; the rest shows on hover, or on focus, which a tap gives it on a touch
    screen (``tabindex``: a touch screen has no hover; page.css)."""
    return f'<div class="banner {kind}" role="status" tabindex="0"{attributes}>{inner}</div>'


def status_words(a, native, lang: str) -> str:
    """What the weights are and what was changed, from the analysis's record (the banner in Chinese)."""
    if a.weights == "trained":
        parts = [i18n.text("status-trained", lang, K=len(a.probs))]
    elif a.weights == "random":
        parts = [i18n.text("status-random", lang)]
    else:
        parts = [i18n.text("status-pretrained", lang, weights=a.weights)]
    if a.patch_size != native.patch_size:
        parts.append(i18n.text("status-resized", lang, P=a.patch_size, rows=a.grid[0], cols=a.grid[1]))
    if a.depth != native.num_layers:
        parts.append(i18n.text("status-cut", lang, L=a.depth, native=native.num_layers))
    return "；".join(parts) if i18n.language(lang) == "zh" else "; ".join(parts)


def download_banner_html(name: str, done: int, total: int, failed: bool = False, lang: str = "en") -> str:
    """The banner while a Space's startup download of ``name``'s weights runs, or after it failed."""
    display = display_name(name)
    if failed:
        kind, head = "bad", i18n.text("banner-untrained", lang)
        text = i18n.text("downloading-failed", lang, model=display)
    else:
        size = (i18n.text("downloading-of", lang, done=f"{done / 1e6:,.0f}", total=f"{total / 1e6:,.0f}") if total
                else f"{done / 1e6:,.0f} MB")
        kind, head = "idle", i18n.text("downloading-head", lang, model=display, size=size)
        text = i18n.text("downloading", lang)
    return banner_div(kind, f"<b>{html.escape(head)}</b> · {html.escape(text)}")


def trained_offer(model: str) -> str:
    """The banner's mark offering the model trained here (the button beside the banner shows while it is there)."""
    if is_trained_here(model):
        return ""
    return f'<span class="offer" data-offer="{html.escape(TRAINED_MODEL)}"></span>'


def out_of_date(shown: Setting | None, wanted: Setting, reason: str = "", lang: str = "en") -> str:
    """The notice over the pictures while the settings differ from what they show ("" when they agree).

    Args:
        shown: the setting the pictures show, or None before any analysis.
        wanted: the setting the controls say now.
        reason: why it did not run by itself ("takes ~12 s here").
    """
    if shown is None or shown == wanted:
        return ""
    why = (f"（{reason}）" if i18n.language(lang) == "zh" else f" ({reason})") if reason else ""
    words = i18n.text("stale", lang, why=html.escape(why), shown=html.escape(setting_words(shown, lang)),
                      wanted=html.escape(setting_words(wanted, lang)))
    return f'<div class="stale" role="status">{words}</div>'


def not_run(wanted: Setting, reason: str, lang: str = "en") -> str:
    """The notice before any analysis when the setting waits for Analyze (``reason``: why)."""
    words = i18n.text("stale-first", lang, wanted=html.escape(setting_words(wanted, lang)), reason=html.escape(reason))
    return f'<div class="stale" role="status">{words}</div>'


def running(shown: Setting | None, wanted: Setting, lang: str = "en") -> str:
    """The notice while the page's own run of ``wanted`` is going: the pictures are out of date, not for long."""
    before = (i18n.text("running-before", lang, shown=html.escape(setting_words(shown, lang)))
              if shown and shown != wanted else "")
    words = i18n.text("running", lang, before=before, wanted=html.escape(setting_words(wanted, lang)))
    return f'<div class="stale" role="status">{words}</div>'


def ordinal(n: int) -> str:
    """1 -> "1st", 2 -> "2nd", 11 -> "11th", 23 -> "23rd"."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def waiting_message(place: int, seconds: float) -> tuple[str, dict]:
    """The progress message of a waiting request, (key, fields): its place (1 = next) and the estimated wait."""
    n = ordinal(place)
    fields = {"n": n[:-2], "suffix": n[-2:], "seconds": f"{seconds:.0f}"}
    return ("progress-in-line-soon" if seconds < 1 else "progress-in-line"), fields


def waiting_words(place: int, seconds: float, lang: str = "en") -> str:
    """"waiting: 2nd in line, about 12 s": :func:`waiting_message` written in ``lang``."""
    key, fields = waiting_message(place, seconds)
    return i18n.text(key, lang, **fields)
