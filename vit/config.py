"""One frozen config drives the model (chapter 11.4, ``ViTForImageClassification``).

Defaults follow the chapter; where torchvision's checkpoints need something else
the comment says so. ``PRESETS`` holds the five pretrained torchvision families and the one trained
here on drawn shapes (``vit.shapes``, ``vit.train``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class ViTConfig:
    image_size: int = 224
    patch_size: int = 16
    in_channels: int = 3
    num_classes: int = 1000
    embed_dim: int = 768  # D
    num_heads: int = 12  # h
    num_layers: int = 12  # L
    hidden_dim: int | None = None  # MLP hidden; None means 4D as in the chapter
    dropout: float = 0.0
    attn_dropout: float = 0.0
    ln_eps: float = 1e-6  # torchvision checkpoints (nn.LayerNorm's default is 1e-5)

    def __post_init__(self) -> None:
        if self.image_size % self.patch_size:
            raise ValueError(
                f"image_size must be a multiple of patch_size, got {self.image_size} and {self.patch_size}"
            )
        if self.embed_dim % self.num_heads:
            raise ValueError(
                f"embed_dim must be divisible by num_heads, got {self.embed_dim} and {self.num_heads}"
            )

    @property
    def mlp_dim(self) -> int:
        return self.hidden_dim or 4 * self.embed_dim

    @property
    def grid_size(self) -> int:
        """Patches per side, H/P (the model sees square images)."""
        return self.image_size // self.patch_size

    @property
    def num_patches(self) -> int:
        """N, the number of patch tokens."""
        return self.grid_size**2

    @property
    def num_tokens(self) -> int:
        """N+1: the patch tokens and the class token."""
        return self.num_patches + 1

    @property
    def head_dim(self) -> int:
        return self.embed_dim // self.num_heads

    def with_(self, **changes) -> ViTConfig:
        return replace(self, **changes)


# The five torchvision ViT families (torchvision.models.vision_transformer), and one trained here.
PRESETS: dict[str, ViTConfig] = {
    "vit_b_16": ViTConfig(patch_size=16, embed_dim=768, num_heads=12, num_layers=12, hidden_dim=3072),
    "vit_b_32": ViTConfig(patch_size=32, embed_dim=768, num_heads=12, num_layers=12, hidden_dim=3072),
    "vit_l_16": ViTConfig(patch_size=16, embed_dim=1024, num_heads=16, num_layers=24, hidden_dim=4096),
    "vit_l_32": ViTConfig(patch_size=32, embed_dim=1024, num_heads=16, num_layers=24, hidden_dim=4096),
    # SWAG_LINEAR weights at 224 px (torchvision's IMAGENET1K_SWAG_LINEAR_V1).
    "vit_h_14": ViTConfig(patch_size=14, embed_dim=1280, num_heads=16, num_layers=32, hidden_dim=5120),
    # Trained here from scratch on vit.shapes' drawings (python -m vit train-shapes): small enough
    # for 2 CPU cores; 64 px and P = 8 give the 8x8 grid, N+1 = 65 tokens; 8 classes (len(shapes.CLASSES)).
    "vit_tiny_shapes": ViTConfig(image_size=64, patch_size=8, num_classes=8, embed_dim=96, num_heads=3,
                                 num_layers=4),
}

# What people read: "ViT-B/16".
DISPLAY_NAMES: dict[str, str] = {
    "vit_b_16": "ViT-B/16",
    "vit_b_32": "ViT-B/32",
    "vit_l_16": "ViT-L/16",
    "vit_l_32": "ViT-L/32",
    "vit_h_14": "ViT-H/14",
    "vit_tiny_shapes": "ViT-Tiny shapes, trained here",
}
assert DISPLAY_NAMES.keys() == PRESETS.keys()

# The families whose weights ship in assets/ (trained by this project): never downloaded.
TRAINED_HERE: tuple[str, ...] = ("vit_tiny_shapes",)

MIN_PATCH_SIZE, MAX_PATCH_SIZE = 4, 64


def patch_size_range(name: str) -> tuple[int, int]:
    """The patch sizes a family offers: 4 up to 64, and at most half its image size (a 2x2 grid)."""
    return MIN_PATCH_SIZE, min(MAX_PATCH_SIZE, PRESETS[name].image_size // 2)


def grid_for_patch_size(native_resolution: int, patch_size: int) -> int:
    """Patches per side for a patch size: round(native_resolution / P), halves rounded up, at least 1.

    The input size is then grid x P: P = 24 on a 224-px checkpoint gives a 9x9 grid on 216 px.
    """
    return max(1, int(native_resolution / patch_size + 0.5))
