"""The text around the pictures (cost meter, weights banner, notice), torch-free: it answers before torch loads."""

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
from vit.model.families import is_trained_here
from vit.validate import Setting

# The traced forward pass's rate (docs/performance.md, "The cost meter"): used only to say what will be slow.
CPU_GFLOPS_PER_CORE = 38.0
GPU_GFLOPS = 20_000.0
SLOW_S = 2.0  # above this a setting waits for the Analyze button, and the meter says so
# Estimates scale by the median slowdown of the last RECENT_RUNS analyses (one slow run moves a median little).
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
    """Whether torch, if imported, sees a GPU. ``import`` waits for a thread still importing it, where
    ``sys.modules`` would hand over a half-initialised module (no attribute 'cuda')."""
    if "torch" not in sys.modules:
        return False
    import torch  # noqa: PLC0415 - imported already (or being imported): this waits for it, nothing more

    return torch.cuda.is_available()


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class RunRecord:
    """How many times longer this server's recent model runs took than the fixed rate said; thread-safe."""

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
        """The recent runs' median ratio, within :data:`SLOWDOWN_BOUNDS`; 1.0 before any."""
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
    RECENT.add(c.gflops, seconds)


def estimated_seconds(c: costs.Cost) -> float:
    """``c``'s model time here: its FLOPs at the fixed rate, scaled by the recent runs' slowdown."""
    return c.gflops / hardware()[1] * RECENT.slowdown()


def over_budget(c: costs.Cost) -> bool:
    return c.peak_bytes > costs.MEMORY_BUDGET_GB * 1e9  # read at call time: tests and admins change it


def cost_markdown(c: costs.Cost, shown: bool = False, lang: str = "en") -> str:
    """Tokens, attention entries, GFLOPs, and a warning when it will be slow (unless the pictures show it)."""
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


def cost_meter(setting: Setting, shown: bool = False, lang: str = "en") -> str:
    """The cost meter of a validated setting."""
    return cost_markdown(costs.estimate(setting), shown, lang)


def setting_words(setting: Setting, lang: str = "en") -> str:
    """"ViT-B/16, P = 16, L = 12": how the banner and the notice name a setting (the model as ``lang`` names it)."""
    return f"{model_words(setting.name, setting.display_name, lang)}, P = {setting.patch_size}, L = {setting.depth}"


def model_words(name: str, display: str, lang: str = "en") -> str:
    """Model ``name`` as ``lang`` names it: the page's ``model-<name>`` where there is one, else ``display``."""
    words = i18n.PAGE.get(f"model-{name}")
    return words[i18n.language(lang)] if words else display


def analysis_setting(a) -> Setting:
    """The setting an analysis ran at (valid: it ran)."""
    return Setting(a.model, a.patch_size, a.depth)


def banner_html(analysis=None, lang: str = "en") -> str:
    """Which weights run and what the pictures show, in a colour and a word (in Chinese, a summary of the status)."""
    shows = ""
    if analysis is None:
        kind, head, text = "idle", i18n.text("banner-idle-head", lang), i18n.text("banner-idle", lang)
    else:
        native = native_config(analysis.model)
        text = analysis.status if i18n.language(lang) == "en" else status_words(analysis, native, lang)
        pretrained = i18n.text("banner-trained-here" if analysis.weights == "trained" else "banner-pretrained", lang)
        if analysis.weights == "random":
            kind, head = "bad", i18n.text("banner-untrained", lang)
            text = re.sub(r"^UNTRAINED:?\s*", "", text)
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
    return banner_div(kind, f"<b>{html.escape(head)}</b> · {body}", shows)


def banner_div(kind: str, inner: str, attributes: str = "") -> str:
    """The banner's box: two lines, the rest on hover or focus (``tabindex``: a tap focuses it on a touch screen)."""
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


def offers_trained(a) -> bool:
    """Whether the page offers the model trained here beside the banner: the weights asked for could not be had."""
    return a.weights == "random" and not is_trained_here(a.model)


def out_of_date(shown: Setting | None, wanted: Setting, reason: str = "", lang: str = "en") -> str:
    """The notice while the controls' setting is not the one shown ("" if it is, or none is); ``reason``: why."""
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
