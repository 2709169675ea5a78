"""Why this class? The maps (``maps``: ``explain``), the methods' registry (``methods``, torch-free),
the test of a map by perturbation (``perturb``: deletion and insertion curves) and the ground truth on
drawn shapes (``faithfulness``).
"""

from vit import exports

_EXPORTS = {"Explanation": "maps", "explain": "maps", "METHODS": "methods", "Method": "methods",
            "Curve": "perturb", "perturbation_curve": "perturb", "perturbation_curves": "perturb"}
__all__ = sorted(_EXPORTS)

__getattr__ = exports(__name__, _EXPORTS)
