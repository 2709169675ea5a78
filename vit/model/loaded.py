"""What :func:`vit.load_model` returns: the module, and what was loaded beside it.

As torchvision's weights objects carry url, transforms and category names next to
a builder that returns a plain module, a :class:`LoadedModel` holds the chapter's
:class:`~vit.model.ViTForImageClassification` untouched, and beside it the config it
was built from, the preprocessing, the class names and a sentence saying what was
loaded. Nothing is bolted onto the ``nn.Module``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the record itself needs no torch: it only holds what load_model built
    import torch
    from torch import Tensor, nn

    from vit.config import ViTConfig
    from vit.model.modules import ViTForImageClassification
    from vit.model.preprocess import Preprocess


@dataclass(frozen=True, eq=False)  # eq=False: compared and hashed by identity, like the module it holds
class LoadedModel:
    """A built model and its metadata.

    ``loaded(x)`` runs the module; ``loaded.module`` is the plain ``nn.Module`` for
    anything that walks it (``loaded.module.encoder``, a :class:`~vit.analysis.trace.Tracer`).
    """

    module: ViTForImageClassification = field(repr=False)  # in eval mode, no gradients, on its device
    config: ViTConfig  # the config the module was built from (patch size and depth as asked)
    name: str  # the family, a PRESETS key: "vit_b_16"
    weights: str  # what was actually loaded: "imagenet", "trained", "random" or the file's path
    status: str  # a sentence saying what was loaded and done; no server paths, no raw exception text
    status_detail: str  # the same with paths and the reader's own error, for the CLI and logs
    preprocess: Preprocess  # PIL image -> (1, C, S, S) at this config's input size
    class_names: list[str] = field(repr=False)  # K names, index -> label
    # One traced run at a time: the tracer's hooks are module state.
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __call__(self, x: Tensor) -> Tensor:
        """The module's forward: (B, C, H, W) -> (B, K) logits."""
        return self.module(x)

    def parameters(self) -> Iterator[nn.Parameter]:
        return self.module.parameters()

    @property
    def device(self) -> torch.device:
        """Where the module's parameters are."""
        return next(self.module.parameters()).device

    @property
    def nbytes(self) -> int:
        """Bytes the module's parameters take."""
        return sum(p.numel() * p.element_size() for p in self.module.parameters())
