"""The chapter's model and everything that builds it: the modules (``modules``), the checkpoints
(``checkpoints``: torchvision's files, the key map, download and cache), ``load`` (``load_model``),
``resample`` (PI-resize, position embeddings), ``preprocess``, ``families``, the ``loaded`` record
and ``train`` (the shapes model). The chapter's classes are importable from here; nothing is imported
until it is used, so torch-free code (``families``) stays torch-free.
"""

from importlib import import_module

_EXPORTS = {
    "MultiheadAttention": "modules",
    "ViTClassificationHead": "modules",
    "ViTEmbedding": "modules",
    "ViTEncoder": "modules",
    "ViTEncoderLayer": "modules",
    "ViTForImageClassification": "modules",
    "ViTMLP": "modules",
    "split_heads": "modules",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
