"""The chapter's model and everything that builds it: the modules (``modules``), the checkpoints
(``checkpoints``: torchvision's files, the key map, download and cache), ``load`` (``load_model``),
``resample`` (PI-resize, position embeddings), ``preprocess``, ``families``, the ``loaded`` record
and ``train`` (the shapes model). The chapter's classes are importable from here; nothing is imported
until it is used, so torch-free code (``families``) stays torch-free.
"""

from vit import exports

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

__getattr__ = exports(__name__, _EXPORTS)
