"""A Space's start: the default model's checkpoint downloads in the background, and the banner says how far.

A Space starts with an empty cache; this way the first student waits less (or not at all)
for ViT-B/16's 330 MB, and every open page shows how far it is (:func:`startup_status`).
"""

from __future__ import annotations

import os

import gradio as gr

from vit import validate
from vit.ui import meter, models
from vit.ui.lang import of as language_of

DEFAULT_MODEL = "ViT-B/16"  # shown first on the page, and fetched at a Space's start
STARTUP_OUTPUTS = ("banner", "startup-timer")

_prefetch = None  # on a Space, the startup download of the default model's checkpoint (vit.serve.prefetch.Prefetch)


def on_space() -> bool:
    """Whether this server runs on Hugging Face Spaces, which sets ``SPACE_ID`` ("teacher/vit-anatomy")."""
    return bool(os.environ.get("SPACE_ID"))


def start_prefetch():
    """On a Space, from the start: the default model's checkpoint downloads in the background."""
    global _prefetch
    from vit.serve.prefetch import Prefetch  # noqa: PLC0415 - imports torch in its own thread only

    _prefetch = Prefetch(validate.model_name(DEFAULT_MODEL)).start()
    return _prefetch


def fetch_weights(name: str, report) -> None:
    """The family's checkpoint into the disk cache before :func:`vit.ui.gpu.run_model`, in this process.

    The startup download is waited for while it runs, so the first analysis on a Space neither
    fetches the file a second time nor gives up on it while it is merely slow. A failed download
    is remembered by :func:`vit.model.load.fetch_checkpoint`; the model then loads with random weights and
    the banner says UNTRAINED.

    Args:
        name: the family ("vit_b_16").
        report: ``report(bytes_done, bytes_total)`` while waiting or downloading.
    """
    # vit.model.load first, as app._prewarm imports it: two threads entering torchvision by different
    # modules at once can find it half imported.
    from vit.model.load import fetch_checkpoint  # noqa: I001, PLC0415 - imports torch (load first: see above)
    from vit.model.checkpoints import CHECKPOINTS  # noqa: PLC0415

    if models.is_hub(name):  # a Hub model: its config.json and weights into the Hub cache
        models.fetch(name, report)
        return
    if name not in CHECKPOINTS:  # a family that ships its own weights: nothing to download
        return

    prefetch = _prefetch
    if prefetch is not None and prefetch.name == name:
        prefetch.wait(report)
    fetch_checkpoint(name, progress=report)


def startup_banner(lang: str = "en") -> str:
    """The banner of a page with no analysis yet (on a Space: the startup download's progress, or its failure)."""
    p = _prefetch
    if p is None or (p.finished and not p.error):
        return meter.banner_html(lang=lang)
    return meter.download_banner_html(p.name, p.done, p.total, failed=bool(p.error), lang=lang)


def startup_status(key: str | None, request: gr.Request = None) -> dict:
    """Each tick of the banner's timer on a Space, until the startup download has finished.

    A page that shows an analysis keeps its own banner.
    """
    p = _prefetch
    out = {"startup-timer": gr.Timer(active=p is not None and not p.finished)}
    if key is None:
        out["banner"] = startup_banner(language_of(request))
    return out
