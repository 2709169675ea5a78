"""A Space's start: the default model's checkpoint downloads in the background, and the banner says how far.

A Space starts with an empty cache; so the first student waits less (or not at all) for ViT-B/16's 330 MB.
"""

from __future__ import annotations

import logging
import os

import gradio as gr

from vit import validate
from vit.ui import meter
from vit.ui.lang import of as language_of
from vit.validate import Setting

log = logging.getLogger("vit.app")

DEFAULT_MODEL = "ViT-B/16"  # shown first on the page, and fetched at a Space's start
STARTUP_OUTPUTS = ("banner", "startup-timer")

_prefetch = None  # on a Space, the startup download of the default model's checkpoint (vit.serve.prefetch.Prefetch)


def on_space() -> bool:
    """Whether this server runs on Hugging Face Spaces, which sets ``SPACE_ID`` ("teacher/vit-anatomy")."""
    return bool(os.environ.get("SPACE_ID"))


def start_prefetch():
    """On a Space: the default model's checkpoint downloads in the background from the start."""
    global _prefetch
    from vit.serve.prefetch import Prefetch  # noqa: PLC0415 - imports torch in its own thread only

    _prefetch = Prefetch(validate.model_name(DEFAULT_MODEL)).start()
    return _prefetch


def fetch_weights(setting: Setting, report) -> None:
    """The setting's weights on disk before :func:`vit.ui.gpu.run_model`'s turn (``report(bytes_done, bytes_total)``).

    The startup download is waited for, not repeated nor given up on while it is merely slow. Nothing fails here:
    the load says UNTRAINED, or refuses with its sentence, and the server keeps serving.
    """
    # vit.model.load first, as app._prewarm imports it: two threads entering torchvision by different
    # modules at once can find it half imported.
    import vit.model.load  # noqa: F401, PLC0415 - imports torch
    from vit.model import weights  # noqa: PLC0415

    prefetch = _prefetch
    if prefetch is not None and prefetch.name == setting.name:
        prefetch.wait(report)
    try:
        weights.ensure(setting.name, report)
    except Exception as exc:  # noqa: BLE001 - the load says it again, in the model's status or its refusal
        log.warning("%s: %s", setting.display_name, exc)


def startup_banner(lang: str = "en") -> str:
    """The banner of a page with no analysis yet (on a Space: the startup download's progress, or its failure)."""
    p = _prefetch
    if p is None or (p.finished and not p.error):
        return meter.banner_html(lang=lang)
    return meter.download_banner_html(p.name, p.done, p.total, failed=bool(p.error), lang=lang)


def startup_status(key: str | None, request: gr.Request = None) -> dict:
    """Each tick of the banner's timer on a Space, until the startup download has finished (a page that shows an
    analysis keeps its own banner)."""
    p = _prefetch
    out = {"startup-timer": gr.Timer(active=p is not None and not p.finished)}
    if key is None:
        out["banner"] = startup_banner(language_of(request))
    return out
