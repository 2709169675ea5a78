"""The explanation methods' registry: names, titles, papers (torch-free, so the page can list them at startup).

:mod:`vit.explanations` computes them; see its docstring for what each map is.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Method:
    """One way to answer "which patches made the model say this class?"."""

    name: str  # the registry key: "grad_rollout"
    title: str  # what people read: "Gradient-weighted rollout"
    paper: str  # where it comes from
    class_specific: bool  # does the map change with the class asked about?
    gradient: bool  # does it need a backward pass?
    contrastive: bool = False  # can it answer "why A rather than B?" (the gradient of logit[A] - logit[B])


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("attnlrp", "AttnLRP", "Achtibat et al. 2024, AttnLRP: Attention-Aware Layer-Wise Relevance "
               "Propagation for Transformers (ICML)", True, True, True),
        Method("occlusion", "Occlusion (2×2 tokens)", "Zeiler & Fergus 2014, Visualizing and Understanding "
               "Convolutional Networks (ECCV), on the tokens: each 2×2 block of patches removed in turn", True, False),
        Method("rollout", "Attention rollout", "Abnar & Zuidema 2020, Quantifying Attention Flow in Transformers",
               False, False),
        Method("attention", "Last layer's attention", "the class token's attention in the last layer, mean of the "
               "heads", False, False),
        Method("grad_rollout", "Gradient-weighted rollout", "Chefer, Gur & Wolf 2021, Generic Attention-model "
               "Explainability for Interpreting Bi-Modal and Encoder-Decoder Transformers (ICCV)", True, True, True),
        Method("gradcam", "Grad-CAM", "Selvaraju et al. 2017, Grad-CAM: Visual Explanations from Deep Networks "
               "via Gradient-based Localization (ICCV)", True, True, True),
    )
}

# The class-specific map offered first (the Why? tab, the CLI, the API, the lesson): the winner of the two-shape
# pointing game (``python benchmarks/explanations.py``; docs/explanations.md has the table), asked contrastively.
DEFAULT_METHOD = "attnlrp"
AUTO = "auto"  # "rather than" the model's strongest other class

# Two-shape pointing of each class-specific map as the page asks it (contrastive where it can be), on that
# benchmark's first 200 questions: a caption under POINTS_AT says the map may light the other of two objects.
TWO_OBJECTS = {"attnlrp": 0.965, "occlusion": 0.93, "grad_rollout": 0.775, "gradcam": 0.685}
POINTS_AT = 0.9
EXPLAIN_PASSES = 3.5  # a gradient map (a forward and a backward pass), or a map read off one forward, at most


def forward_passes(name: str, rows: int, cols: int) -> float:
    """What a map costs in forward passes of the analysis' setting: occlusion one per 2 x 2 block and one."""
    if name == "occlusion":
        return max(1, rows - 1) * max(1, cols - 1) + 1
    return EXPLAIN_PASSES

# Grad-CAM's default block (1-based) per model: for the model trained here, the best pointing game on the
# faithfulness table's ground truth (``python benchmarks/faithfulness.py --gradcam-layers``); a negative
# value counts from the end, and every other model takes -1, the block before the last.
GRADCAM_LAYERS: dict[str, int] = {"vit_tiny_shapes": 4}


def default_gradcam_layer(name: str, num_layers: int) -> int:
    """Grad-CAM's default block (1..num_layers) for the model ``name`` run at ``num_layers`` blocks."""
    default = GRADCAM_LAYERS.get(name, -1)
    return min(num_layers, default) if default > 0 else max(1, num_layers + default)
