"""Where a family's class names and normalisation come from: torchvision's (ImageNet's 1,000 classes), or, for the
families trained here, ``assets/<name>.pth`` (never downloaded) and ``<name>.json`` beside it (config, classes,
seed, training time, accuracy, the file's SHA-256). Torch-free: the app asks before anything heavy is imported.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from vit.config import HUB_MODELS, TRAINED_HERE
from vit.shapes import CLASSES

ASSETS = Path(__file__).resolve().parents[2] / "assets"

# vit_tiny_shapes' own normalisation: the drawings span the full 0..255 range in every channel.
SHAPES_MEAN = (0.5, 0.5, 0.5)
SHAPES_STD = (0.25, 0.25, 0.25)


def is_trained_here(name: str) -> bool:
    """True for a family whose weights ship in ``assets/`` (no download, ever)."""
    return name in TRAINED_HERE


def weights_path(name: str) -> Path:
    """``assets/<name>.pth``: the shipped state dict of a family trained here."""
    assert is_trained_here(name), name  # callers check the family first
    return ASSETS / f"{name}.pth"


def meta_path(name: str) -> Path:
    """``assets/<name>.json``: what was trained, how, and how well."""
    return weights_path(name).with_suffix(".json")


def sha256(path: str | Path) -> str:
    """The SHA-256 of a file, in hex (what the JSON records of the ``.pth``)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def class_names(name: str) -> list[str]:
    """The K class names of a family, in the order of its logits."""
    if is_trained_here(name):
        return list(CLASSES)
    if name in HUB_MODELS:  # the repository's own names; ImageNet-1k's for 1,000 unnamed classes; none for a backbone
        from vit.model.hubconfig import spec_of  # noqa: PLC0415

        spec = spec_of(name)
        if spec.class_names is not None or spec.config.num_classes != 1000:
            return list(spec.class_names or ())
        name = "vit_b_16"
    from vit.model.checkpoints import CHECKPOINTS  # noqa: PLC0415 - imports torchvision

    return list(CHECKPOINTS[name].weights.meta["categories"])


def normalisation(name: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(mean, std) per RGB channel of a family trained here."""
    assert is_trained_here(name), name
    return SHAPES_MEAN, SHAPES_STD
