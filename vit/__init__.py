"""ViT Anatomy: the Vision Transformer of chapter 11.4, on real pretrained weights, seen from inside.

Public API: :func:`load_model` (which returns a :class:`LoadedModel`), :func:`analyze` and the
:class:`Analysis` it returns; :func:`explain` (an :class:`Explanation` for any class) and
:func:`perturbation_curve` (a :class:`Curve`: is that explanation right?); :func:`intervene` (an
:class:`Intervention`: what if some patches or heads were taken away?) and :func:`head_importance`.
Names are imported on first use, so ``python -m vit --help`` and the app's
first screen do not wait for torch.
"""

from vit.lazy import exports

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
