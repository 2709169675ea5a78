"""ViT Anatomy: the Vision Transformer of chapter 11.4, on real pretrained weights, seen from inside.

Public API: :func:`load_model`, :func:`analyze`, :func:`explain`, :func:`perturbation_curve`, :func:`intervene`
and :func:`head_importance`. Names are imported on first use, so ``python -m vit --help`` and the app's first
screen do not wait for torch.
"""

from collections.abc import Callable
from importlib import import_module


def exports(package: str, names: dict[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package`` that imports a name only on first use (PEP 562), so that its
    torch-free parts stay torch-free: ``names`` maps each exported name to the submodule holding it."""

    def attribute(name: str) -> object:
        if name in names:
            return getattr(import_module(f"{package}.{names[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return attribute


_EXPORTS = {
    "Analysis": "analysis.record",
    "analyze": "analysis.run",
    "default_device": "model.load",
    "load_model": "model.load",
    "DISPLAY_NAMES": "config",
    "PRESETS": "config",
    "ViTConfig": "config",
    "InputError": "errors",
    "Explanation": "explanations.maps",
    "explain": "explanations.maps",
    "head_importance": "interventions.run",
    "intervene": "interventions.run",
    "Intervention": "interventions.run",
    "WeightsError": "errors",
    "patch_filters": "analysis.figure7",
    "position_similarity": "analysis.figure7",
    "LoadedModel": "model.loaded",
    "ModelInput": "model.loaded",
    "Curve": "explanations.perturb",
    "perturbation_curve": "explanations.perturb",
    "perturbation_curves": "explanations.perturb",
}
__all__ = sorted(_EXPORTS)

__getattr__ = exports(__name__, _EXPORTS)
