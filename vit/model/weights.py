"""One door to a model's weights on disk: the page's, before the model's turn, and :func:`vit.load_model`'s.

A torchvision family's checkpoint comes through ``vit.model.checkpoints``, a Hub model's files through
``vit.model.hub``; a family trained here ships its weights in ``assets/``. Offline, or after a failed download,
the model loads with random weights and its status says UNTRAINED; the failure is remembered for a minute, so a
class without a network does not wait for a timeout on every request.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from vit.config import HUB_MODELS
from vit.model.checkpoints import CHECKPOINTS, cached_path, fetch_checkpoint

Progress = Callable[[int, int], None]
Fetched = tuple[Path | None, str, str]  # the file, or None and why not: (for a web page, in full)


def ensure(name: str, progress: Progress | None = None) -> Fetched:
    """A family's pretrained weights on disk, downloaded if need be (``progress(bytes_done, bytes_total)``);
    (None, "", "") for a family trained here: nothing to download."""
    if name in HUB_MODELS:
        from vit.model import hub  # noqa: PLC0415 - huggingface_hub and safetensors, only for Hub models

        return hub.fetched(name, progress)
    if name in CHECKPOINTS:
        return fetch_checkpoint(name, progress)
    return None, "", ""


def downloaded(name: str) -> bool:
    """Whether a family's pretrained weights are in a download cache now (never, for a family that ships its own)."""
    if name in HUB_MODELS:
        from vit.model import hub  # noqa: PLC0415

        return hub.is_cached(name)
    return name in CHECKPOINTS and cached_path(name).is_file()
