"""One image through the model, seen from inside: the traced run (``run``: ``analyze``), the tracer
(``trace``), rollout and the other maps computed from attention (``rollout``), the record an analysis
returns (``record``: ``Analysis``) and the ViT paper's Figure 7 weight maps (``figure7``).
"""

from importlib import import_module

_EXPORTS = {"Analysis": "record", "LayerPrediction": "record", "Prediction": "record", "analyze": "run"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
