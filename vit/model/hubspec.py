"""What a Hub repository's small files say about its model (torch-free): the record ``vit.model.hubconfig`` keeps."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from vit.config import ViTConfig


@dataclass(frozen=True)
class HubSpec:
    """What a repository's small files say: enough to build the model and show it (no weights)."""

    name: str  # the registry key: the repository id, or the local folder's resolved path
    format: str  # "timm" or "transformers"
    architecture: str  # timm's architecture, or transformers' model_type
    config: ViTConfig  # the native model
    display_name: str  # "DeiT-S/16 distilled (timm)"
    class_names: tuple[str, ...] | None = field(repr=False)  # None: ImageNet-1k's (vit.model.families)
    mean: tuple[float, ...] = (0.485, 0.456, 0.406)
    std: tuple[float, ...] = (0.229, 0.224, 0.225)
    crop_size: int = 224  # the model's input, S
    resize_size: int = 256  # the shorter side (or both sides, ``squash``) before the centre crop
    interpolation: str = "bicubic"  # "bicubic", "bilinear" or "nearest"
    squash: bool = False  # resize both sides to resize_size, not keeping the aspect ratio (transformers' ViT)
    licence: str | None = None  # the model card's ``license:``
    folder: Path | None = field(default=None, repr=False)  # a local folder holding the files, else the Hub
    read_from: str = "config.json"  # or "the repository's name" when config.json could not be had
    why_not_read: str = ""  # why config.json could not be had (offline, not cached), or ""
