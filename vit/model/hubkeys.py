"""The key maps of the Hub's two formats into the chapter's names (pure functions, as ``convert_torchvision``).

One table per format, ``{i}`` the encoder layer. timm's fused ``qkv`` (3D, D) is split into ``q_proj``, ``k_proj``
and ``v_proj`` in that order (its ``Attention`` reshapes to (B, T, 3, h, D/h)). Keys no inference forward uses
(``mask_token``, ``ViTModel``'s pooler) are dropped; any other key the table does not know is an error.
"""

from __future__ import annotations

import re

from torch import Tensor

from vit.errors import WeightsError

_L = "encoder.layers.{i}."
TIMM_KEYS: dict[str, str] = {
    "cls_token": "embedding.add_cls_token.cls_token",
    "dist_token": "embedding.add_cls_token.dist_token",
    "reg_token": "embedding.add_cls_token.register_tokens",
    "pos_embed": "embedding.pos_embed.weight",
    "patch_embed.proj.weight": "embedding.patch_embed.proj.weight",
    "patch_embed.proj.bias": "embedding.patch_embed.proj.bias",
    "norm_pre.weight": "embedding.norm_pre.weight",
    "norm_pre.bias": "embedding.norm_pre.bias",
    "blocks.{i}.norm1.weight": _L + "norm1.weight",
    "blocks.{i}.norm1.bias": _L + "norm1.bias",
    "blocks.{i}.attn.qkv.weight": _L + "attn.{qkv}_proj.weight",
    "blocks.{i}.attn.qkv.bias": _L + "attn.{qkv}_proj.bias",
    "blocks.{i}.attn.proj.weight": _L + "attn.out_proj.weight",
    "blocks.{i}.attn.proj.bias": _L + "attn.out_proj.bias",
    "blocks.{i}.ls1.gamma": _L + "scale1.gamma",
    "blocks.{i}.norm2.weight": _L + "norm2.weight",
    "blocks.{i}.norm2.bias": _L + "norm2.bias",
    "blocks.{i}.mlp.fc1.weight": _L + "mlp.net.0.weight",
    "blocks.{i}.mlp.fc1.bias": _L + "mlp.net.0.bias",
    "blocks.{i}.mlp.fc2.weight": _L + "mlp.net.3.weight",
    "blocks.{i}.mlp.fc2.bias": _L + "mlp.net.3.bias",
    "blocks.{i}.ls2.gamma": _L + "scale2.gamma",
    "norm.weight": "encoder.norm.weight",
    "norm.bias": "encoder.norm.bias",
    "head.weight": "head.head.weight",
    "head.bias": "head.head.bias",
    "head_dist.weight": "head.head_dist.weight",
    "head_dist.bias": "head.head_dist.bias",
}
_T = "encoder.layer.{i}."
TRANSFORMERS_KEYS: dict[str, str | None] = {
    "embeddings.cls_token": "embedding.add_cls_token.cls_token",
    "embeddings.distillation_token": "embedding.add_cls_token.dist_token",
    "embeddings.register_tokens": "embedding.add_cls_token.register_tokens",
    "embeddings.mask_token": None,  # masked image modelling's, not used at inference
    "embeddings.position_embeddings": "embedding.pos_embed.weight",
    "embeddings.patch_embeddings.projection.weight": "embedding.patch_embed.proj.weight",
    "embeddings.patch_embeddings.projection.bias": "embedding.patch_embed.proj.bias",
    **{_T + f"{ln}.{p}": _L + f"{ours}.{p}" for ln, ours in (("layernorm_before", "norm1"), ("norm1", "norm1"),
                                                             ("layernorm_after", "norm2"), ("norm2", "norm2"))
       for p in ("weight", "bias")},
    **{_T + f"attention.attention.{theirs}.{p}": _L + f"attn.{ours}_proj.{p}"
       for theirs, ours in (("query", "q"), ("key", "k"), ("value", "v")) for p in ("weight", "bias")},
    **{_T + f"attention.output.dense.{p}": _L + f"attn.out_proj.{p}" for p in ("weight", "bias")},
    **{_T + f"{theirs}.{p}": _L + f"mlp.net.{n}.{p}" for theirs, n in (("intermediate.dense", 0),
                                                                       ("output.dense", 3), ("mlp.fc1", 0),
                                                                       ("mlp.fc2", 3)) for p in ("weight", "bias")},
    _T + "layer_scale1.lambda1": _L + "scale1.gamma",
    _T + "layer_scale2.lambda1": _L + "scale2.gamma",
    "layernorm.weight": "encoder.norm.weight",
    "layernorm.bias": "encoder.norm.bias",
    "pooler.dense.weight": None,  # ViTModel's pooler (dense + tanh), not the classifier's input
    "pooler.dense.bias": None,
    "classifier.weight": "head.head.weight",
    "classifier.bias": "head.head.bias",
    "cls_classifier.weight": "head.head.weight",
    "cls_classifier.bias": "head.head.bias",
    "distillation_classifier.weight": "head.head_dist.weight",
    "distillation_classifier.bias": "head.head_dist.bias",
}
_TIMM_LAYER = re.compile(r"^blocks\.(\d+)\.")
_TRANSFORMERS_LAYER = re.compile(r"^encoder\.layer\.(\d+)\.")
_BACKBONE_PREFIX = re.compile(r"^(vit|deit|dinov2)\.")


def _convert(state: dict[str, Tensor], table: dict, layer: re.Pattern, template: str, fmt: str,
             rename=lambda k: k) -> dict[str, Tensor]:
    out: dict[str, Tensor] = {}
    unknown = []
    for key, value in state.items():
        theirs = rename(key)
        match = layer.search(theirs)
        generic = layer.sub(template, theirs) if match else theirs
        if generic not in table:
            unknown.append(key)
            continue
        ours = table[generic]
        if ours is None:
            continue
        ours = ours.replace("{i}", match.group(1)) if match else ours
        if "{qkv}" in ours:
            for part, chunk in zip("qkv", value.chunk(3, dim=0)):
                out[ours.replace("{qkv}", part)] = chunk
        elif ours.endswith("cls_token") or ours.endswith("dist_token") or ours.endswith("register_tokens"):
            out[ours] = value.reshape(1, -1, value.shape[-1])  # (1, n, D) in every format
        else:
            out[ours] = value
    if unknown:
        raise WeightsError(f"the checkpoint has keys that are not a plain {fmt} ViT's: {', '.join(unknown[:5])}")
    return out


def convert_timm(state: dict[str, Tensor]) -> dict[str, Tensor]:
    """A timm ViT state dict under our names (a new dict); a WeightsError names the keys the map does not know."""
    return _convert(state, TIMM_KEYS, _TIMM_LAYER, "blocks.{i}.", "timm")


def convert_transformers(state: dict[str, Tensor]) -> dict[str, Tensor]:
    """Rename a transformers ViT, DeiT or DINOv2 state dict to ours (a new dict; the input is untouched)."""
    return _convert(state, TRANSFORMERS_KEYS, _TRANSFORMERS_LAYER, _T, "transformers",
                    rename=lambda k: _BACKBONE_PREFIX.sub("", k))
