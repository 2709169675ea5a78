"""What :func:`vit.load_model` returns: the chapter's module untouched and, beside it, as torchvision's weights
objects carry them, its config, preprocessing, class names and a sentence saying what was loaded.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vit.images import load_image
from vit.validate import Setting

if TYPE_CHECKING:  # the record itself needs no torch: it only holds what load_model built
    import numpy as np
    import torch
    from torch import Tensor, nn

    from vit.config import ViTConfig
    from vit.model.modules import ViTForImageClassification
    from vit.model.preprocess import Preprocess


@dataclass(frozen=True, eq=False)
class ModelInput:
    """One image as a model receives it: ``vit.analyze``, ``vit.explain`` and the curves take it in place of an
    image, so a request that asks several of them decodes and preprocesses its image once."""

    x: Tensor = field(repr=False)  # (1, C, H, W): normalised, on the model's device
    view: np.ndarray = field(repr=False)  # (H, W, 3) uint8: the pixels the model sees (resized, centre-cropped)
    source_size: tuple[int, int]  # (width, height) of the image before preprocessing


@dataclass(frozen=True, eq=False)  # eq=False: compared and hashed by identity, like the module it holds
class LoadedModel:
    """A built model and its metadata: ``loaded(x)`` runs the module; ``loaded.module`` is the plain ``nn.Module``."""

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
        """The module's forward: (B, C, H, W) -> (B, K) logits, in the module's precision."""
        return self.module(x.float())  # the pixels stay float32 (vit.model.precision)

    def input(self, image) -> ModelInput:
        """The model's input for a path, bytes, a PIL image or an (H, W[, C]) array: decoded, preprocessed, on the
        device (a :class:`ModelInput` for this model is returned as it is)."""
        if isinstance(image, ModelInput):
            size = self.config.image_size
            if tuple(image.x.shape[-2:]) != (size, size):
                raise ValueError(f"expected a model input of {size}x{size} pixels for this model, "
                                 f"got {image.x.shape[-2]}x{image.x.shape[-1]}")
            return image
        from vit.model.preprocess import as_array  # noqa: PLC0415 - imports torch, as the preprocess held here does

        pil = load_image(image)
        view = self.preprocess.view(pil)  # (S, S) PIL: resized, centre-cropped
        x = self.preprocess.to_tensor(view).to(self.device)  # (1, C, S, S), float32 in either precision
        return ModelInput(x=x, view=as_array(view), source_size=pil.size)

    def parameters(self) -> Iterator[nn.Parameter]:
        return self.module.parameters()

    @property
    def setting(self) -> Setting:
        """The family, patch size and depth it was built at."""
        return Setting(self.name, self.config.patch_size, self.config.num_layers)

    @property
    def device(self) -> torch.device:
        """Where the module's parameters are."""
        return next(self.module.parameters()).device

    @property
    def dtype(self) -> torch.dtype:
        """The module's precision: torch.float32, or torch.bfloat16 (:func:`vit.model.precision.to`)."""
        from vit.model import precision  # noqa: PLC0415 - imports torch

        return precision.of(self.module)

    @property
    def nbytes(self) -> int:
        """Bytes the module's parameters take."""
        return sum(p.numel() * p.element_size() for p in self.module.parameters())
