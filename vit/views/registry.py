"""Every picture the page, the API, the CLI's ``--out`` and the benchmark draw, each a :class:`Picture`, and the
:class:`Display` a redraw may change. A new picture: its view, its ``Picture``, its message keys (docs/layout.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from PIL import Image

from vit import validate
from vit.errors import InputError
from vit.views import attention, base, depth, figure7, inside, patches, whatif, why
from vit.views.draw import COLORBAR_ONE_LINE, COLORBAR_RESERVE, COLORBAR_WIDE, language

DISPLAY_SIZE = base.DISPLAY_SIZE  # px, a main picture as drawn without a screen (the CLI, the API)
TILE_SIZE = base.TILE_SIZE  # px, one small-multiples tile
PROJECTOR_SIZE = 900  # px: a main picture in projector mode without a screen
PROJECTOR_TILE = 280  # px: one small-multiples tile in projector mode, likewise
# Projector mode draws at the frame's size / PROJECTOR_ENLARGE and the server enlarges the drawing to the frame:
# text drawn at >= draw.SMALLEST_TEXT = 14 px is >= 19 px on the wall.
PROJECTOR_ENLARGE = 1.4
MIN_FRAME = 120  # px: no picture is drawn for a smaller frame
OVERFLOW = 0.02  # a picture this much larger than its frame is shown a little smaller; more is drawn again
CENTRE = (0.5, 0.5)  # the query patch before any click, as a fraction of (width, height)

# The frames (width, height) px a tab's pictures are drawn for on each screen (390 x 844, 1280 x 720, 1920 x 1080),
# never enlarged, so a click maps through one scale. Keys: "" for any tab, a tab, or a picture with its own frame.
SCREENS: dict[str, dict[str, tuple[int, int]]] = {
    "phone": {"": (318, 360)},
    "laptop": {"": (428, 340), "why": (428, 405), "whatif": (428, 415), "inside": (872, 360), "figure7": (280, 415)},
    "wide": {"": (670, 690), "why": (670, 755), "whatif": (670, 765), "whatif-heads": (670, 518),
             "inside": (1357, 710), "figure7": (440, 765)},
}


def screen_frame(screen: str, tab: str, picture: str | None = None) -> tuple[int, int]:
    """The frame (width, height) a picture of ``tab`` is drawn for on ``screen`` (one of :data:`SCREENS`)."""
    frames = SCREENS[screen]
    return next(frames[k] for k in (picture, tab, "") if k in frames)


@dataclass(frozen=True)
class Display:
    """How the pictures of one analysis are shown: everything a redraw may change, and nothing else."""

    query: tuple[float, float] = CENTRE  # the clicked patch, as fractions (x, y) of the picture
    layer: int | None = None  # 1-based; None: the last layer run
    head: int = 1  # 1-based
    opacity: float = 0.6
    cmap: str = "cividis"  # reads the same to colour-blind viewers and in greyscale
    projector: bool = False  # drawn larger, for the back of the room
    frame: tuple[int, int] | None = None  # (width, height) px (:func:`screen_frame`); None: the fixed sizes()
    lang: str = "en"  # the language of its captions and of the words drawn in it (vit.i18n): "en" or "zh"
    marks: bool = True  # outline the query (Picture.marks_query); False on the page, which outlines it at once

    def sizes(self) -> tuple[int, int]:
        """(main picture, small-multiples tile) in pixels, as drawn when no frame is given."""
        return (PROJECTOR_SIZE, PROJECTOR_TILE) if self.projector else (DISPLAY_SIZE, TILE_SIZE)

    def target(self) -> tuple[int, int] | None:
        """(width, height) px that fills the frame (in projector mode, before :func:`draw` enlarges it), or None."""
        if self.frame is None:
            return None
        k = PROJECTOR_ENLARGE if self.projector else 1.0
        return tuple(max(MIN_FRAME, int(v / k)) for v in self.frame)

    def layer_of(self, a) -> int:
        return a.depth if self.layer is None else self.layer


# A view's weights: Figure 7's filters and position similarities come from the loaded model, not the analysis.
Weights = Callable[[str], Any]  # "filters" or "similarity" -> the array view.filters_view / position_view draws


@dataclass(frozen=True)
class Picture:
    """One picture of the page: where it is, what it says, how it is drawn, what it depends on."""

    name: str  # element id; its caption is "<name>-caption"
    tab: str  # the page tab that shows it
    title: dict[str, str]  # the heading above it, by language ("en", "zh")
    what_is: dict[str, str]  # "What is this?": two to five sentences for a newcomer, by language
    draw: Callable[..., Any] = field(repr=False)  # (analysis, Display, size, tile, weights) -> View
    depends_on: tuple[str, ...] = ()  # the Display fields it is drawn from (besides the analysis)
    on_fusion: bool = False  # drawn from the head fusion (rollout, fused per-layer maps)
    on_discard: bool = False  # drawn from the discard ratio
    clickable: bool = False  # a click picks the query patch (What if?'s own: a patch or a head to take away)
    download: bool = True
    in_api: bool = False  # returned by /analyze and /redraw
    out_file: str = ""  # the CLI's ``--out`` writes it under this name ("": it does not)
    # How a frame sizes it: "square" (``size`` the longer side, a colour bar under it), "grid" (the patch grid),
    # "sheet" (``tile`` is the frame), "plot" (``size`` is the frame's (width, height)).
    fit: str = "square"
    # As the page and the API send it: "jpeg" on the photo, "png" for plots, code, matrices and cards (exact lines).
    encoding: str = "jpeg"
    marks_query: bool = False  # the query shows only as an outline: with Display.marks False it changes nothing


def _weights_needed(weights: Weights | None, name: str) -> Weights:
    if weights is None:
        raise InputError(f"the {name} picture is drawn from the model's weights: pass weights=")
    return weights


PICTURES: dict[str, Picture] = {}
API_PICTURES: tuple[str, ...] = ()  # what /analyze and /redraw return
OUT_PICTURES: tuple[str, ...] = ()  # what the CLI's --out writes
# Drawn from an Analysis on the tabs (the lesson's own pictures are drawn by the lesson, one per step).
ANALYSIS_PICTURES: tuple[str, ...] = ()
TABS = ("patches", "attention", "depth", "why", "whatif", "inside", "figure7", "lesson")  # the page's tabs, in order
# Tabs that draw their own pictures: from an explanation (vit.ui.tabs.why), from an intervention (vit.ui.tabs.whatif).
OWN_PICTURES = ("why", "whatif")


def register(*pictures: Picture) -> None:
    """Add pictures: the page, /analyze and /redraw (``in_api``) and the CLI's ``--out`` (``out_file``) show them."""
    global API_PICTURES, OUT_PICTURES, ANALYSIS_PICTURES  # the lists follow PICTURES
    PICTURES.update((p.name, p) for p in pictures)
    API_PICTURES = tuple(n for n, p in PICTURES.items() if p.in_api)
    OUT_PICTURES = tuple(n for n, p in PICTURES.items() if p.out_file)
    ANALYSIS_PICTURES = tuple(n for n, p in PICTURES.items() if p.tab not in (*OWN_PICTURES, "lesson"))


