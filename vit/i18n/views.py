"""The pictures' words in both languages (:mod:`vit.views`): the stage table, captions, legends, drawn text."""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    # the stage table (vit.views.patches)
    "stage-headers": {"en": "stage|module|notation|shape|params", "zh": "阶段|模块|记号|形状|参数"},
    "stage-note": {
        "en": "Layers count from 1, modules from 0: layer 1 is `encoder.layers.0`. Each parameter is counted once, "
              "in the first row whose module holds it: a layer's output row adds only what its attention and MLP "
              "rows did not count (its two LayerNorms), and \"(counted above)\" marks a module already counted; "
              "the column sums to the total.",
        "zh": "层从 1 开始数，模块从 0 开始数：第 1 层是 `encoder.layers.0`。每个参数只计一次，计在第一个包含它的模块"
              "所在的行：一层的输出行只加上它的 attention 行和 MLP 行没有计入的部分（它的两个 LayerNorm），"
              "“（上面已计）”表示模块已经计过；这一列的和就是总数。"},
    "stage-one-image": {"en": "B = 1 image.", "zh": "B = 1 张图像。"},
    "counted-above": {"en": "(counted above)", "zh": "（上面已计）"},
    "stage-image": {"en": "image", "zh": "图像"},
    "stage-patch-conv": {"en": "patch conv", "zh": "patch 卷积"},
    "stage-patch-tokens": {"en": "patch tokens", "zh": "patch token"},
    "stage-with-class-token": {"en": "with class token", "zh": "加上 class token"},
    "stage-with-prefix": {"en": "with prefix tokens ({names})", "zh": "加上 prefix token（{names}）"},
    "stage-with-position": {"en": "with position", "zh": "加上 position embedding"},
    "stage-attention": {"en": "layer {n} attention weights", "zh": "第 {n} 层 attention 权重"},
    "stage-mlp": {"en": "layer {n} MLP hidden", "zh": "第 {n} 层 MLP 隐藏层"},
    "stage-output": {"en": "layer {n} output", "zh": "第 {n} 层输出"},
    "stage-folded": {"en": "layers {first}–{last} (same shapes, ×{count})",
                     "zh": "第 {first}–{last} 层（形状相同，×{count}）"},
    "stage-final-norm": {"en": "final norm", "zh": "最后的 norm"},
    "stage-class-token": {"en": "class token", "zh": "class token"},
    "stage-logits": {"en": "logits", "zh": "logits"},
    "stage-total": {"en": "total", "zh": "总计"},
    # shared by the views (vit.views.base)
    "heat-label": {"en": "brighter = more attention", "zh": "越亮 = attention 越多"},
    "heat-legend": {"en": "{label}; colours scaled from this picture's min ({lo}) to its max ({hi})",
                    "zh": "{label}；颜色按这张图的最小值（{lo}）到最大值（{hi}）缩放"},
    "class-token-share": {"en": "; the remaining {share:.0%} goes to the class token itself (not drawn)",
                          "zh": "；其余 {share:.0%} 给了 class token 自己（没有画出）"},
    "fit-cropped": {"en": "The model sees only the centre square of this {w}×{h} image, about {share:.0%} of it: "
                          "the rest is cropped away.",
                    "zh": "模型只看到这张 {w}×{h} 图像中央的正方形，约占 {share:.0%}：其余部分被裁掉了。"},
    "fit-enlarged": {"en": "This {w}×{h} image was enlarged {times}× to {side}×{side}: the model sees blurred "
                           "blocks, not detail.",
                     "zh": "这张 {w}×{h} 图像被放大 {times}× 到 {side}×{side}：模型看到的是模糊的色块，而不是细节。"},
    "no-classifier-card": {
        "en": "This model has no classifier: it is a backbone (DINOv2's are), trained to make tokens, not to name "
              "classes. Its attention, rollout, tokens and Figure 7 are all here; predictions, early exits, token "
              "content and \"Why this class?\" need a head.",
        "zh": "这个模型没有分类头：它是一个 backbone（DINOv2 的就是），训练来产生 token，而不是给类别命名。它的 "
              "attention、rollout、token 和 Figure 7 都在这里；预测、early exit、token 内容和“为什么是这个类别？”"
              "需要分类头。"},
    "no-classifier-title": {"en": "{title}: no classifier", "zh": "{title}：没有分类头"},
    "every-row": {"en": "every row", "zh": "每一行"},
    "every-kth-row": {"en": "every {k}{suffix} row", "zh": "每 {k} 行"},
    "every-column": {"en": "every column", "zh": "每一列"},
    "every-kth-column": {"en": "every {k}{suffix} column", "zh": "每 {k} 列"},
    # the patch grid and the query (vit.views.patches)
    "prefix-class": {"en": "plus the class token: N+1 = {T}", "zh": "再加上 class token：N+1 = {T}"},
    "prefix-tokens": {"en": "after {n} prefix tokens ({names}: tokens 0–{last}): N+{n} = {T}",
                      "zh": "排在 {n} 个 prefix token（{names}：token 0–{last}）之后：N+{n} = {T}"},
    "grid-numbers": {"en": "Numbers are token indices, row by row (row-major): patch (r, c) is token {p} + r·{cols} "
                           "+ c.",
                     "zh": "数字是 token 的序号，按行排列（row-major）：patch (r, c) 是 token {p} + r·{cols} + c。"},
    "grid-margins": {"en": "Left margin: the token of each row's first patch ({rows}); top: the column c ({columns}), "
                           "so patch (r, c) is token (left number) + c = {p} + r·{cols} + c. The arrows show the "
                           "reading order: row by row, left to right.",
                     "zh": "左边：每行第一个 patch 的 token（{rows}）；上边：列号 c（{columns}），所以 patch (r, c) 是 "
                           "token（左边的数字）+ c = {p} + r·{cols} + c。箭头表示阅读顺序：逐行，从左到右。"},
    "grid-caption": {"en": "**What the model sees:** {h}×{w} pixels cut into a **{rows}×{cols} grid** of {P}×{P} "
                           "patches → **N = {N} patch tokens**, {prefix}. {numbers}",
                     "zh": "**模型看到的：** {h}×{w} 像素被切成 **{rows}×{cols} 网格**，每个 patch {P}×{P} → "
                           "**N = {N} 个 patch token**，{prefix}。{numbers}"},
    "grid-outlined": {"en": "Outlined: patch (row {r}, col {c}) = token {token}.",
                      "zh": "框出的是：patch（第 {r} 行，第 {c} 列）= token {token}。"},
    "grid-click": {"en": "**Click a patch** to ask what it attends to.", "zh": "**点击一个 patch**，看它关注哪里。"},
    "grid-title": {"en": "Patch grid, {rows}x{cols} patches of {P} px",
                   "zh": "Patch 网格，{rows}x{cols} 个 {P} 像素的 patch"},
    "query-caption": {"en": "**Patch (row {r}, col {c}) = token {token} as the query:** row {token} of softmax(QKᵀ/√d) "
                            "at layer {layer}, head {head} — where this patch looks (outlined){share}.",
                      "zh": "**以 patch（第 {r} 行，第 {c} 列）= token {token} 作为 query：** "
                            "第 {layer} 层、head {head} 中 softmax(QKᵀ/√d) 的第 {token} 行 —— "
                            "这个 patch（框出）看向哪里{share}。"},
    "query-title": {"en": "Token {token} as query, layer {layer}, head {head}",
                    "zh": "以 token {token} 作为 query，第 {layer} 层，head {head}"},
    # the attention views (vit.views.attention)
    "rollout-discard": {"en": ", weakest {ratio:.0%} of each row's links dropped",
                        "zh": "，每行最弱的 {ratio:.0%} 的连接被丢弃"},
    "rollout-caption": {"en": "**Attention rollout, layers 1–{layer}:** how much of each patch flows into the class "
                              "token through attention and the residual path: per layer rownorm(A + I), heads fused by "
                              "**{fusion}**{discard}, multiplied from layer 1 to {layer}{share}.",
                        "zh": "**Attention rollout，第 1–{layer} 层：** 每个 patch 有多少经过 attention 和 residual "
                              "路径流入 class token：每层 rownorm(A + I)，head 用 **{fusion}** 融合{discard}，从第 1 层"
                              "乘到第 {layer} 层{share}。"},
    "rollout-title": {"en": "Attention rollout, layers 1-{layer}", "zh": "Attention rollout，第 1-{layer} 层"},
    "tile-max": {"en": "each tile's max", "zh": "每格的最大值"},
    "tiles-legend": {"en": "{label}; each tile coloured from 0 to its own max (compare where tiles look, not how "
                           "strongly)",
                     "zh": "{label}；每格从 0 到它自己的最大值着色（比较各格看向哪里，而不是看得多强）"},
    "tile-head": {"en": "head {n}", "zh": "head {n}"},
    "tile-layer": {"en": "layer {n}", "zh": "第 {n} 层"},
    "heads-caption": {"en": "**Layer {layer}, one picture per head:** the class token's row of softmax(QKᵀ/√d) in "
                            "each of the h = {h} heads; each head is free to look somewhere else.",
                      "zh": "**第 {layer} 层，每个 head 一张图：** class token 在 h = {h} 个 head 中各自的 "
                            "softmax(QKᵀ/√d) 那一行；每个 head 都可以看向别处。"},
    "heads-title": {"en": "Heads of layer {layer}", "zh": "第 {layer} 层的各个 head"},
    "layers-caption": {"en": "**The class token in every layer** (heads fused by {fusion}), layer 1 to L = {L}: how "
                             "its attention moves as the tokens exchange information.",
                       "zh": "**每一层的 class token**（head 用 {fusion} 融合），第 1 层到 L = {L}：随着 token 之间交换"
                             "信息，它的 attention 如何移动。"},
    "layers-title": {"en": "Class token attention, layers 1-{L}", "zh": "Class token 的 attention，第 1-{L} 层"},
    # the early exit (vit.views.depth, vit.views.plots)
    "depth-caption": {"en": "**How the prediction forms across depth:** after each layer 1 to L = {L}, the class "
                            "token goes through the final norm and the head (an early exit). Blue: the probability of "
                            "the final answer, **{final}**; orange: the top-1 class at that layer, named where it "
                            "changes.",
                      "zh": "**预测如何随深度形成：** 在第 1 层到 L = {L} 的每一层之后，class token 经过最后的 norm "
                            "和分类头（early exit）。蓝色：最终答案 **{final}** 的概率；橙色：那一层的 top-1 类别，"
                            "在它改变的地方标出名字。"},
    "depth-legend": {"en": "blue circles: probability of the final class after each layer; orange squares: the top-1 "
                           "at that layer",
                     "zh": "蓝色圆点：每一层之后最终类别的概率；橙色方块：那一层的 top-1"},
    "depth-title": {"en": "Early exit, layers 1-{L}", "zh": "Early exit，第 1-{L} 层"},
    "early-exit": {"en": "Early exit", "zh": "Early exit"},
    "plot-top1": {"en": "top-1 at this layer", "zh": "这一层的 top-1"},
    "plot-final": {"en": "final class: ", "zh": "最终类别："},
    "residual-path": {"en": "residual path", "zh": "residual 路径"},
    "plot-probability": {"en": "probability", "zh": "概率"},
    "plot-layer": {"en": "layer (early exit: final norm + head on its class token)",
                   "zh": "层（early exit：最后的 norm + 分类头作用在 class token 上）"},
    "plot-layer-short": {"en": "layer (early exit)", "zh": "层（early exit）"},  # a plot too narrow for the above
    # the text alternatives' shared words (vit.views.describe)
    "alt-focus": {"en": "{share:.0%} of it on {k} of {n} patches",
                  "zh": "其中 {share:.0%} 落在 {n} 个 patch 中的 {k} 个上"},
    "alt-flat": {"en": "it is 0 everywhere", "zh": "它处处为 0"},
    "alt-more": {"en": "and {n} more", "zh": "另有 {n} 个"},
    "alt-pair": {"en": "layer {layer} head {head}", "zh": "第 {layer} 层 head {head}"},
    "alt-no-classifier": {"en": "{title}: this model has no classifier (it is a backbone), so there is nothing to "
                                "read here.",
                          "zh": "{title}：这个模型没有分类头（它是一个 backbone），这里没有可读的内容。"},
    # text alternatives: the patch grid and the attention (vit.views.patches, vit.views.attention)
    "alt-prefix-one": {"en": "the class token (token 0)", "zh": "class token（即 token 0）"},
    "alt-prefix-many": {"en": "{n} prefix tokens ({names}: tokens 0–{last})",
                        "zh": "{n} 个 prefix token（{names}：token 0–{last}）"},
    "alt-outlined": {"en": "; outlined: patch (row {r}, col {c}) = token {token}",
                     "zh": "；框出的是 patch（第 {r} 行，第 {c} 列）= token {token}"},
    "alt-grid": {"en": "The image cut into {rows}×{cols} patches of {P}×{P} px, numbered row by row after {prefix}: "
                       "token {first} at the top left to token {last} at the bottom right{outlined}.",
                 "zh": "图像被切成 {rows}×{cols} 个 {P}×{P} 像素的 patch，在 {prefix}之后逐行编号：左上角是 token "
                       "{first}，右下角是 token {last}{outlined}。"},
    "alt-query": {"en": "Where token {token} (patch row {r}, col {c}) looks, layer {layer} of {L}, head {head} of {h}: "
                        "brightest patches {top}; {focus}.",
                  "zh": "token {token}（patch 第 {r} 行，第 {c} 列）看向哪里，第 {layer} 层（共 {L} 层）、head {head}"
                        "（共 {h} 个）：最亮的 patch 是 {top}；{focus}。"},
    "alt-rollout": {"en": "Attention rollout, layer {layer} of {L}: brightest patches {top}; {focus}.",
                    "zh": "Attention rollout，第 {layer} 层（共 {L} 层）：最亮的 patch 是 {top}；{focus}。"},
    "alt-heads": {"en": "The class token in the {h} heads of layer {layer} of {L}, one tile each; brightest patch of "
                        "heads 1–{h}: {top}; the most focused, head {best}: {focus}.",
                  "zh": "第 {layer} 层（共 {L} 层）{h} 个 head 中的 class token，每个 head 一格；head 1–{h} 最亮的 "
                        "patch：{top}；最集中的是 head {best}：{focus}。"},
    "alt-layers": {"en": "The class token at each layer, heads fused by {fusion}; brightest patch at layers 1–{L}: "
                         "{top}; half of its attention on the patches lies on {first} of {n} patches at layer 1, on "
                         "{last} at layer {L}.",
                   "zh": "每一层的 class token（head 用 {fusion} 融合）；第 1–{L} 层最亮的 patch：{top}；第 1 层 patch "
                         "上的 attention 有一半落在 {n} 个 patch 中的 {first} 个上，第 {L} 层落在 {last} 个上。"},
    "alt-layer-item": {"en": "at layer {layer}: {item}", "zh": "第 {layer} 层 {item}"},
    # text alternatives: the early exit (vit.views.depth)
    "alt-depth": {"en": "Early exit after layers 1–{L}: p(“{final}”) {probs}; the top-1 is “{final}” from layer "
                        "{since} on{before}.",
                  "zh": "第 1–{L} 层之后的 early exit：p(“{final}”) 依次为 {probs}；从第 {since} 层起 top-1 是"
                        "“{final}”{before}。"},
    "alt-depth-before": {"en": " (layer {layer}: “{label}”)", "zh": "（第 {layer} 层是“{label}”）"},
}
