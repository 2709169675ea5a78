"""What the model sees: torchvision's preprocessing (resize the shorter side, centre-crop, normalise), scaled when
a patch size changes the input size. The geometry (:meth:`Preprocess.view`) is kept apart from normalisation so
the app draws the patch grid over exactly the pixels the model receives.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image
from torch import Tensor
from torchvision.transforms import InterpolationMode
from torchvision.transforms import functional as TF

from vit.config import HUB_MODELS
from vit.model.checkpoints import CHECKPOINTS
from vit.model.families import is_trained_here, normalisation

_MAX_ASPECT = 4  # longer side kept before resizing: the centre crop never reaches further


@dataclass(frozen=True)
class Preprocess:
    crop_size: int
    resize_size: int
    mean: tuple[float, ...]
    std: tuple[float, ...]
    interpolation: InterpolationMode
    squash: bool = False  # resize both sides to resize_size, not keeping the aspect ratio (transformers' ViT)

    def view(self, image: Image.Image) -> Image.Image:
        """Resize and centre-crop an RGB image: (h, w) -> (S, S), the pixels the model sees."""
        w, h = image.size
        short = min(w, h)
        if max(w, h) > _MAX_ASPECT * short:
            # A 1 x 5000 strip would otherwise be resized to 256 x 1,280,000 before the crop.
            image = TF.center_crop(image, [min(h, _MAX_ASPECT * short), min(w, _MAX_ASPECT * short)])
        size = [self.resize_size] * 2 if self.squash else [self.resize_size]
        image = TF.resize(image, size, interpolation=self.interpolation, antialias=True)
        return TF.center_crop(image, [self.crop_size])

    def to_tensor(self, view: Image.Image) -> Tensor:
        """The view as a normalised batch: (S, S) RGB -> (1, 3, S, S)."""
        x = TF.pil_to_tensor(view).float().div_(255.0)
        return TF.normalize(x, self.mean, self.std).unsqueeze(0)

    def __call__(self, image: Image.Image) -> Tensor:
        return self.to_tensor(self.view(image))


def preprocess_for(name: str, image_size: int) -> Preprocess:
    """A family's preprocessing scaled to ``image_size``; one trained here resizes straight to it (no margin:
    drawn shapes may touch the border)."""
    if name in HUB_MODELS:
        return _hub_preprocess(name, image_size)
    if is_trained_here(name):
        mean, std = normalisation(name)
        return Preprocess(crop_size=image_size, resize_size=image_size, mean=mean, std=std,
                          interpolation=InterpolationMode.BILINEAR)
    tv = CHECKPOINTS[name].weights.transforms()  # ImageClassification; ships with torchvision
    crop, resize = tv.crop_size[0], tv.resize_size[0]
    return Preprocess(
        crop_size=image_size,
        resize_size=max(image_size, round(resize * image_size / crop)),
        mean=tuple(tv.mean),
        std=tuple(tv.std),
        interpolation=tv.interpolation,
    )


def _hub_preprocess(name: str, image_size: int) -> Preprocess:
    """A Hub model's preprocessing as its repository states it (timm's eval transform, or transformers' image
    processor), scaled to ``image_size``."""
    from vit.model.hubconfig import spec_of  # noqa: PLC0415

    spec = spec_of(name)
    return Preprocess(
        crop_size=image_size,
        resize_size=max(image_size, round(spec.resize_size * image_size / spec.crop_size)),
        mean=spec.mean, std=spec.std, interpolation=InterpolationMode(spec.interpolation), squash=spec.squash,
    )


def as_array(view: Image.Image) -> np.ndarray:
    return np.asarray(view.convert("RGB"), dtype=np.uint8)


__all__ = ["Preprocess", "preprocess_for", "as_array"]