register(
    Picture(
        "patch-grid", "patches",
        title={"en": "Patch grid: click a patch, or use ← ↑ → ↓", "zh": "Patch 网格：点击一个 patch，或用 ← ↑ → ↓"},
        what_is={"en": "A transformer reads a sequence of tokens, not pixels. The H×W image is cut into P×P patches "
                       "and each patch is mapped to a D-dimensional token by one shared linear map (a convolution "
                       "with kernel = stride = P). The N = HW/P² patch tokens are read row by row, left to right, "
                       "after a learned class token (token 0): N+1 tokens in all. A smaller P gives more, finer "
                       "tokens, and attention's cost grows with (N+1)².",
                 "zh": "Transformer 读的是 token 序列，而不是像素。H×W 的图像被切成 P×P 的 patch，每个 patch "
                       "经同一个线性映射（kernel = stride = P 的卷积）变成一个 D 维 token。N = HW/P² 个 patch token "
                       "按行从左到右排列，排在一个可学习的 class token（token 0）之后：一共 N+1 个 token。P 越小，"
                       "token 越多越细，attention 的开销随 (N+1)² 增长。"},
        draw=lambda a, d, size, tile, w: patches.grid_view(a, d.query if d.marks else None, size, d.lang),
        depends_on=("query",), fit="grid", clickable=True, in_api=True, out_file="patch_grid.png", marks_query=True),
    Picture(
        "query-view", "patches",
        title={"en": "What the clicked patch attends to", "zh": "被点击的 patch 在关注哪里"},
        what_is={"en": "One row of softmax(QKᵀ/√d): the chosen patch's query is compared with every token's key, and "
                       "the softmax turns the scores into weights that sum to 1. Bright patches are those whose "
                       "values this patch mixes in most, at this layer and head. It shows where one patch looks at "
                       "one depth, not what the model finally relies on.",
                 "zh": "softmax(QKᵀ/√d) 的一行：所选 patch 的 query 和每个 token 的 key 比较，softmax 把分数变成和为 "
                       "1 的权重。亮的 patch 是这个 patch 在这一层、这个 head 中混入 value 最多的。它显示的是一个 "
                       "patch 在一个深度上看向哪里，而不是模型最终依赖什么。"},
        draw=lambda a, d, size, tile, w: patches.query_view(a, d.query, d.layer_of(a), d.head, d.opacity, d.cmap,
                                                            size, d.lang),
        depends_on=("query", "layer", "head", "opacity", "cmap"), clickable=True, in_api=True, out_file="query.png"),
    Picture(
        "rollout-view", "attention",
        title={"en": "Attention rollout: where the class token looks", "zh": "Attention rollout：class token 看向哪里"},
        what_is={"en": "Attention rollout (Abnar & Zuidema, 2020) follows attention back through the layers. Each "
                       "layer's attention, heads fused and the residual path added (A + I, rows renormalised), says "
                       "how much each token draws from every other; multiplying these from layer 1 up estimates how "
                       "much of each patch reaches the class token, which makes the prediction. It is an estimate of "
                       "information flow, not a proof of what mattered.",
                 "zh": "Attention rollout（Abnar & Zuidema, 2020）沿着各层把 attention 往回追。每一层的 attention "
                       "融合各 head 并加上 residual 路径（A + I，行重新归一化），表示每个 token 从其他 token "
                       "取了多少；从第 1 层往上相乘，估计每个 patch 有多少到达了做出预测的 class token。"
                       "它是对信息流的估计，不是对什么起了作用的证明。"},
        draw=lambda a, d, size, tile, w: attention.rollout_view(a, d.layer_of(a), d.opacity, d.cmap, size, d.lang),
        depends_on=("layer", "opacity", "cmap"), on_fusion=True, on_discard=True, clickable=True, in_api=True,
        out_file="rollout.png"),
    Picture(
        "head-views", "attention",
        title={"en": "Class token, per head", "zh": "Class token，按 head"},
        what_is={"en": "Each layer has h attention heads working side by side, each with its own query, key and "
                       "value projections. One tile per head shows where the class token looks in that head: heads "
                       "are free to specialise, on the object, the background or neighbouring patches. Each tile is "
                       "coloured from 0 to its own max, so compare where the tiles look, not how strongly.",
                 "zh": "每一层有 h 个并行的 attention head，各自有自己的 query、key 和 value 投影。每个 head 一格，"
                       "显示 class token 在这个 head 中看向哪里：head 可以各有专长，关注物体、背景或相邻的 patch。"
                       "每格从 0 到它自己的最大值着色，所以比较各格看向哪里，而不是看得多强。"},
        draw=lambda a, d, size, tile, w: attention.heads_view(a, d.layer_of(a), d.opacity, d.cmap, tile, d.lang),
        depends_on=("layer", "opacity", "cmap"), fit="sheet", in_api=True, out_file="heads.png"),
    Picture(
        "layer-views", "depth",
        title={"en": "Class token, per layer", "zh": "Class token，按层"},
        what_is={"en": "One tile per encoder layer: where the class token looks at that depth, heads fused. Early "
                       "layers often look broadly or locally; later ones, after the tokens have exchanged "
                       "information, often settle on what the decision rests on. Each tile is coloured from 0 to its "
                       "own max.",
                 "zh": "每个 encoder layer 一格：在这个深度 class token 看向哪里（各 head 融合）。"
                       "浅层往往看得很广或很局部；深层在 token 交换过信息之后，往往落在决策所依据的地方。每格从 0 "
                       "到它自己的最大值着色。"},
        draw=lambda a, d, size, tile, w: attention.layers_view(a, d.opacity, d.cmap, tile, d.lang),
        depends_on=("opacity", "cmap"), fit="sheet", on_fusion=True, in_api=True, out_file="layers.png"),
    Picture(
        "depth-plot", "depth",
        title={"en": "How the prediction forms (early exit)", "zh": "预测是如何形成的（early exit）"},
        what_is={"en": "After every layer the class token is sent through the final LayerNorm and the classification "
                       "head, as if the model stopped there (an early exit). Blue: the probability of the final "
                       "answer at each depth; orange: whichever class would win there. The head was trained on the "
                       "last layer only, so early readings are rough, but they show at what depth the answer forms.",
                 "zh": "每一层之后，把 class token 送进最后的 LayerNorm 和分类头，就好像模型在那里停下（early exit）"
                       "。蓝色：最终答案在每个深度上的概率；橙色：在那一层会胜出的类别。分类头只在最后一层上训练过，"
                       "所以早期的读数很粗略，但能看出答案在哪个深度形成。"},
        draw=lambda a, d, size, tile, w: depth.depth_view(a, size, d.lang),
        fit="plot", out_file="depth.png", encoding="png"),
    Picture(
        "block-view", "inside",
        title={"en": "Inside a block: what attention and the MLP add", "zh": "Block 内部：attention 和 MLP 加了什么"},
        what_is={"en": "Each encoder block is pre-norm: H = X + MSA(LN(X)), then Y = H + MLP(LN(H)). The chart "
                       "gives, per layer, the average length ||·||₂ of the tokens entering the block (the residual "
                       "stream), of what attention adds, of what the MLP adds, and of the tokens leaving it. The "
                       "shape never changes; the content does (11.4.1).",
                 "zh": "每个 encoder block 都是 Pre-LN：H = X + MSA(LN(X))，然后 Y = H + MLP(LN(H))。"
                       "图中逐层给出进入 block 的 token（residual stream）、attention 加上的量、MLP 加上的量以及离开 "
                       "block 的 token 的平均长度 ||·||₂。形状从不改变，改变的是内容（11.4.1）。"},
        draw=lambda a, d, size, tile, w: inside.block_view(a, d.layer_of(a), size, d.lang),
        depends_on=("layer",), fit="plot", encoding="png"),
    Picture(
        "block-code", "lesson",
        title={"en": "The encoder block in code (11.4.4)", "zh": "代码里的 encoder block（11.4.4）"},
        what_is={"en": "The chapter's ViTEncoderLayer.forward, four lines: LayerNorm, attention, add; LayerNorm, "
                       "MLP, add. Under each line, this image's numbers at the chosen layer, as the lesson's text "
                       "gives them: the shape, which never changes, and how long the vectors are that attention and "
                       "the MLP add to the residual stream.",
                 "zh": "本章的 ViTEncoderLayer.forward，四行：LayerNorm、attention、相加；LayerNorm、MLP、相加。"
                       "每行下面是这张图像在所选的一层上的数字，和课程文字中的一样：形状（从不改变），以及 attention "
                       "和 MLP 加到 residual stream 上的向量有多长。"},
        draw=lambda a, d, size, tile, w: inside.block_code_view(a, d.layer_of(a), size, d.lang),
        depends_on=("layer",), download=False, encoding="png"),
    Picture(
        "lens-view", "inside",
        title={"en": "Token content: each patch's own vote (chosen layer)",
               "zh": "Token 内容：每个 patch 自己的投票（所选层）"},
        what_is={"en": "The final norm and the classification head applied to every patch token after this layer, "
                       "not only to the class token: which class each patch would vote for on its own. Early layers "
                       "vote noise; later, patches on the object agree with the final answer.",
                 "zh": "把最后的 norm 和分类头用在这一层之后的每个 patch token 上，而不只是 class token：每个 patch "
                       "单独会投给哪个类别。浅层的投票是噪声；更深处，物体上的 patch 与最终答案一致。"},
        draw=lambda a, d, size, tile, w: inside.lens_view(a, d.layer_of(a), size, lang=d.lang),
        depends_on=("layer",)),
    Picture(
        "token-norms", "inside",
        title={"en": "Token lengths ||Y|| after the chosen layer", "zh": "所选层之后的 token 长度 ||Y||"},
        what_is={"en": "How long each patch token's vector is after this layer. On large trained models a few "
                       "background patches grow very long: they are used as scratch space (Darcet et al. 2024, "
                       "'Vision Transformers Need Registers').",
                 "zh": "这一层之后每个 patch token 的向量有多长。在训练好的大模型上，少数背景 patch 会变得很长："
                       "它们被当作草稿空间使用（Darcet et al. 2024, 'Vision Transformers Need Registers'）。"},
        draw=lambda a, d, size, tile, w: inside.token_norm_view(a, d.layer_of(a), d.opacity, d.cmap, size, d.lang),
        depends_on=("layer", "opacity", "cmap")),
    Picture(
        "matrix-view", "inside",
        title={"en": "The whole matrix of the chosen layer and head, and under a causal mask",
               "zh": "所选层和 head 的整个矩阵，以及加上 causal mask 之后"},
        what_is={"en": "The whole softmax(QKᵀ/√d) of one head: row i is where token i looks, column j who looks at "
                       "token j; row 0 is the class token. Beside it, the same matrix under a causal mask, as a "
                       "decoder would see it: each token only sees those before it. The ViT encoder has no such mask "
                       "(11.4.2).",
                 "zh": "一个 head 的整个 softmax(QKᵀ/√d)：第 i 行是 token i 看向哪里，第 j 列是谁在看 token j；第 0 "
                       "行是 class token。旁边是加上 causal mask 的同一个矩阵，即 decoder 看到的样子：每个 token "
                       "只能看到它之前的 token。ViT encoder 没有这样的 mask（11.4.2）。"},
        draw=lambda a, d, size, tile, w: inside.matrix_view(a, d.layer_of(a), d.head, size, d.lang),
        depends_on=("layer", "head"), encoding="png"),
    Picture(
        "filters-view", "figure7",
        title={"en": "Patch-embedding filters: principal components", "zh": "Patch embedding 的滤波器：主成分"},
        what_is={"en": "The first principal components of the patch-embedding kernels (the D filters of the patch "
                       "convolution), as in the ViT paper's Figure 7 (left). They show what the first layer looks "
                       "for in a patch.",
                 "zh": "Patch embedding 卷积核（patch 卷积的 D 个滤波器）的前几个主成分，和 ViT 论文的 Figure 7（左）"
                       "一样。它们显示第一层在一个 patch 中寻找什么。"},
        draw=lambda a, d, size, tile, w: figure7.filters_view(_weights_needed(w, "filters-view")("filters"), size,
                                                              lang=d.lang),
        encoding="png"),
    Picture(
        "position-view", "figure7",
        title={"en": "Position-embedding similarity", "zh": "Position embedding 的相似度"},
        what_is={"en": "Cosine similarity between the learned position embeddings: one small map per patch position, "
                       "bright where another position's embedding is similar. Trained models learn rows and columns "
                       "(ViT paper, Figure 7, centre); after a patch-size change these are the resampled embeddings.",
                 "zh": "学到的 position embedding 之间的余弦相似度：每个 patch 位置一张小图，另一个位置的 embedding "
                       "越相似越亮。训练好的模型会学到行和列（ViT 论文 Figure 7，中）；改变 patch size 之后，"
                       "这些是重采样后的 embedding。"},
        draw=lambda a, d, size, tile, w: figure7.position_view(_weights_needed(w, "position-view")("similarity"),
                                                               a.grid, size, lang=d.lang),
        encoding="png"),
    Picture(
        "distance-view", "figure7",
        title={"en": "Mean attention distance per head", "zh": "每个 head 的平均 attention 距离"},
        what_is={"en": "For each head and layer, how far (in pixels) the patches look on average: the "
                       "attention-weighted distance between a patch and the patches it attends to (ViT paper, Figure "
                       "7, right). Some heads look far from the first layer; others stay local until late.",
                 "zh": "对每个 head 和每一层，patch 平均看多远（以像素计）：一个 patch 与它所关注的 patch 之间按 "
                       "attention 加权的距离（ViT 论文 Figure 7，右）。有些 head 从第一层就看得很远；"
                       "另一些直到很深才不再局部。"},
        draw=lambda a, d, size, tile, w: figure7.distance_view(a, size, d.lang),
        fit="plot", encoding="png"),
    Picture(
        "why-map", "why",
        title={"en": "Why this class? The map for the chosen class", "zh": "为什么是这个类别？所选类别的热力图"},
        what_is={"en": "An explanation map answers \"which patches made the model say this class rather than that "
                       "one?\". AttnLRP (Achtibat et al., 2024), the default, passes the score back through every "
                       "layer by rules made for attention; asked \"why A rather than B?\" it lights what sets A "
                       "apart, so on a drawing of two shapes it points at the one asked. Occlusion takes each 2×2 "
                       "block of patches away and measures the fall: what the model does, not a reading of its "
                       "insides. Rollout and the last layer's attention follow attention only, the same map for "
                       "every class; gradient-weighted rollout and Grad-CAM weigh attention or features by the "
                       "class's gradient, and on two objects often light both. A map is a claim, not a fact: test "
                       "it.",
                 "zh": "解释图回答的是“哪些 patch 让模型说出这个类别，而不是那个？”。默认的 AttnLRP（Achtibat et "
                       "al., 2024）按为 attention 设计的规则把分数一层层传回去；问“为什么是 A 而不是 B？”时，"
                       "它照亮让 A 与众不同的地方，所以在有两个形状的图上会指向所问的那个。遮挡（occlusion）"
                       "依次拿走每个 2×2 的 patch 块并测量下降：这是模型的行为，而不是对其内部的解读。Rollout "
                       "和最后一层的 attention 只跟随 attention，每个类别都是同一张图；gradient-weighted rollout 和 "
                       "Grad-CAM 按类别的梯度给 attention 或特征加权，有两个物体时常常两个都照亮。解释图是一个主张，"
                       "不是事实：请测试它。"},
        draw=lambda e, d, size, tile, w: why.explanation_view(e, d.opacity, d.cmap, size, d.lang),
        depends_on=("opacity", "cmap"), download=False),
    Picture(
        "why-curves", "why",
        title={"en": "Is it right? Deletion and insertion", "zh": "它对吗？Deletion 和 insertion"},
        what_is={"en": "The test (deletion and insertion, Petsiuk et al., 2018): grey out the patches the map ranks "
                       "first, 10% at a time, and watch the class's probability. If the map is right it falls fast "
                       "(deletion: lower area is better) and, starting from a grey image and putting those patches "
                       "back first, it rises fast (insertion: higher area is better). The dashed lines do the same "
                       "in a random order: a map worth believing beats them.",
                 "zh": "测试（deletion 和 insertion，Petsiuk et al., 2018）：把热力图排在最前的 patch 每次涂灰 10%，"
                       "观察该类别的概率。如果热力图是对的，概率会很快下降（deletion：面积越小越好）；"
                       "从一张灰色图像开始先放回这些 patch，概率会很快上升（insertion：面积越大越好）。"
                       "虚线按随机顺序做同样的事：值得相信的热力图会胜过它们。"},
        draw=lambda pair, d, size, tile, w: why.curves_view(*pair, size, d.lang),
        fit="plot", download=False, encoding="png"),
    Picture(
        "whatif-map", "whatif",
        title={"en": "What if? Click patches to take them away", "zh": "如果……？点击 patch 把它们拿走"},
        what_is={"en": "A ViT can run on a subset of its tokens: the removed patches' tokens are simply left out, "
                       "and every kept patch keeps its own position embedding (the idea behind MAE, He et al. 2022); "
                       "a CNN would need grey squares. The prediction beside it is the model's on what is left. "
                       "Colours: attention rollout over the kept patches. Tick the grey comparison to see the "
                       "deletion test's way: the same patches greyed, every token kept; where the two disagree, the "
                       "model reacts to the grey, not to the missing content.",
                 "zh": "ViT 可以只在一部分 token 上运行：被拿走的 patch 的 token 直接省略，每个保留的 patch "
                       "保留自己的 position embedding（MAE 背后的想法，He et al. 2022）；CNN 则需要灰色方块。"
                       "旁边的预测是模型在剩下部分上的预测。颜色：保留的 patch 上的 attention rollout。勾选灰色对比，"
                       "可以看 deletion 测试的做法：同样的 patch 涂灰，保留所有 token；两者不一致之处，"
                       "模型是在对灰色作出反应，而不是对缺失的内容。"},
        draw=lambda w, d, size, tile, wts: whatif.intervention_view(w, d.opacity, d.cmap, size, d.lang),
        depends_on=("opacity", "cmap"), clickable=True, download=False),
    Picture(
        "whatif-heads", "whatif",
        title={"en": "The heads: click one to switch it off", "zh": "各个 head：点击一个把它关闭"},
        what_is={"en": "Every layer's h heads, one cell each (layers down, heads across). A head switched off has "
                       "its output, softmax(QKᵀ/√d)V, replaced by zero (or by its mean over the tokens) before the "
                       "output projection mixes the heads. \"Head importance\" switches each head off alone and "
                       "measures how much the predicted class's probability drops: bright heads are the ones the "
                       "answer needs. Many heads can go with little change (Michel et al. 2019, \"Are Sixteen Heads "
                       "Really Better than One?\").",
                 "zh": "每层的 h 个 head，每个一格（纵向是层，横向是 head）。关闭的 head 的输出 softmax(QKᵀ/√d)V "
                       "在输出投影混合各 head 之前被替换为零（或它在各 token 上的均值）。“head "
                       "重要性”逐个单独关闭每个 head，测量预测类别的概率下降多少：亮的 head 是答案需要的。很多 head "
                       "去掉后变化很小（Michel et al. 2019, \"Are Sixteen Heads Really Better than One?\"）。"},
        draw=lambda g, d, size, tile, wts: whatif.head_grid_view(g, d.cmap, size, d.lang),
        depends_on=("cmap",), fit="plot", clickable=True, download=False, encoding="png"),
)


