"""Why this class? The maps (``maps``: ``explain``), the methods' registry (``methods``, torch-free),
the test of a map by perturbation (``perturb``: deletion and insertion curves) and the ground truth on
drawn shapes (``faithfulness``).
"""

from importlib import import_module

_EXPORTS = {"Explanation": "maps", "explain": "maps", "METHODS": "methods", "Method": "methods",
            "Curve": "perturb", "perturbation_curve": "perturb", "perturbation_curves": "perturb"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
