"""transformers' config.json and preprocessor_config.json -> a :class:`~vit.model.hubconfig.HubSpec` (torch-free).

Four model types are plain ViTs: ``vit`` (Dosovitskiy et al. 2021), ``deit`` (Touvron et al. 2021), ``dinov2``
(Oquab et al. 2023) and ``dinov2_with_registers`` (Darcet et al. 2024). ``*ForImageClassification*`` has a head,
``*Model`` is a backbone.
"""

from __future__ import annotations

from vit.config import ViTConfig
from vit.errors import InputError
from vit.model import hubnames
from vit.model.hubspec import HubSpec

TYPES = ("vit", "deit", "dinov2", "dinov2_with_registers")
_FAMILY = {"vit": "vit", "deit": "deit", "dinov2": "dinov2", "dinov2_with_registers": "dinov2"}
_RESAMPLE = {0: "nearest", 2: "bilinear", 3: "bicubic", 1: "bicubic"}  # PIL's numbers; LANCZOS read as bicubic
_DEFAULTS = {  # what each config class defaults to, where the file may leave it out
    "vit": dict(image_size=224, patch_size=16, layer_norm_eps=1e-12, qkv_bias=True, hidden_size=768,
                num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072),  # DeiT's too
    "dinov2": dict(image_size=224, patch_size=14, layer_norm_eps=1e-6, qkv_bias=True, hidden_size=768,
                   num_hidden_layers=12, num_attention_heads=12, mlp_ratio=4),
}


def _head(model_type: str, architectures: list[str]) -> str:
    classifier = any("ForImageClassification" in a for a in architectures)
    if not classifier:
        return "none"
    if model_type == "deit":
        return "token_distill_mean" if any(a.endswith("WithTeacher") for a in architectures) else "token"
    return "token_and_patch_mean" if model_type.startswith("dinov2") else "token"


def transformers_config(name: str, cfg: dict, image_size: int | None) -> ViTConfig:
    """Our config of a transformers repository; ``image_size`` is the preprocessor's crop when it differs
    from the config's (DINOv2: trained at 518 px, run at 224 px, its position embedding resampled)."""
    model_type = cfg.get("model_type")
    if model_type not in TYPES:
        raise InputError(f"{name} is a transformers {model_type!r} model, not a plain ViT; supported model types: "
                         f"{', '.join(TYPES)}")
    c = {**_DEFAULTS["dinov2" if model_type.startswith("dinov2") else "vit"], **cfg}
    act = c.get("hidden_act", "gelu")
    if act not in ("gelu", "quick_gelu"):
        raise InputError(f"{name} has the activation {act!r}; supported: 'gelu' and 'quick_gelu'")
    if c.get("use_swiglu_ffn"):
        raise InputError(f"{name} has a SwiGLU MLP, not a plain ViT's; supported: DINOv2 with the GELU MLP")
    D = int(c["hidden_size"])
    hidden = int(c["intermediate_size"]) if "intermediate_size" in c else int(D * float(c["mlp_ratio"]))
    id2label = c.get("id2label") or {}
    head = _head(model_type, list(c.get("architectures") or []))
    registers = int(c.get("num_register_tokens", 0)) if model_type == "dinov2_with_registers" else 0
    return ViTConfig(
        image_size=image_size or hubnames.square(name, c["image_size"]),
        patch_size=hubnames.square(name, c["patch_size"]),
        in_channels=int(c.get("num_channels", 3)), num_classes=0 if head == "none" else len(id2label),
        embed_dim=D, num_heads=int(c["num_attention_heads"]), num_layers=int(c["num_hidden_layers"]),
        hidden_dim=None if hidden == 4 * D else hidden, ln_eps=float(c["layer_norm_eps"]),
        num_register_tokens=registers, distilled=model_type == "deit",
        pos_embed_prefix="class" if registers else "all", layer_scale=model_type.startswith("dinov2"),
        qkv_bias=bool(c["qkv_bias"]), activation=act, head=head,
    )


def preprocessing(name: str, pre: dict | None, cfg: dict) -> dict:
    """HubSpec's preprocessing fields from preprocessor_config.json (the config class's defaults without one)."""
    model_type = cfg.get("model_type")
    if pre is None:  # as ViTImageProcessor, DeiTImageProcessor and BitImageProcessor default
        pre = {"vit": {"size": {"height": 224, "width": 224}, "resample": 2, "image_mean": [0.5] * 3,
                       "image_std": [0.5] * 3},
               "deit": {"size": {"height": 256, "width": 256}, "crop_size": {"height": 224, "width": 224},
                        "do_center_crop": True, "resample": 3}}.get(model_type, {
                   "size": {"shortest_edge": 256}, "crop_size": {"height": 224, "width": 224},
                   "do_center_crop": True, "resample": 3})
    size = pre.get("size") or {"height": 224, "width": 224}
    if isinstance(size, int | float):
        size = {"shortest_edge": int(size)}
    squash = "shortest_edge" not in size
    resize = int(size["shortest_edge"]) if not squash else hubnames.square(name, [size["height"], size["width"]])
    crop = pre.get("crop_size") or {}
    crop = crop if isinstance(crop, dict) else {"height": crop, "width": crop}
    crop_size = hubnames.square(name, [crop["height"], crop["width"]]) if pre.get("do_center_crop") and crop else resize
    if pre.get("do_resize") is False:
        raise InputError(f"{name}'s preprocessor does not resize; supported: processors that resize and crop")
    return dict(mean=tuple(float(v) for v in pre.get("image_mean", (0.485, 0.456, 0.406))),
                std=tuple(float(v) for v in pre.get("image_std", (0.229, 0.224, 0.225))),
                crop_size=crop_size, resize_size=resize, squash=squash,
                interpolation=_RESAMPLE.get(int(pre.get("resample", 2)), "bilinear"))


def transformers_spec(name: str, cfg: dict, pre: dict | None) -> HubSpec:
    """The :class:`~vit.model.hubconfig.HubSpec` of a transformers repository."""
    prep = preprocessing(name, pre, cfg)
    config = transformers_config(name, cfg, prep["crop_size"])
    id2label = cfg.get("id2label") or {}
    labels = tuple(str(id2label.get(str(i), id2label.get(i, f"class {i}"))) for i in range(config.num_classes))
    family = _FAMILY[cfg["model_type"]]
    kw = {"embed_dim": config.embed_dim, "patch_size": config.patch_size, "distilled": config.head ==
          "token_distill_mean", "num_register_tokens": config.num_register_tokens, "head": config.head}
    display = hubnames.display_name(f"{family}_{name.rsplit('/', 1)[-1]}", kw, name.rsplit("/", 1)[-1])
    return HubSpec(name=name, format="transformers", architecture=str(cfg["model_type"]), config=config,
                   display_name=display, class_names=labels, **prep)