def on_tab(tab: str) -> tuple[str, ...]:
    """The analysis pictures a redraw draws for the tab on screen."""
    if tab not in TABS:
        raise InputError(f"tab must be one of {', '.join(TABS)}, got {validate.show(tab)}")
    return tuple(n for n in ANALYSIS_PICTURES if PICTURES[n].tab == tab)


def draw(source, name: str, display: Display = Display(), weights: Weights | None = None):
    """One picture (a ``View``) of an analysis, or of an explanation for the Why tab's, as ``display`` says."""
    picture = PICTURES.get(name)
    if picture is None:
        raise InputError(f"picture must be one of {', '.join(PICTURES)}, got {validate.show(name)}")
    with language(display.lang):  # the words drawn into it, in its language's typeface
        return as_shown(_fitted(picture, source, display, weights), display)


def as_shown(view, display: Display):
    """A view at the size the page shows it: enlarged in projector mode on a screen, else as drawn."""
    return enlarged(view) if display.projector and display.frame is not None else view


def enlarged(view, k: float = PROJECTOR_ENLARGE):
    """A view enlarged ``k`` times, its cells with it."""
    image = view.image
    size = (round(image.width * k), round(image.height * k))
    cells = view.cells.scaled(k) if view.cells is not None else None
    return replace(view, image=image.resize(size, Image.Resampling.BICUBIC), cells=cells)


