"""The models the page's menu offers: the six presets, a short curated list of small Hub ViTs, and the
operator's own (``python app.py --models ID[,ID...]`` or ``VIT_MODELS``).

A visitor picks from this menu and never types a repository id: ``vit.validate.model_name`` refuses an id nobody
registered, so no request can make the server download what it names. The curated models are registered from
their names (no network); their files come when one is first analysed (``vit.model.weights``) or at a Space's
build (``preload_from_hub`` in README.md). The operator's config.json are read at start.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace

from vit.config import DISPLAY_NAMES, HUB_DISPLAY_NAMES, HUB_MODELS

log = logging.getLogger("vit.app")


@dataclass(frozen=True)
class Curated:
    """A Hub model the menu offers everyone, and why (README, "Your own model")."""

    repo: str
    menu_name: str
    why: str


# Small and fast on a laptop's CPU, each showing what the chapter's plain ViT leaves out.
CURATED: tuple[Curated, ...] = (
    Curated("timm/vit_tiny_patch16_224.augreg_in21k_ft_in1k", "ViT-Ti/16 ImageNet (timm, Hub)",
            "the chapter's ViT at its smallest: 5.7 M parameters, 23 MB, ~5x faster than ViT-B/16"),
    Curated("timm/deit_tiny_distilled_patch16_224.fb_in1k", "DeiT-Ti/16 distilled (timm, Hub)",
            "a second prefix token, the distillation token (Touvron et al. 2021); 5.9 M parameters, 24 MB"),
    Curated("timm/vit_small_patch14_reg4_dinov2.lvd142m", "DINOv2-S/14 with 4 registers, no classifier (timm, Hub)",
            "self-supervised, 4 register tokens (Darcet et al. 2024), no head: attention and tokens only; 88 MB"),
    Curated("timm/vit_base_patch16_clip_224.openai_ft_in1k", "ViT-B/16 from CLIP, ImageNet (timm, Hub)",
            "CLIP's pretraining and its norm before the encoder, fine-tuned on ImageNet; 346 MB"),
)

_MENU: dict[str, str] = {}  # the menu's name -> the registry key


def operator_models(arg: str | None = None) -> list[str]:
    """The ids (or folders) the operator listed: ``--models`` if given, else ``$VIT_MODELS``; comma-separated."""
    text = arg if arg is not None else os.environ.get("VIT_MODELS", "")
    return [part.strip() for part in text.split(",") if part.strip()]


def register(operator: Iterable[str] = (), curated: bool = True) -> list[str]:
    """Put the curated models (from their names, no network) and the operator's (config.json read now) in the menu;
    the Hub models' menu names, in order. InputError: an operator's id that is not a plain ViT."""
    from vit.model import hubconfig, hubnames  # noqa: PLC0415 - only for Hub models

    names = []
    for c in CURATED if curated else ():
        spec = hubconfig.SPECS.get(c.repo) or hubnames.spec_from_name(c.repo)
        names.append(_listed(spec, c.menu_name))
    for value in operator:
        spec = hubconfig.read_spec(value)
        names.append(_listed(spec, spec.display_name))
        log.info("model menu: %s (%s)", spec.display_name, spec.name)
    return names


def _listed(spec, shown: str) -> str:
    """Register ``spec`` under the name the menu shows (kept when its config.json is read later)."""
    from vit.model import hubconfig  # noqa: PLC0415

    if shown in DISPLAY_NAMES.values() or _MENU.get(shown, spec.name) != spec.name:
        shown = f"{shown} [{spec.name}]"  # two repositories read as one name: the id tells them apart
    _MENU[shown] = spec.name
    hubconfig.remember(replace(spec, display_name=shown))
    return shown


def menu() -> list[str]:
    """Every model the page offers, by the names the menu shows: the presets first."""
    return [*DISPLAY_NAMES.values(), *_MENU]


def menu_name(key: str) -> str:
    """The name the menu shows for a model's key."""
    for shown, k in _MENU.items():
        if k == key:
            return shown
    return DISPLAY_NAMES.get(key) or HUB_DISPLAY_NAMES.get(key, key)


def is_hub(name: str) -> bool:
    return name in HUB_MODELS
