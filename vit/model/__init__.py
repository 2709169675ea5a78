"""The chapter's model and everything that builds it; the chapter's classes are importable from here, each
imported when first used, so torch-free code (``families``) stays torch-free.
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