def _fitted(picture: Picture, source, display: Display, weights: Weights | None):
    size, tile = frame_sizes(picture, source, display)
    view = picture.draw(source, display, size, tile, weights)
    target = display.target()
    if target is None or picture.clickable:  # a clickable picture is drawn to fit at once
        return view
    for _ in range(2):  # stacked parts (a legend under a map, a diagram over a chart) keep their own heights
        over_w, over_h = view.image.width - target[0], view.image.height - target[1]
        if max(over_w / target[0], over_h / target[1]) <= OVERFLOW or picture.fit == "sheet":
            break
        if picture.fit == "plot":
            size = (max(MIN_FRAME, size[0] - max(0, over_w)), max(MIN_FRAME, size[1] - max(0, over_h)))
        else:
            size = max(MIN_FRAME, size - max(over_w, over_h))
        view = picture.draw(source, display, size, tile, weights)
    return view


def frame_sizes(picture: Picture, source, display: Display) -> tuple:
    """(size, tile) that fills the display's frame, or the fixed sizes without one: pure, so a click maps alike."""
    size, tile = display.sizes()
    target = display.target()
    if target is None:
        return (base.DEPTH_PLOT_SIZE if picture.fit == "plot" else size), tile
    w, h = target
    if picture.fit == "plot":
        return (w, h), tile
    if picture.fit == "sheet":
        return size, (w, h)
    if picture.fit == "grid":
        return base.grid_size_for(source, w, h), tile
    side = min(w, h - COLORBAR_RESERVE)  # a colour bar under it, on two lines when narrow
    if min(w, h - COLORBAR_ONE_LINE) >= COLORBAR_WIDE:
        side = min(w, h - COLORBAR_ONE_LINE)
    return max(MIN_FRAME, side), tile


