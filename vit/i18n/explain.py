"""The Figure 7 and Why this class? tabs' words in both languages (:mod:`vit.views.figure7`, :mod:`vit.views.why`)."""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    # Figure 7
    "filters-caption": {
        "en": "**What the patch embedding looks for:** the first {k} principal components of the D kernels ({P}×{P}×3) "
              "of the patch embedding, the linear map each patch is projected with (ViT paper, Fig. 7 left). "
              "Strongest first, row by row. Each tile is stretched to its own range (min black, max white, per "
              "channel together), so compare patterns, not brightness. Trained models show smooth stripes and blobs "
              "like a CNN's first layer; random weights show noise.",
        "zh": "**Patch embedding 在寻找什么：** patch embedding 的 D 个卷积核（{P}×{P}×3）的前 {k} 个主成分，也就是"
              "每个 patch 被投影时用的线性映射（ViT 论文 Fig. 7 左）。最强的在前，逐行排列。每格拉伸到它自己的范围"
              "（最小为黑，最大为白，各通道一起），所以比较图案，而不是亮度。训练好的模型显示平滑的条纹和斑块，"
              "像 CNN 的第一层；随机权重显示的是噪声。"},
    "filters-legend": {"en": "each tile normalised to its own min and max", "zh": "每格按它自己的最小值和最大值归一化"},
    "filters-title": {"en": "Patch-embedding filters, {k}", "zh": "Patch embedding 滤波器，{k} 个"},
    "position-label": {"en": "cosine similarity", "zh": "余弦相似度"},
    "position-every": {"en": " Only every {k}{suffix} row and column of positions is drawn ({shown}×{columns} of "
                              "{rows}×{cols}).",
                       "zh": " 只画出了每 {k} 行和列的位置（{rows}×{cols} 中的 {shown}×{columns}）。"},
    "position-caption": {
        "en": "**What the position embeddings learned:** tile (r, c) shows how similar position (r, c)'s embedding is "
              "to every other position's (cosine similarity), one {rows}×{cols} map per patch position, laid out as "
              "the patches are (ViT paper, Fig. 7 centre).{every} {structure}",
        "zh": "**Position embedding 学到了什么：** 第 (r, c) 格显示位置 (r, c) 的 embedding 与其他每个位置的 embedding "
              "有多相似（余弦相似度），每个 patch 位置一张 {rows}×{cols} 的图，按 patch 的位置排列（ViT 论文 Fig. 7 "
              "中）。{every} {structure}"},
    "position-legend": {"en": "brighter = more similar; all tiles coloured from {lo} to {hi}",
                        "zh": "越亮 = 越相似；所有格子从 {lo} 到 {hi} 着色"},
    "position-title": {"en": "Position embedding similarity, {rows}x{cols}", "zh": "Position embedding 相似度"
                                                                                   "，{rows}x{cols}"},
    "structure-numbers": {"en": "(mean similarity: neighbours {n:.2f}, same row or column {line:.2f}, border "
                                "{border:.2f}, elsewhere {other:.2f})",
                          "zh": "（平均相似度：相邻 {n:.2f}，同一行或列 {line:.2f}，边缘 {border:.2f}，其他"
                                " {other:.2f}）"},
    "structure-small": {"en": "This grid is too small to tell rows and columns from neighbours {numbers}.",
                        "zh": "这个网格太小，分不清行列与相邻关系 {numbers}。"},
    "structure-none": {"en": "This model's position embeddings show little 2-D structure {numbers}: untrained "
                             "embeddings look like this; the paper's ImageNet models light up their own row and col"
                             "umn.",
                       "zh": "这个模型的 position embedding 几乎没有二维结构 {numbers}：未训练的 embedding 就是这样；"
                             "论文中的 ImageNet 模型会点亮它们自己的行和列。"},
    "structure-line": {"en": "their own row and column", "zh": "它们自己的行和列"},
    "structure-border": {"en": "the image's border", "zh": "图像的边缘"},
    "structure-neighbours": {"en": "their neighbours", "zh": "它们的相邻位置"},
    "structure-and": {"en": " and ", "zh": "和"},
    "structure-grid": {"en": "it has learned the 2-D grid from 1-D positions, as the paper's ImageNet models do",
                       "zh": "它从一维位置学到了二维网格，和论文中的 ImageNet 模型一样"},
    "structure-not-grid": {"en": "not the grid's rows and columns, which the paper's large ImageNet models learn",
                           "zh": "但没有学到网格的行和列，而论文中的大型 ImageNet 模型会学到"},
    "structure-lights": {"en": "This model's tiles light up {words} {numbers}: {grid}.",
                         "zh": "这个模型的格子点亮了{words} {numbers}：{grid}。"},
    "distance-x": {"en": "layer (one dot per head)", "zh": "层（每个 head 一个点）"},
    "distance-y": {"en": "mean attention distance (px)", "zh": "平均 attention 距离（像素）"},
    "distance-caption": {
        "en": "**How far each head looks:** for each of the h = {h} heads of each layer 1 to L = {L}, the mean "
              "distance in pixels between a query patch and the patches it attends to, weighted by attention (ViT "
              "paper, Fig. 7 right; like a CNN's receptive field). Layer 1 ranges {lo1:.0f}–{hi1:.0f} px, layer {L} "
              "{loL:.0f}–{hiL:.0f} px. In trained models some early heads already look far, others stay local, and "
              "deeper heads all look far.",
        "zh": "**每个 head 看多远：** 对第 1 层到 L = {L} 每一层的 h = {h} 个 head，query patch 与它所关注的 patch 之间"
              "按 attention 加权的平均距离（像素）（ViT 论文 Fig. 7 右；类似 CNN 的感受野）。第 1 层在 "
              "{lo1:.0f}–{hi1:.0f} 像素之间，第 {L} 层在 {loL:.0f}–{hiL:.0f} 像素之间。在训练好的模型中，有些浅层的 "
              "head 已经看得很远，另一些保持局部，而更深的 head 都看得很远。"},
    "distance-legend": {"en": "one dot per head per layer", "zh": "每层每个 head 一个点"},
    "distance-title": {"en": "Mean attention distance, layers 1-{L}", "zh": "平均 attention 距离，第 1-{L} 层"},
    # Why this class?
    "why-label": {"en": "brighter = more relevant to this class", "zh": "越亮 = 与这个类别越相关"},
    "why-same": {"en": " This method does not depend on the class: every class gets this same map.",
                 "zh": " 这个方法不依赖类别：每个类别得到的都是这同一张图。"},
    "why-where": {"en": ", read at block {layer}'s `norm1`", "zh": "，在第 {layer} 个 block 的 `norm1` 处读取"},
    "why-caption": {"en": "**{method}{where}: {question}** ({label} {prob:.1%}) The {rows}×{cols} patches, brighter "
                          "where the method puts more of the reason ({paper}).{same}{weak}",
                    "zh": "**{method}{where}：{question}**（{label} {prob:.1%}）{rows}×{cols} 个 patch，方法认为原因"
                          "越多的地方越亮（{paper}）。{same}{weak}"},
    "why-question": {"en": "why “{label}”?", "zh": "为什么是“{label}”？"},
    "why-rather": {"en": "why “{label}” rather than “{versus}”?", "zh": "为什么是“{label}”而不是“{versus}”？"},
    "why-rather-label": {"en": "brighter = for {label}, darker = for {versus}",
                         "zh": "越亮 = 支持{label}，越暗 = 支持{versus}"},
    "why-weak": {"en": " On two objects this map often lights the other one: on the benchmark's two-shape "
                       "drawings its brightest patch was on the asked shape in {share:.0%} of the questions "
                       "(AttnLRP: {best:.0%}). Trust it for one object.",
                 "zh": " 有两个物体时，这张图常常照亮另一个：在基准测试的两个形状的图中，它最亮的 patch 只有 "
                       "{share:.0%} 的问题落在所问的形状上（AttnLRP：{best:.0%}）。只在一个物体时信任它。"},
    "why-title": {"en": "{method}: {question}", "zh": "{method}：{question}"},
    "curve-name": {"en": "{mode}, {order} (AUC {auc})", "zh": "{mode}，{order}（AUC {auc}）"},
    "deletion": {"en": "deletion", "zh": "deletion"},
    "insertion": {"en": "insertion", "zh": "insertion"},
    "map-order": {"en": "map order", "zh": "热力图顺序"},
    "random-order": {"en": "random order", "zh": "随机顺序"},
    "random-short": {"en": "random", "zh": "随机"},  # the curves' legend in a narrow frame
    "curves-x": {"en": "patches perturbed (most relevant first)", "zh": "被扰动的 patch（最相关的在前）"},
    "verdict": {"en": "{mode} AUC {ours} against {rand} for random ({better}: {beats} random)",
                "zh": "{mode} AUC {ours}，随机为 {rand}（{better}：{beats}随机）"},
    "lower-better": {"en": "lower is better", "zh": "越低越好"},
    "higher-better": {"en": "higher is better", "zh": "越高越好"},
    "better-than": {"en": "better than", "zh": "好于"},
    "no-better-than": {"en": "no better than", "zh": "不好于"},
    "baseline-mean": {"en": "normalisation mean (grey)", "zh": "归一化均值（灰色）"},
    "baseline-blur": {"en": "blurred image", "zh": "模糊图像"},
    "curves-caption": {"en": "**Is the {method} map right for “{label}”?** Patches replaced by the {baseline} in the "
                             "order the map ranks them: {verdicts}.",
                       "zh": "**{method} 的热力图对“{label}”说得对吗？** 按热力图的排序用{baseline}替换 patch："
                             "{verdicts}。"},
    "curves-legend": {"en": "solid: the map's order; dashed: a random order; deletion: lower is better; insertion: "
                            "higher is better",
                      "zh": "实线：热力图的顺序；虚线：随机顺序；deletion：越低越好；insertion：越高越好"},
    "curves-title": {"en": "Deletion and insertion, {method}, {label}", "zh": "Deletion 和 insertion，{method}"
                                                                              "，{label}"},
    "comparison-headers": {"en": "method|depends on the class|deletion AUC (lower is better)|insertion AUC (higher is "
                                 "better)|time (ms)",
                           "zh": "方法|是否依赖类别|deletion AUC（越低越好）|insertion AUC（越高越好）|时间（毫秒）"},
    "random-chance": {"en": "random order (chance)", "zh": "随机顺序（随机水平）"},
    # the methods' names where they are words, not names (vit.explanations.methods; the others are names)
    "method-attention-title": {"en": "Last layer's attention", "zh": "最后一层的 attention"},
    "method-occlusion-title": {"en": "Occlusion (2×2 tokens)", "zh": "遮挡（2×2 个 token）"},
    "method-occlusion-paper": {"en": "Zeiler & Fergus 2014, on the tokens: each 2×2 block of patches taken away in "
                                     "turn, as What if? does, a patch scored by how much the class's log-probability "
                                     "falls",
                               "zh": "Zeiler & Fergus 2014，用在 token 上：依次拿走每个 2×2 的 patch 块（与“如果……？”"
                                     "相同），按该类别的 log 概率下降多少给 patch 打分"},
    "method-attention-paper": {"en": "the class token's attention in the last layer, mean of the heads",
                               "zh": "最后一层中 class token 的 attention，各 head 取平均"},
    # the Why tab's own text (vit.ui.tabs.why)
    "why-default-block": {"en": "default (block {n})", "zh": "默认（第 {n} 个 block）"},
    "why-block": {"en": "block {n}", "zh": "第 {n} 个 block"},
    "why-versus-auto": {"en": "the strongest other class", "zh": "最强的其他类别"},
    "why-versus-none": {"en": "nothing: this class alone", "zh": "不对比：只看这个类别"},
    "why-versus-same": {"en": "Pick another class to compare with than the one explained: the map answers “why A "
                              "rather than B?”.",
                        "zh": "请选一个与所解释的类别不同的类别来对比：这张图回答的是“为什么是 A 而不是 B？”。"},
    "why-cost": {"en": "Cost: {passes} forward passes' worth, {seconds} here.",
                 "zh": "代价：相当于 {passes} 次前向计算，在这里{seconds}。"},
    "why-title-short": {"en": "Why this class?", "zh": "为什么是这个类别？"},
    "why-first": {"en": "Analyse an image first, then pick a class to explain.",
                  "zh": "请先分析一张图像，再选择要解释的类别。"},
    "why-changed": {"en": "The image or the setting changed since the last analysis: press Analyze first, then ask "
                          "why.",
                    "zh": "自上次分析以来图像或设置已改变：请先按“分析”，再问为什么。"},
    "why-table-head": {"en": "<b>Every method on “{label}”</b> ({prob}): patches replaced by {replaced}, 10 steps. "
                             "Deletion: lower is better; insertion: higher is better; the best of each in bold.",
                       "zh": "<b>所有方法在“{label}”上</b>（{prob}）：patch 被替换为{replaced}，共 10 步。Deletion："
                             "越低越好；insertion：越高越好；各自最好的用粗体。"},
    "replaced-mean": {"en": "the normalisation mean (grey)", "zh": "归一化均值（灰色）"},
    "replaced-blur": {"en": "a blur of the image", "zh": "图像的模糊版本"},
    # text alternatives: Figure 7 (vit.views.figure7)
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
    # text alternatives: Why this class? (vit.views.why)
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
}
