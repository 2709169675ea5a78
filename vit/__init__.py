"""ViT Anatomy: the Vision Transformer of chapter 11.4, on real pretrained weights, seen from inside.

Public API: :func:`load_model` (which returns a :class:`LoadedModel`), :func:`analyze` and the
:class:`Analysis` it returns; :func:`explain` (an :class:`Explanation` for any class) and
:func:`perturbation_curve` (a :class:`Curve`: is that explanation right?).
Names are imported on first use, so ``python -m vit --help`` and the app's
first screen do not wait for torch.
"""

from importlib import import_module

_EXPORTS = {
    "Analysis": "analysis",
    "analyze": "api",
    "default_device": "api",
    "load_model": "api",
    "DISPLAY_NAMES": "config",
    "PRESETS": "config",
    "ViTConfig": "config",
    "InputError": "errors",
    "Explanation": "explanations",
    "explain": "explanations",
    "WeightsError": "errors",
    "patch_filters": "inside",
    "position_similarity": "inside",
    "LoadedModel": "loaded",
    "Curve": "perturb",
    "perturbation_curve": "perturb",
    "perturbation_curves": "perturb",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'vit' has no attribute {name!r}")