JPEG_QUALITY = 90  # pictures drawn on the photo: no chroma subsampling, so text and outlines on them stay crisp


def encode(image, encoding: str = "png", out=None) -> None:
    """Write a picture in its :attr:`Picture.encoding` to ``out`` (a path or a file); PNG at zlib level 1."""
    if encoding == "jpeg":
        image.convert("RGB").save(out, format="JPEG", quality=JPEG_QUALITY, subsampling=0)
    else:
        image.save(out, format="PNG", compress_level=1)


def variant_key(key: str, name: str, head_fusion: str, discard_ratio: float) -> str:
    """The analysis's key plus the options ``name`` is drawn from: a fusion or discard change redraws only those."""
    picture = PICTURES[name]
    fusion = f"|{head_fusion}" if picture.on_fusion else ""
    discard = f"|{discard_ratio}" if picture.on_discard else ""
    return f"{key}{fusion}{discard}"


def signature(key: str, name: str, display: Display, cell=None) -> tuple:
    """What a picture depends on: it is redrawn only when this changes (``cell``: the query's patch, not its point)."""
    values = {"query": cell if cell is not None else display.query, "layer": display.layer, "head": display.head,
              "opacity": display.opacity, "cmap": display.cmap}
    picture = PICTURES[name]
    unmarked = picture.marks_query and not display.marks  # the query is not drawn in it
    return (key, *(values[f] for f in picture.depends_on if not (unmarked and f == "query")), display.projector,
            display.frame, display.lang)
