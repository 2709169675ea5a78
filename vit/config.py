"""One frozen config drives the model (chapter 11.4), and its presets. Defaults follow the chapter, else a comment
says why; the fields after ``ln_eps`` describe the Hub's plain ViTs. Hub models are registered here, torch-free."""

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
    # Registers: learned tokens after the class token, a place for global information (Darcet et al. 2024).
    num_register_tokens: int = 0
    # DeiT's distillation token, right after the class token, trained to match a CNN teacher (Touvron et al. 2021).
    distilled: bool = False
    # Which prefix tokens get a position embedding: "all" (the chapter, timm's default), "class" (not the registers:
    # DINOv2 in transformers, Oquab et al. 2023) or "none" (timm's no_embed_class: DeiT III, Touvron et al. 2022).
    pos_embed_prefix: str = "all"
    # LayerScale: a learned per-channel scale on each residual branch (CaiT, Touvron et al. 2021; DeiT III, DINOv2).
    layer_scale: bool = False
    # A LayerNorm on the embedded tokens before the first block: CLIP's ln_pre (Radford et al. 2021).
    pre_norm: bool = False
    patch_bias: bool = True  # the patch embedding's bias; CLIP's has none
    qkv_bias: bool = True  # q, k and v projections with a bias (the chapter); some timm models have none
    activation: str = "gelu"  # the MLP's: "gelu" (the chapter) or "quick_gelu", x * sigmoid(1.702 x) (CLIP)
    # What the head reads: "token" (the class token, the chapter), "token_distill_mean" (DeiT at inference: the
    # mean of the class and distillation tokens' heads), "token_and_patch_mean" (DINOv2's classifiers: the class
    # token joined with the patch tokens' mean, 2D features) or "none" (a backbone, num_classes 0).
    head: str = "token"

    def __post_init__(self) -> None:
        if self.image_size % self.patch_size:
            raise ValueError(
                f"image_size must be a multiple of patch_size, got {self.image_size} and {self.patch_size}"
            )
        if self.embed_dim % self.num_heads:
            raise ValueError(
                f"embed_dim must be divisible by num_heads, got {self.embed_dim} and {self.num_heads}"
            )
        _check_choice("pos_embed_prefix", self.pos_embed_prefix, POS_EMBED_PREFIXES)
        _check_choice("activation", self.activation, ACTIVATIONS)
        _check_choice("head", self.head, HEADS)
        if (self.head == "none") != (self.num_classes == 0):
            raise ValueError(f"head 'none' and num_classes 0 go together, got head {self.head!r} and "
                             f"num_classes {self.num_classes}")
        if self.head == "token_distill_mean" and not self.distilled:
            raise ValueError("head 'token_distill_mean' reads the distillation token: distilled must be True")
        if self.num_register_tokens < 0:
            raise ValueError(f"num_register_tokens must be 0 or more, got {self.num_register_tokens}")

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
    def num_prefix_tokens(self) -> int:
        """The tokens before the patches: the class token, DeiT's distillation token, the registers."""
        return 1 + int(self.distilled) + self.num_register_tokens

    @property
    def num_pos_prefix_tokens(self) -> int:
        """How many of the prefix tokens (the first ones) have a position embedding."""
        return {"all": self.num_prefix_tokens, "class": 1, "none": 0}[self.pos_embed_prefix]

    @property
    def num_tokens(self) -> int:
        """T = N + prefix: the patch tokens and the prefix tokens (N+1 for the chapter's model)."""
        return self.num_patches + self.num_prefix_tokens

    @property
    def prefix_token_names(self) -> tuple[str, ...]:
        """What the prefix tokens are, in order: "class", then "distillation", then "register 1".. "register R"."""
        return prefix_token_names(self)

    @property
    def has_classifier(self) -> bool:
        """False for a backbone (head "none"): it has no classes to predict."""
        return self.head != "none"

    @property
    def head_dim(self) -> int:
        return self.embed_dim // self.num_heads

    def with_(self, **changes) -> ViTConfig:
        return replace(self, **changes)


POS_EMBED_PREFIXES = ("all", "class", "none")
ACTIVATIONS = ("gelu", "quick_gelu")
HEADS = ("token", "token_distill_mean", "token_and_patch_mean", "none")
# A traced forward computes each layer's attention this many bytes of softmax rows at a time, (B, h, R, T)
# in float32 (vit.analysis.trace.attention_by_row_blocks): small enough to stay in a CPU's cache.
ROW_BLOCK_BYTES = 16 * 2**20


def _check_choice(field: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{field} must be one of {', '.join(map(repr, choices))}, got {value!r}")


def prefix_token_names(config: ViTConfig) -> tuple[str, ...]:
    """The prefix tokens' names as the stage table shows them: ("class", "distillation", "register 1", ...)."""
    names = ["class"] + ["distillation"] * config.distilled
    return tuple(names + [f"register {i + 1}" for i in range(config.num_register_tokens)])


# The five torchvision ViT families (torchvision.models.vision_transformer), and one trained here.
PRESETS: dict[str, ViTConfig] = {
    "vit_b_16": ViTConfig(patch_size=16, embed_dim=768, num_heads=12, num_layers=12, hidden_dim=3072),
    "vit_b_32": ViTConfig(patch_size=32, embed_dim=768, num_heads=12, num_layers=12, hidden_dim=3072),
    "vit_l_16": ViTConfig(patch_size=16, embed_dim=1024, num_heads=16, num_layers=24, hidden_dim=4096),
    "vit_l_32": ViTConfig(patch_size=32, embed_dim=1024, num_heads=16, num_layers=24, hidden_dim=4096),
    # SWAG_LINEAR weights at 224 px (torchvision's IMAGENET1K_SWAG_LINEAR_V1).
    "vit_h_14": ViTConfig(patch_size=14, embed_dim=1280, num_heads=16, num_layers=32, hidden_dim=5120),
    # Trained here on vit.shapes' drawings, small enough for 2 CPU cores: 64 px at P = 8, an 8x8 grid, 8 classes.
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


# Models read from the Hub by repository id (or folder), registered by ``vit.model.hubconfig`` from config.json.
HUB_MODELS: dict[str, ViTConfig] = {}
HUB_DISPLAY_NAMES: dict[str, str] = {}


def register(name: str, config: ViTConfig, display_name: str) -> None:
    """Make a model read from the Hub known by ``name`` (its repository id) to validation, cost and loading."""
    if name in PRESETS:
        raise ValueError(f"{name!r} is a preset's name; a Hub model needs its repository id")
    HUB_MODELS[name] = config
    HUB_DISPLAY_NAMES[name] = display_name


def native_config(name: str) -> ViTConfig:
    """The config of a preset or a registered Hub model, as its checkpoint was trained."""
    return PRESETS[name] if name in PRESETS else HUB_MODELS[name]


def display_name(name: str) -> str:
    """What people read: "ViT-B/16", "DeiT-S/16 distilled (timm)"."""
    return DISPLAY_NAMES[name] if name in DISPLAY_NAMES else HUB_DISPLAY_NAMES[name]


def patch_size_range(name: str) -> tuple[int, int]:
    """The patch sizes a family offers: 4 up to 64, and at most half its image size (a 2x2 grid)."""
    return MIN_PATCH_SIZE, min(MAX_PATCH_SIZE, native_config(name).image_size // 2)


def grid_for_patch_size(native_resolution: int, patch_size: int) -> int:
    """Patches per side: round(native_resolution / P), halves up, at least 1 (P = 24 at 224 px: 9x9 on 216 px)."""
    return max(1, int(native_resolution / patch_size + 0.5))
