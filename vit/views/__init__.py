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
- ``whatif``: what if? the image with patches removed (hatched) and the grid of heads;
- ``draw``: the image primitives (colormaps, overlays, patch grid, colour bars, text, sheets);
- ``plots``: the plots drawn with them (depth plot, bars, dots, lines, the block diagram);
- ``pictures``: the one registry of the page's pictures (imported on its own: ``vit.views.registry``).

The public names of the view modules are re-exported here: ``views.grid_view(...)``.
"""

from vit.views.attention import heads_view, layers_view, rollout_view
from vit.views.base import (
    DEPTH_PLOT_SIZE,
    DISPLAY_SIZE,
    TILE_SIZE,
    View,
    captioned,
    clicked_fraction,
    display_size,
    fit_note,
    grid_size_for,
    picture_box,
    plain,
    query_cell,
    token_index,
)
from vit.views.depth import depth_view
from vit.views.draw import language as drawing_language
from vit.views.figure7 import (
    distance_points,
    distance_view,
    filter_tiles,
    filters_view,
    position_step,
    position_view,
)
from vit.views.inside import (
    block_code_view,
    block_view,
    lens_classes,
    lens_colours,
    lens_palette,
    lens_view,
    matrix_factor,
    matrix_view,
    token_norm_view,
)
from vit.views.patches import STAGE_HEADERS, grid_view, query_view, stage_rows, top_k
from vit.views.whatif import HeadGrid, head_grid_view, intervention_view
from vit.views.why import comparison_rows, curves_view, explanation_view

__all__ = [
    "DEPTH_PLOT_SIZE", "DISPLAY_SIZE", "HeadGrid", "STAGE_HEADERS", "TILE_SIZE", "View", "block_code_view",
    "block_view", "captioned", "clicked_fraction", "comparison_rows", "curves_view", "depth_view", "display_size",
    "distance_points", "distance_view", "drawing_language", "explanation_view", "filter_tiles", "filters_view",
    "fit_note", "grid_size_for", "grid_view", "head_grid_view", "heads_view", "intervention_view", "layers_view",
    "lens_classes", "lens_colours", "lens_palette", "lens_view", "matrix_factor", "matrix_view", "picture_box",
    "plain", "position_step", "position_view", "query_cell", "query_view", "rollout_view", "stage_rows",
    "token_index", "token_norm_view", "top_k",
]
