"""timm's config.json (Wightman, "PyTorch Image Models") -> a :class:`~vit.model.hubconfig.HubSpec` (torch-free).

The architecture's own arguments come from its name (``vit.model.hubnames``); ``model_args`` (newer versions
only) override them, as ``timm.create_model(architecture, **model_args)`` does; ``pretrained_cfg`` says the rest.
"""

from __future__ import annotations

import math

from vit.config import ViTConfig
from vit.errors import InputError
from vit.model import hubnames
from vit.model.hubspec import HubSpec

# model_args that change nothing at inference.
_IGNORED = {"drop_rate", "pos_drop_rate", "patch_drop_rate", "proj_drop_rate", "attn_drop_rate", "drop_path_rate",
            "weight_init", "fix_init", "in_chans", "num_classes", "global_pool", "device", "dtype"}
# model_args whose only supported value is timm's default, and what another value would be.
_ONLY_DEFAULT = {
    "class_token": (True, "a ViT without a class token"),
    "pos_embed": ("learn", "a ViT without learned absolute position embeddings"),
    "qk_norm": (False, "a ViT with normalised queries and keys"),
    "scale_attn_norm": (False, "a ViT with a norm inside attention"),
    "scale_mlp_norm": (False, "a ViT with a norm inside the MLP"),
    "proj_bias": (True, "a ViT without an output-projection bias"),
    "final_norm": (True, "a ViT without a final norm"),
    "fc_norm": (False, "a ViT with a norm after pooling (fc_norm)"),
    "dynamic_img_size": (False, "a ViT with dynamic image sizes"),
    "dynamic_img_pad": (False, "a ViT with dynamic padding"),
    "pool_include_prefix": (False, "a ViT pooling over its prefix tokens"),
}


def _model_args(name: str, args: dict, kw: dict) -> dict:
    """``kw`` (from the name) with timm's ``model_args`` applied; refuses what is not a plain ViT."""
    kw = dict(kw)
    for key, value in args.items():
        if key in _IGNORED:
            continue
        if key in _ONLY_DEFAULT:
            default, what = _ONLY_DEFAULT[key]
            if value not in (default, None) or (key == "fc_norm" and value):
                raise InputError(f"{name} is {what} ({key}={value!r}), not a plain ViT; supported: {hubnames_list()}")
        elif key == "img_size":
            kw["image_size"] = hubnames.square(name, value)
        elif key == "patch_size":
            kw["patch_size"] = hubnames.square(name, value)
        elif key in ("embed_dim", "num_heads", "qkv_bias", "pre_norm"):
            kw[key] = value
            if key == "pre_norm":
                kw["patch_bias"] = not value
        elif key == "depth":
            kw["num_layers"] = int(value)
        elif key == "mlp_ratio":
            kw["hidden_dim"] = None if value == 4 else "ratio:" + str(value)
        elif key == "init_values":
            kw["layer_scale"] = value is not None
        elif key == "no_embed_class":
            kw["pos_embed_prefix"] = "none" if value else "all"
        elif key == "reg_tokens":
            kw["num_register_tokens"] = int(value)
        elif key == "act_layer":
            if value not in ("gelu", "quick_gelu"):
                raise InputError(f"{name} has the activation {value!r}; supported: 'gelu' and 'quick_gelu'")
            kw["activation"] = value
        else:
            raise InputError(f"{name} sets model_args {key}={value!r}, which this app does not know; "
                             f"supported: {hubnames_list()}")
    return kw


def hubnames_list() -> str:
    return "plain ViTs (timm's vit_*, deit_*, deit3_*, *_dinov2 with token pooling)"



def timm_config(name: str, config_json: dict) -> ViTConfig:
    """Our config of a timm repository: its architecture's name, then its model_args, classes and pooling."""
    architecture = str(config_json["architecture"])
    kw = hubnames.config_kwargs(architecture)
    input_size = (config_json.get("pretrained_cfg") or {}).get("input_size")
    if input_size:  # older config.json without model_args: the size the weights were made for
        kw["image_size"] = hubnames.square(name, input_size[1:])
    kw = _model_args(name, config_json.get("model_args") or {}, kw)
    pool = config_json.get("global_pool", (config_json.get("model_args") or {}).get("global_pool", "token"))
    if pool not in ("token", "", None):
        what = "an attention-pooling head" if pool in ("map", "prr") else f"{pool!r} pooling"
        raise InputError(f"{name} has {what} (global_pool={pool!r}), not the class token's; supported: "
                         f"{hubnames_list()}")
    num_classes = int(config_json.get("num_classes", 1000))
    if num_classes == 0:
        kw.update(head="none", num_classes=0)
    else:
        kw["num_classes"] = num_classes
        kw.setdefault("head", "token")
    if isinstance(kw.get("hidden_dim"), str):  # mlp_ratio: timm's int(D * ratio)
        kw["hidden_dim"] = int(kw["embed_dim"] * float(kw["hidden_dim"][6:]))
    return ViTConfig(**kw)


def timm_spec(name: str, config_json: dict) -> HubSpec:
    """The :class:`~vit.model.hubconfig.HubSpec` of a timm repository's config.json."""
    config = timm_config(name, config_json)
    pre = config_json.get("pretrained_cfg") or {}
    crop_pct = float(pre.get("crop_pct") or 0.875)
    mode = pre.get("crop_mode", "center")
    if mode not in ("center", "squash"):
        raise InputError(f"{name} preprocesses with crop_mode={mode!r}; supported: 'center' and 'squash'")
    interpolation = pre.get("interpolation", "bicubic")
    if interpolation not in ("bicubic", "bilinear", "nearest"):
        interpolation = "bicubic"  # timm's "random" and "lanczos" are not used at inference by these models
    labels = pre.get("label_names")
    if labels is not None and len(labels) != config.num_classes:
        labels = None
    tag = name.split(".", 1)[1] if "." in name.rsplit("/", 1)[-1] else ""
    kw = {"embed_dim": config.embed_dim, "patch_size": config.patch_size, "distilled": config.distilled,
          "num_register_tokens": config.num_register_tokens, "head": config.head}
    source = f"timm, {tag}" if tag else "timm"
    return HubSpec(
        name=name, format="timm", architecture=str(config_json["architecture"]), config=config,
        display_name=hubnames.display_name(str(config_json["architecture"]), kw, source),
        class_names=tuple(str(x) for x in labels) if labels else _default_classes(config),
        mean=tuple(float(v) for v in pre.get("mean", (0.485, 0.456, 0.406))),
        std=tuple(float(v) for v in pre.get("std", (0.229, 0.224, 0.225))),
        crop_size=config.image_size, resize_size=math.floor(config.image_size / crop_pct),
        interpolation=interpolation, squash=mode == "squash", licence=pre.get("license"),
    )


def _default_classes(config: ViTConfig) -> tuple[str, ...] | None:
    """None: ImageNet-1k's names (1,000 classes), "class 0".. otherwise; () for a backbone."""
    if config.num_classes == 1000:
        return None
    return tuple(f"class {i}" for i in range(config.num_classes))
