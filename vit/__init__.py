"""ViT Anatomy: the Vision Transformer of chapter 11.4, on real pretrained weights, seen from inside.

Public API: :func:`load_model`, :func:`analyze` and the :class:`Analysis` they return.
"""

from .analysis import Analysis
from .api import analyze, default_device, load_model
from .config import DISPLAY_NAMES, PRESETS, ViTConfig
from .errors import InputError, WeightsError

__all__ = [
    "Analysis", "DISPLAY_NAMES", "InputError", "PRESETS", "ViTConfig", "WeightsError",
    "analyze", "default_device", "load_model",
]
