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


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("rollout", "Attention rollout", "Abnar & Zuidema 2020, Quantifying Attention Flow in Transformers",
               False, False),
        Method("attention", "Last layer's attention", "the class token's attention in the last layer, mean of the "
               "heads", False, False),
        Method("grad_rollout", "Gradient-weighted rollout", "Chefer, Gur & Wolf 2021, Generic Attention-model "
               "Explainability for Interpreting Bi-Modal and Encoder-Decoder Transformers (ICCV)", True, True),
        Method("gradcam", "Grad-CAM", "Selvaraju et al. 2017, Grad-CAM: Visual Explanations from Deep Networks "
               "via Gradient-based Localization (ICCV)", True, True),
    )
}

# Grad-CAM's default block (1-based) per model: for the model trained here, the best pointing game on the
# faithfulness table's ground truth (``python benchmarks/faithfulness.py --gradcam-layers``); a negative
# value counts from the end, and every other model takes -1, the block before the last.
GRADCAM_LAYERS: dict[str, int] = {"vit_tiny_shapes": 4}


def default_gradcam_layer(name: str, num_layers: int) -> int:
    """Grad-CAM's default block (1..num_layers) for the model ``name`` run at ``num_layers`` blocks."""
    default = GRADCAM_LAYERS.get(name, -1)
    return min(num_layers, default) if default > 0 else max(1, num_layers + default)
