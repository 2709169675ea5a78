"""What a ViT's name says about its architecture (torch-free): ``vit_small_patch14_reg4_dinov2`` -> a config.

timm's architecture names and transformers' repository names (``google/vit-base-patch16-224``) follow one pattern:
family, size, ``patchP``, image size, variants. Read here for older timm repositories (no ``model_args``) and for
a repository whose config.json cannot be had; a name implies what timm's model functions pass to its ViT.
"""

from __future__ import annotations

import re

from vit.config import ViTConfig
from vit.errors import InputError
from vit.model.hubspec import HubSpec

# size -> (D, L, h), as timm's vit_<size>_* and deit_<size>_* functions build them.
SIZES = {
    "tiny": (192, 12, 3), "small": (384, 12, 6), "medium": (512, 12, 8), "base": (768, 12, 12),
    "large": (1024, 24, 16), "huge": (1280, 32, 16),
}
SIZE_LETTERS = {"tiny": "Ti", "small": "S", "medium": "M", "base": "B", "large": "L", "huge": "H"}
FAMILIES = ("vit", "deit", "deit3", "dinov2")
# Parts of a name that mean "not a plain ViT with a class token and learned absolute positions".
NOT_PLAIN = {
    "siglip": "SigLIP's attention-pooling head (global_pool='map')",
    "map": "an attention-pooling head (global_pool='map')",
    "gap": "global average pooling without a class token",
    "rope": "rotary position embeddings",
    "relpos": "relative position embeddings",
    "srelpos": "relative position embeddings",
    "naflex": "NaFlex's variable aspect ratios",
    "xp": "a parallel-block ViT",
    "parallel": "a parallel-block ViT",
    "swiglu": "a SwiGLU MLP",
    "eva": "EVA's rotary position embeddings and SwiGLU MLP",
    "swin": "Swin's shifted windows",
    "beit": "BEiT's relative position bias",
    "pe": "a Perception Encoder ViT",
}


def _parts(name: str) -> list[str]:
    base = name.rsplit("/", 1)[-1].split(".", 1)[0].lower()  # "timm/vit_small_patch16_224.augreg_in1k"
    return re.split(r"[_\-]", base)


def refuse_not_plain(name: str) -> None:
    """Raise, naming it, when a name says the model is not a plain ViT."""
    parts = _parts(name)
    for part in parts:
        part = part if part in NOT_PLAIN else re.sub(r"v?\d+$", "", part)  # "eva02", "swinv2" -> "eva", "swin"
        if part in NOT_PLAIN:
            raise InputError(f"{name} is {NOT_PLAIN[part]}, not a plain ViT; supported: plain ViT classifiers "
                             "(timm's vit_*, deit_*, deit3_*, *_dinov2; transformers' vit, deit, dinov2)")
    if parts[0] not in FAMILIES and "dinov2" not in parts:
        raise InputError(f"{name} is not a ViT that this app knows (its name starts with {parts[0]!r}); supported: "
                         "timm's vit_*, deit_*, deit3_* and *_dinov2, transformers' vit, deit and dinov2")


def config_kwargs(name: str) -> dict:
    """The ViTConfig fields a name implies, before any model_args; InputError: not a plain ViT's, or no size."""
    refuse_not_plain(name)
    parts = _parts(name)
    size = next((p for p in parts if p in SIZES), None)
    if size is None:
        raise InputError(f"{name} does not say its size (one of {', '.join(SIZES)}); its config.json must")
    D, L, h = SIZES[size]
    dinov2 = "dinov2" in parts
    patch = next((int(p[5:]) for p in parts if re.fullmatch(r"patch\d+", p)), 14 if dinov2 else 16)
    sizes = [int(p) for p in parts if re.fullmatch(r"\d{2,4}", p)]
    kw: dict = dict(embed_dim=D, num_layers=L, num_heads=h, patch_size=patch,
                    image_size=sizes[0] if sizes else (518 if dinov2 else 224))
    registers = next((int(p[3:]) for p in parts if re.fullmatch(r"reg\d+", p)), 0)
    if "registers" in parts:  # facebook/dinov2-with-registers-small
        registers = 4
    kw["num_register_tokens"] = registers
    if "distilled" in parts:
        kw.update(distilled=True, head="token_distill_mean")
    if parts[0] == "deit3":  # deit3_*: no_embed_class=True, init_values=1e-6
        kw.update(pos_embed_prefix="none", layer_scale=True)
    if dinov2:  # *_dinov2: init_values=1e-5; the _reg ones no_embed_class=True
        kw.update(layer_scale=True, pos_embed_prefix="none" if registers else "all")
    if "clip" in parts:  # *_clip_*: pre_norm=True (so no patch bias), LayerNorm eps 1e-5
        kw.update(pre_norm=True, patch_bias=False, ln_eps=1e-5)
        if "quickgelu" in parts:
            kw["activation"] = "quick_gelu"
    return kw


def display_name(name: str, kw: dict, source: str) -> str:
    """What people read: "DeiT-S/16 distilled (timm, fb_in1k)", "DINOv2-S/14 registers (facebook/dinov2-...)"."""
    parts = _parts(name)
    family = "DeiT III" if parts[0] == "deit3" else "DeiT" if parts[0] == "deit" else \
        "DINOv2" if "dinov2" in parts else "ViT"
    size = next((SIZE_LETTERS[s] for s, v in SIZES.items() if v[0] == kw.get("embed_dim")), f"D{kw.get('embed_dim')}")
    extras = [w for w, on in (("distilled", kw.get("distilled")), ("CLIP", "clip" in parts),
                              (f"{kw.get('num_register_tokens')} registers", kw.get("num_register_tokens")),
                              ("backbone", kw.get("head") == "none")) if on]
    return f"{family}-{size}/{kw.get('patch_size')}{''.join(' ' + e for e in extras)} ({source})"


def spec_from_name(name: str) -> HubSpec:
    """A HubSpec from the repository's name alone: ImageNet's classes, but a backbone for a DINOv2, MAE or CLIP
    without "in1k" in its name."""
    kw = config_kwargs(name)
    lowered = name.lower()
    if any(w in lowered for w in ("dinov2", "mae", "clip")) and not any(w in lowered for w in ("in1k", "imagenet")):
        kw.update(head="none", num_classes=0)
    fmt = "timm" if name.startswith("timm/") else "transformers"
    config = ViTConfig(**kw)
    source = "timm" if fmt == "timm" else name
    return HubSpec(name=name, format=fmt, architecture=_parts(name)[0], config=config,
                   display_name=display_name(name, kw, source), class_names=None, crop_size=config.image_size,
                   resize_size=round(config.image_size / 0.875), read_from="the repository's name")


def square(name: str, value) -> int:
    """A side from a size in a repository's files: a number, or a list of equal ones (``name`` is named otherwise)."""
    if isinstance(value, list | tuple):
        if len(set(value)) != 1:
            raise InputError(f"{name} has a non-square size {list(value)}; supported: square images and patches")
        value = value[0]
    return int(value)
