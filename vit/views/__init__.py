"""Views of one analysis: each picture with its caption, legend and title (chapter 11.4's notation).

The app, the CLI (``python -m vit analyze --out``) and the benchmark draw through these
functions, so what a class sees, what a teacher saves and what is timed are the same pictures.
Pure and Gradio-free: an :class:`vit.Analysis` in, a :class:`View` (PIL picture + markdown) out.
``layer`` and ``head`` are 1-based and validated by the caller. Every heatmap carries a colour
bar whose ends are the numbers in ``View.scale``, and every caption names what was drawn.

- ``base``: :class:`View`, the picture sizes, clicks and tokens (``query_cell``, ``token_index``,
  ``picture_box``, ``clicked_fraction``), ``fit_note``, the heat view, ``captioned`` and ``plain``;
- ``patches``: the patch grid, one patch as the query, the stage table and the top-k;
- ``attention``: attention rollout, the class token per head and per layer;
- ``depth``: the early-exit plot;
- ``inside``: the Inside tab: the block, the lens, token norms, the whole attention matrix;
- ``figure7``: the ViT paper's Figure 7: filters, position similarity, mean attention distance;
- ``why``: an explanation map and its deletion and insertion curves;
- ``draw``: the image primitives (colormaps, overlays, patch grid, colour bars, text, sheets);
- ``plots``: the plots drawn with them (depth plot, bars, dots, lines, the block diagram);
- ``pictures``: the one registry of the page's pictures (imported on its own: ``vit.views.pictures``).

The public names of the view modules are re-exported here: ``views.grid_view(...)``.
"""

from vit.views.attention import heads_view, layers_view, rollout_view
from vit.views.base import (
    DEPTH_PLOT_SIZE,
    DISPLAY_SIZE,
    HEAT_LABEL,
    TILE_SIZE,
    View,
    captioned,
    clicked_fraction,
    display_size,
    fit_note,
    picture_box,
    plain,
    query_cell,
    token_index,
)
from vit.views.depth import depth_view
from vit.views.figure7 import (
    FILTER_COLUMNS,
    POSITION_TILES,
    distance_points,
    distance_view,
    filter_tiles,
    filters_view,
    position_step,
    position_view,
)
from vit.views.inside import (
    BLOCK_SERIES,
    LENS_CLASSES,
    MATRIX_CMAP,
    block_view,
    lens_classes,
    lens_colours,
    lens_view,
    matrix_factor,
    matrix_view,
    token_norm_view,
)
from vit.views.patches import STAGE_HEADERS, STAGE_NOTE, grid_view, query_view, stage_rows, top_k
from vit.views.why import (
    COMPARISON_HEADERS,
    CURVE_COLOURS,
    auc_text,
    comparison_rows,
    curves_view,
    explanation_view,
)

__all__ = [
    "BLOCK_SERIES", "COMPARISON_HEADERS", "CURVE_COLOURS", "DEPTH_PLOT_SIZE", "DISPLAY_SIZE", "FILTER_COLUMNS",
    "HEAT_LABEL", "LENS_CLASSES", "MATRIX_CMAP", "POSITION_TILES", "STAGE_HEADERS", "STAGE_NOTE", "TILE_SIZE",
    "WHAT_IS", "View", "auc_text", "block_view", "captioned", "clicked_fraction", "comparison_rows", "curves_view",
    "depth_view", "display_size", "distance_points", "distance_view", "explanation_view", "filter_tiles",
    "filters_view", "fit_note", "grid_view", "heads_view", "layers_view", "lens_classes", "lens_colours",
    "lens_view", "matrix_factor", "matrix_view", "picture_box", "plain", "position_step", "position_view",
    "query_cell", "query_view", "rollout_view", "stage_rows", "token_index", "token_norm_view", "top_k",
]

# The "What is this?" texts, until vit/ui/layout.py reads them from the registry (vit.views.pictures).
WHAT_IS: dict[str, str] = {
    "patches": (
        "A transformer reads a sequence of tokens, not pixels. The H×W image is cut into P×P patches and each "
        "patch is mapped to a D-dimensional token by one shared linear map (a convolution with kernel = stride = P). "
        "The N = HW/P² patch tokens are read row by row, left to right, after a learned class token (token 0): "
        "N+1 tokens in all. A smaller P gives more, finer tokens, and attention's cost grows with (N+1)²."
    ),
    "attention": (
        "One row of softmax(QKᵀ/√d): the chosen patch's query is compared with every token's key, and the "
        "softmax turns the scores into weights that sum to 1. Bright patches are those whose values this patch "
        "mixes in most, at this layer and head. It shows where one patch looks at one depth, not what the model "
        "finally relies on."
    ),
    "rollout": (
        "Attention rollout (Abnar & Zuidema, 2020) follows attention back through the layers. Each layer's "
        "attention, heads fused and the residual path added (A + I, rows renormalised), says how much each token "
        "draws from every other; multiplying these from layer 1 up estimates how much of each patch reaches the "
        "class token, which makes the prediction. It is an estimate of information flow, not a proof of what mattered."
    ),
    "heads": (
        "Each layer has h attention heads working side by side, each with its own query, key and value "
        "projections. One tile per head shows where the class token looks in that head: heads are free to "
        "specialise, on the object, the background or neighbouring patches. Each tile is coloured from 0 to its "
        "own max, so compare where the tiles look, not how strongly."
    ),
    "layers": (
        "One tile per encoder layer: where the class token looks at that depth, heads fused. Early layers often "
        "look broadly or locally; later ones, after the tokens have exchanged information, often settle on what "
        "the decision rests on. Each tile is coloured from 0 to its own max."
    ),
    "early_exit": (
        "After every layer the class token is sent through the final LayerNorm and the classification head, as "
        "if the model stopped there (an early exit). Blue: the probability of the final answer at each depth; "
        "orange: whichever class would win there. The head was trained on the last layer only, so early readings "
        "are rough, but they show at what depth the answer forms."
    ),
    "explanation": (
        "An explanation map answers \"which patches made the model say this class?\". Rollout and the last "
        "layer's attention follow attention only, so they draw the same map whatever class you ask about. "
        "Gradient-weighted rollout (Chefer et al., 2021) weighs each layer's attention by how much it moves the "
        "chosen class's score, and Grad-CAM weighs the last layer's token features the same way: ask about "
        "another class and the map changes. A map is a claim, not a fact: test it."
    ),
    "curves": (
        "The test (deletion and insertion, Petsiuk et al., 2018): grey out the patches the map ranks first, "
        "10% at a time, and watch the class's probability. If the map is right it falls fast (deletion: lower "
        "area is better) and, starting from a grey image and putting those patches back first, it rises fast "
        "(insertion: higher area is better). The dashed lines do the same in a random order: a map worth "
        "believing beats them."
    ),
}
