"""The Inside and Figure 7 tabs' words in both languages (:mod:`vit.views.inside`, :mod:`vit.views.figure7`)."""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    # what a block adds
    "block-series": {"en": "‖X‖ stream in|‖MSA(LN(X))‖ attention|‖MLP(LN(H))‖ MLP|‖Y‖ block out",
                     "zh": "‖X‖ 输入的 stream|‖MSA(LN(X))‖ attention|‖MLP(LN(H))‖ MLP|‖Y‖ block 输出"},
    "block-axis": {"en": "mean ‖·‖₂ over the {T} tokens", "zh": "{T} 个 token 上 ‖·‖₂ 的平均"},
    "layer-axis": {"en": "layer", "zh": "层"},
    "block-adds": {"en": "adds ‖·‖ = {v:.1f}", "zh": "加上 ‖·‖ = {v:.1f}"},
    "block-diagram": {"en": "Layer {layer} (encoder.layers.{module}), means over {T} tokens",
                      "zh": "第 {layer} 层（encoder.layers.{module}），{T} 个 token 上的平均"},
    "block-diagram-short": {"en": "Layer {layer} (encoder.layers.{module})",  # where the above takes two lines
                            "zh": "第 {layer} 层（encoder.layers.{module}）"},
    "block-caption": {
        "en": "**Inside a block:** each pre-norm block computes **H = X + MSA(LN(X))** and **Y = H + MLP(LN(H))**: "
              "attention and the MLP each *add* to the residual stream X. Bars: the mean over the N+1 = {T} tokens "
              "of each vector's length, per layer 1 to L = {L}. Layer {layer}: ‖X‖ {stream:.1f} → attention adds "
              "{attention:.1f}, MLP adds {mlp:.1f} → ‖Y‖ {output:.1f}. The branches are added as vectors, so ‖Y‖ is "
              "at most, not equal to, the sum of the three.",
        "zh": "**Block 内部：** 每个 Pre-LN block 计算 **H = X + MSA(LN(X))** 和 **Y = H + MLP(LN(H))**：attention "
              "和 MLP 各自 *加* 到 residual stream X 上。柱形：每一层（第 1 层到 L = {L}）N+1 = {T} 个 token 上向量"
              "长度的平均。第 {layer} 层：‖X‖ {stream:.1f} → attention 加上 {attention:.1f}，MLP 加上 {mlp:.1f} → "
              "‖Y‖ {output:.1f}。各分支是作为向量相加的，所以 ‖Y‖ 至多等于（而不是等于）三者之和。"},
    "block-legend": {"en": "bars per layer: {series}", "zh": "每层的柱形：{series}"},
    "block-title": {"en": "Inside a block, layers 1-{L}", "zh": "Block 内部，第 1-{L} 层"},
    # the block in code
    "code-heads": {"en": "{h} heads of d = {d}; weights (1, {h}, {T}, {T})",
                   "zh": "{h} 个 head，每个 d = {d}；权重 (1, {h}, {T}, {T})"},
    "code-mlp": {"en": "MLP hidden (1, {T}, {hidden}); MLP(LN(H)) ‖·‖ = {mlp:.1f}",
                 "zh": "MLP 隐藏层 (1, {T}, {hidden})；MLP(LN(H)) ‖·‖ = {mlp:.1f}"},
    "code-caption": {
        "en": "**11.4.4, the encoder block in code:** the chapter's `ViTEncoderLayer.forward`, line by line, with this "
              "image's shapes and mean token lengths at layer {layer} (encoder.layers.{module}). Pre-norm: `norm1` "
              "before attention, `norm2` before the MLP, and each result is *added* to x: H = X + MSA(LN(X)), "
              "Y = H + MLP(LN(H)). The shape stays (1, {T}, {D}) from the first line to the last.",
        "zh": "**11.4.4.2，代码里的 encoder block：** 本章的 `ViTEncoderLayer.forward`，逐行附上这张图像在第 {layer} "
              "层（encoder.layers.{module}）的形状和 token 平均长度。Pre-LN：attention 之前是 `norm1`，MLP 之前是 "
              "`norm2`，每个结果都 *加* 到 x 上：H = X + MSA(LN(X))，Y = H + MLP(LN(H))。从第一行到最后一行，形状"
              "始终是 (1, {T}, {D})。"},
    "code-legend": {"en": "blue: this image's numbers (‖·‖: mean over the N+1 tokens of each vector's length)",
                    "zh": "蓝色：这张图像的数字（‖·‖：N+1 个 token 上向量长度的平均）"},
    "code-title": {"en": "The encoder block in code, layer {layer}", "zh": "代码里的 encoder block，第 {layer} 层"},
    # token content
    "token-content": {"en": "Token content", "zh": "Token 内容"},
    "lens-trained-here": {
        "en": "This model was trained with token labelling (vit/model/train.py): its head also learned to read the "
              "patch tokens on the shape, so those vote the shape's class by design, while background patches, "
              "never trained, vote anything.",
        "zh": "这个模型用 token labelling 训练（vit/model/train.py）：它的分类头也学会了读取形状上的 patch token，"
              "所以这些 patch 按设计投给形状的类别，而从没训练过的背景 patch 会随意投票。"},
    "lens-class-only": {
        "en": "The head was trained on the class token of the last layer only, so this reads what each patch token "
              "carries, roughly.",
        "zh": "分类头只在最后一层的 class token 上训练过，所以这只是粗略地读出每个 patch token 携带了什么。"},
    "lens-other": {"en": "other classes ({n})", "zh": "其他类别（{n}）"},
    "lens-caption": {
        "en": "**Token content at layer {layer}:** the final LayerNorm and the classification head — the same ones "
              "that read the class token at the end — applied to **every patch token** Y_{layer},i, as if each patch "
              "were the class token (an early exit per patch). Each patch is coloured by its top-1 class (mean "
              "probability {mean:.2f}). **{agree} of {n} patches** agree with the final answer, {label}. {training}",
        "zh": "**第 {layer} 层的 token 内容：** 把最后的 LayerNorm 和分类头（最后读取 class token 的同一组）用在 "
              "**每个 patch token** Y_{layer},i 上，就好像每个 patch 都是 class token（每个 patch 一个 early exit）。"
              "每个 patch 按它的 top-1 类别着色（平均概率 {mean:.2f}）。**{n} 个 patch 中有 {agree} 个** 与最终答案 "
              "{label} 一致。{training}"},
    "lens-legend": {"en": "colour = a patch token's top-1 class; the legend counts patches per class; grey: other "
                          "classes",
                    "zh": "颜色 = patch token 的 top-1 类别；图例统计每个类别的 patch 数；灰色：其他类别"},
    "lens-title": {"en": "Token content, layer {layer}", "zh": "Token 内容，第 {layer} 层"},
    # token norms
    "norms-label": {"en": "brighter = longer token vector", "zh": "越亮 = token 向量越长"},
    "norms-one": {"en": "the {name} token's is {v:.1f}", "zh": "{name} token 的是 {v:.1f}"},
    "norms-many": {"en": "the prefix tokens': {values}", "zh": "各 prefix token 的：{values}"},
    "norms-caption": {
        "en": "**Token norms after layer {layer}:** the length ‖Y_{layer},i‖₂ of each patch token's D = {D} numbers, "
              "from {lo:.1f} to {hi:.1f} (median {median:.1f}); {prefix}. On large trained models a few patch "
              "tokens, often in plain background, grow far longer than the rest: the \"artifact\" tokens of Darcet "
              "et al. 2024 (\"Vision Transformers Need Registers\"), which the model uses as scratch space for global "
              "information.",
        "zh": "**第 {layer} 层之后的 token 长度：** 每个 patch token 的 D = {D} 个数的长度 ‖Y_{layer},i‖₂，从 {lo:.1f} "
              "到 {hi:.1f}（中位数 {median:.1f}）；{prefix}。在训练好的大模型上，少数 patch token（常在单调的背景里）"
              "会比其余的长得多：这就是 Darcet et al. 2024（\"Vision Transformers Need Registers\"）说的 \"artifact\" "
              "token，模型把它们当作存放全局信息的草稿空间。"},
    "norms-registers": {
        "en": " This model has {n} registers, extra tokens given that role, so its patch tokens should stay even: "
              "compare the registers' norms above.",
        "zh": " 这个模型有 {n} 个 register，即专门承担这个角色的额外 token，所以它的 patch token 应该保持均匀："
              "比较上面 register 的长度。"},
    "norms-title": {"en": "Token norms, layer {layer}", "zh": "Token 长度，第 {layer} 层"},
    # the whole matrix
    "matrix-encoder": {"en": "encoder: every token sees all", "zh": "encoder：每个 token 看到全部"},
    "matrix-causal": {"en": "causal mask: only earlier tokens", "zh": "causal mask：只看之前的 token"},
    "matrix-label": {"en": "log scale: brighter = more attention (row = query, column = key)",
                     "zh": "对数刻度：越亮 = attention 越多（行 = query，列 = key）"},
    "matrix-masked": {"en": "masked: a decoder may not look there", "zh": "被 mask：decoder 不能看那里"},
    # the same, short, for a matrix drawn too narrow for the words above (its caption says them all)
    "matrix-encoder-short": {"en": "encoder", "zh": "encoder"},
    "matrix-causal-short": {"en": "causal mask", "zh": "causal mask"},
    "matrix-bar": {"en": "log scale: brighter = more attention", "zh": "对数刻度：越亮 = attention 越多"},
    "matrix-masked-short": {"en": "masked", "zh": "被 mask"},
    "matrix-shrink": {"en": " Drawn at {n}×{n}: each cell is the **block max** of {f}×{f} patch tokens (the class "
                            "token keeps its own row and column).",
                      "zh": " 画成 {n}×{n}：每格是 {f}×{f} 个 patch token 的 **块最大值**（class token 保留自己的行"
                            "和列）。"},
    "matrix-caption": {
        "en": "**The whole matrix, layer {layer}, head {head}:** softmax(QKᵀ/√d) over all N+1 = {T} tokens, {T}×{T}; "
              "row i is where token i looks, row 0 (outlined) the class token. Left, the encoder's: bidirectional, "
              "every patch sees every other (11.4.2). Right, the same scores under a decoder's causal mask (upper "
              "triangle removed, in blue; rows renormalised): a patch could no longer see the patches to its right "
              "and below, and the class token, first in line, would see only itself.{shrink}",
        "zh": "**整个矩阵，第 {layer} 层，head {head}：** 全部 N+1 = {T} 个 token 上的 softmax(QKᵀ/√d)，{T}×{T}；"
              "第 i 行是 token i 看向哪里，第 0 行（框出）是 class token。左边是 encoder 的：双向，每个 patch 都能看到"
              "其他所有 patch（11.4.2）。右边是同样的分数加上 decoder 的 causal mask（去掉上三角，蓝色；行重新归一"
              "化）："
              "一个 patch 就不能再看到它右边和下面的 patch，而排在第一位的 class token 只能看到它自己。{shrink}"},
    "matrix-legend": {"en": "{label}; both halves on one scale, {decades} decades from {lo} (and below) to the "
                            "encoder's largest weight {hi} (and above); blue: removed by the mask",
                      "zh": "{label}；两半用同一个刻度，从 {lo}（及以下）到 encoder 的最大权重 {hi}（及以上）共 "
                            "{decades} 个数量级；蓝色：被 mask 去掉"},
    "matrix-title": {"en": "Attention matrix, layer {layer}, head {head}",
                     "zh": "Attention 矩阵，第 {layer} 层，head {head}"},
    # text alternatives: the Inside tab (vit.views.inside)
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
}
