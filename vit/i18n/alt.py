"""The pictures' text alternatives in both languages (:mod:`vit.views.describe`): what each picture shows, written
from its data, for a screen reader (the page's ``<img alt>``)."""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    # shared
    "alt-focus": {"en": "{share:.0%} of it on {k} of {n} patches",
                  "zh": "其中 {share:.0%} 落在 {n} 个 patch 中的 {k} 个上"},
    "alt-flat": {"en": "it is 0 everywhere", "zh": "它处处为 0"},
    "alt-more": {"en": "and {n} more", "zh": "另有 {n} 个"},
    "alt-pair": {"en": "layer {layer} head {head}", "zh": "第 {layer} 层 head {head}"},
    "alt-no-classifier": {"en": "{title}: this model has no classifier (it is a backbone), so there is nothing to "
                                "read here.",
                          "zh": "{title}：这个模型没有分类头（它是一个 backbone），这里没有可读的内容。"},
    # the patch grid and the attention (vit.views.patches, vit.views.attention)
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
    # the early exit (vit.views.depth)
    "alt-depth": {"en": "Early exit after layers 1–{L}: p(“{final}”) {probs}; the top-1 is “{final}” from layer "
                        "{since} on{before}.",
                  "zh": "第 1–{L} 层之后的 early exit：p(“{final}”) 依次为 {probs}；从第 {since} 层起 top-1 是"
                        "“{final}”{before}。"},
    "alt-depth-before": {"en": " (layer {layer}: “{label}”)", "zh": "（第 {layer} 层是“{label}”）"},
    # the Inside tab (vit.views.inside)
    "alt-block": {"en": "Block {layer} of {L}: tokens enter with mean length {stream:.1f}, attention adds "
                        "{attention:.1f}, the MLP adds {mlp:.1f}, they leave with {output:.1f}; mean length leaving "
                        "layers 1–{L}: {outputs}.",
                  "zh": "第 {layer} 个 block（共 {L} 个）：token 进入时平均长度 {stream:.1f}，attention 加上 "
                        "{attention:.1f}，MLP 加上 {mlp:.1f}，离开时 {output:.1f}；第 1–{L} 层输出的平均长度："
                        "{outputs}。"},
    "alt-code": {"en": "The encoder block's forward in code with layer {layer} of {L}'s numbers: shape (1, {T}, {D}) "
                       "from the first line to the last, {h} heads of d = {d}, MLP hidden {hidden}; mean token length "
                       "{stream:.1f} in, attention adds {attention:.1f}, the MLP adds {mlp:.1f}, {output:.1f} out.",
                 "zh": "代码里的 encoder block forward，附第 {layer} 层（共 {L} 层）的数字：从第一行到最后一行形状都是 "
                       "(1, {T}, {D})，{h} 个 head，每个 d = {d}，MLP 隐藏层 {hidden}；token 平均长度进入时 "
                       "{stream:.1f}，attention 加上 {attention:.1f}，MLP 加上 {mlp:.1f}，输出 {output:.1f}。"},
    "alt-votes": {"en": "{count} patches vote “{label}”", "zh": "{count} 个 patch 投给“{label}”"},
    "alt-votes-other": {"en": "{count} other classes", "zh": "{count} 个投给其他类别"},
    "alt-lens": {"en": "Each patch's own vote at layer {layer} of {L}: {votes}; {agree} of {n} agree with the final "
                       "answer “{label}” (mean probability {mean:.2f}).",
                 "zh": "第 {layer} 层（共 {L} 层）每个 patch 自己的投票：{votes}；{n} 个中有 {agree} 个与最终答案"
                       "“{label}”一致（平均概率 {mean:.2f}）。"},
    "alt-norms": {"en": "Patch token lengths after layer {layer} of {L}: from {lo:.1f} to {hi:.1f} (median "
                        "{median:.1f}), longest {top}{over}; {prefix}.",
                  "zh": "第 {layer} 层（共 {L} 层）之后 patch token 的长度：从 {lo:.1f} 到 {hi:.1f}（中位数 "
                        "{median:.1f}），最长的是 {top}{over}；{prefix}。"},
    "alt-norms-over": {"en": "; {k} over twice the median", "zh": "；{k} 个超过中位数的两倍"},
    "alt-matrix": {"en": "The whole {T}×{T} attention matrix of layer {layer} of {L}, head {head} of {h}, and beside "
                         "it the same under a causal mask: largest weight {top} (token {i} on token {j}); token {col} "
                         "draws the most, {colmean} of a row on average; a token's weight on itself averages {diag}.",
                   "zh": "第 {layer} 层（共 {L} 层）、head {head}（共 {h} 个）的整个 {T}×{T} attention 矩阵，"
                         "旁边是加上 causal mask 的同一个矩阵：最大的权重 {top}（token {i} 看 token {j}）；"
                         "token {col} 得到的最多，平均每行 {colmean}；token 给自己的权重平均为 {diag}。"},
    # Figure 7 (vit.views.figure7)
    "alt-filters": {"en": "The first {k} principal components of the patch embedding's {P}×{P}×3 kernels, {rows} rows "
                          "of {columns}, strongest first; neighbouring pixels correlate {smooth:.2f} on average (1: "
                          "smooth, 0: noise).",
                    "zh": "patch embedding 的 {P}×{P}×3 卷积核的前 {k} 个主成分，{rows} 行、每行 {columns} 个，"
                          "最强的在前；相邻像素的平均相关系数为 {smooth:.2f}（1：平滑，0：噪声）。"},
    "alt-position": {"en": "Position embedding similarity, {shown}×{columns} tiles for the {rows}×{cols} positions, "
                           "colours from {lo} to {hi} {numbers}.",
                     "zh": "Position embedding 相似度，{rows}×{cols} 个位置画成 {shown}×{columns} 格，颜色从 {lo} "
                           "到 {hi}{numbers}。"},
    "alt-distance": {"en": "Mean attention distance of the {h} heads in each of {L} layers: layer 1 from {lo1:.0f} to "
                           "{hi1:.0f} px, layer {L} from {loL:.0f} to {hiL:.0f} px; farthest: layer {fl}, head {fh}, "
                           "{far:.0f} px; nearest: layer {nl}, head {nh}, {near:.0f} px.",
                     "zh": "{L} 层中每层 {h} 个 head 的平均 attention 距离：第 1 层在 {lo1:.0f}–{hi1:.0f} 像素之间，"
                           "第 {L} 层在 {loL:.0f}–{hiL:.0f} 像素之间；最远的是第 {fl} 层 head {fh}，{far:.0f} 像素；"
                           "最近的是第 {nl} 层 head {nh}，{near:.0f} 像素。"},
    # Why this class? (vit.views.why)
    "alt-why": {"en": "{method}{where}, {question} ({label} {prob:.1%}): brightest patches {top}; {focus}.",
                "zh": "{method}{where}，{question}（{label} {prob:.1%}）：最亮的 patch 是 {top}；{focus}。"},
    "alt-why-block": {"en": " at block {layer}", "zh": "（第 {layer} 个 block）"},
    "alt-curve": {"en": "{mode}: p from {start} to {end} in the map's order, AUC {ours} against {rand} in a random "
                        "order ({beats})",
                  "zh": "{mode}：按热力图的顺序 p 从 {start} 到 {end}，AUC {ours}，随机顺序为 {rand}（{beats}）"},
    "alt-better": {"en": "better than random", "zh": "好于随机"},
    "alt-not-better": {"en": "no better than random", "zh": "不好于随机"},
    "alt-curves": {"en": "Testing the {method} map for “{label}”: {parts}.",
                   "zh": "检验 {method} 对“{label}”的热力图：{parts}。"},
    # What if? (vit.views.whatif)
    "alt-removed": {"en": "{n} of {total} patches removed (tokens {tokens})",
                    "zh": "{total} 个 patch 中去掉了 {n} 个（token {tokens}）"},
    "alt-and": {"en": " and ", "zh": "，并"},
    "alt-off": {"en": "{n} heads off ({pairs})", "zh": "关闭了 {n} 个 head（{pairs}）"},
    "alt-whatif": {"en": "What if: {change}. p(“{label}”) from {before} to {after}; the model now says “{now}” ({p}); "
                         "rollout over the {kept} kept patches is brightest at {top}.",
                   "zh": "如果：{change}。“{label}”的概率从 {before} 变为 {after}；模型现在说“{now}”（{p}）；"
                         "保留的 {kept} 个 patch 上的 rollout 最亮的是 {top}。"},
    "alt-whatif-nothing": {"en": "Nothing taken away: “{label}” at {before}; rollout is brightest at {top}.",
                           "zh": "还没有拿走任何东西：“{label}”为 {before}；rollout 最亮的是 {top}。"},
    "alt-grid-heads": {"en": "The {L}×{h} heads, layers down and heads across; {off}.",
                       "zh": "{L}×{h} 个 head，纵向是层，横向是 head；{off}。"},
    "alt-none-off": {"en": "none switched off", "zh": "没有关闭任何 head"},
    "alt-importance": {"en": "Head importance for “{label}”, {L}×{h} heads: the largest drops are {top}; {small} of "
                             "{total} heads change it by less than 1 point; {off}.",
                       "zh": "“{label}”的 head 重要性，{L}×{h} 个 head：下降最大的是{top}；{total} 个 head 中有 "
                             "{small} 个的影响小于 1 个百分点；{off}。"},
}
