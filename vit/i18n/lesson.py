"""The lesson's words in both languages (:mod:`vit.lesson`), each edition quoted in its own words and section
numbers, the Chinese sections never going back along the walk (docs/languages.md). Keys: ``step-<view>-section``,
``-title``, ``-chapter`` and ``detail-<view>``, by the step's picture; ``at-layer`` and ``at-layer-head``: which
layer (and head) a step's picture and numbers are at."""

from __future__ import annotations


def _step(view: str, section: tuple[str, str], title: tuple[str, str], chapter: tuple[str, str]) -> dict:
    return {f"step-{view}-section": dict(zip(("en", "zh"), section)),
            f"step-{view}-title": dict(zip(("en", "zh"), title)),
            f"step-{view}-chapter": dict(zip(("en", "zh"), chapter))}


# The chapter's four lines of ViTEncoderLayer.forward (11.4.4 / 11.4.4.2), one a line: the lesson sets them as code
# (vit.lesson.CODE_VIEWS), a Markdown code block on screen and a monospace font in the PDF. Formulas write their
# superscripts and subscripts as <sup>…</sup> and <sub>…</sub> (Markdown's HTML; the PDF sets them raised and small)
# where Unicode has no letter for them (ℝ<sup>B×(N+1)×D</sup>, Z<sub>ℓ−1</sub>); Z₀ and QKᵀ/√d are Unicode's own.
FORWARD = ("attn_input = self.norm1(x)\n"
           "attn_output, _ = self.attn(attn_input, attn_input, attn_input)\n"
           "x = x + self.dropout1(attn_output)\n"
           "x = x + self.mlp(self.norm2(x))")

STEPS = (
    _step("patch-grid", ("11.4.1", "11.4.1"), ("Input: a sequence of tokens", "输入：一个 token 序列"),
          ("Z₀ ∈ ℝ<sup>B×(N+1)×D</sup>: N patch tokens and 1 class token.",
           "ViT Encoder 的输入是上一节得到的 token 序列：Z₀ ∈ ℝ<sup>B×(N+1)×D</sup>。其中，N 是 patch token 数量，"
           "+1 来自 class token，D 是 embedding 维度。")),
    _step("stage-table", ("11.4.1", "11.4.1"), ("Output: the same shape", "输出：形状不变"),
          ("The encoder changes neither the number of tokens nor their dimension: "
           "(B, N+1, D) → (B, N+1, D). What it changes is the content of each token.",
           "ViT Encoder 会保持序列长度和 embedding 维度不变。经过 L 层 encoder block 后，输出仍然是 "
           "(B, N+1, D)：它输出的仍然是一串 token representation。")),
    _step("matrix-view", ("11.4.2", "11.4.2"), ("An encoder, not a decoder", "Encoder，而不是 decoder"),
          ("Classification is not autoregressive: every patch may attend to every other, "
           "so no causal mask is needed.",
           "ViT 的 self-attention 从第一层开始就允许任意两个 patch 直接交互：每个 patch 都可以根据自己的 query，"
           "从所有 patch 的 value 中聚合信息。")),
    _step("block-view", ("11.4.3", "11.4.4"),
          ("One block: H = X + MSA(LN(X)), Y = H + MLP(LN(H))", "一个 block：H = X + MSA(LN(X))，Y = H + MLP(LN(H))"),
          ("Pre-norm: layer norm before attention and before the MLP; each adds to the stream. "
           "Attention mixes along the tokens, the MLP along the features.",
           "实际实现中常见的是 Pre-LN 写法。第一步，self-attention 让 token 之间交换信息；第二步，MLP 对每个 token "
           "的特征做非线性变换。MLP 不改变序列长度，也不直接混合不同 token。")),
    _step("head-views", ("11.4.3.1", "11.4.4"),
          ("Self-attention: patches interact directly", "Self-attention：patch 之间直接交互"),
          ("Each head compares queries with keys, softmax(QKᵀ/√d), and mixes the values.",
           "第一步，self-attention 让 token 之间交换信息：(B, N+1, D) → (B, N+1, D)。"
           "不同 token 之间的信息交换主要发生在 self-attention 里。")),
    _step("block-code", ("11.4.4", "11.4.4.2"), ("Implementing the encoder block", "实现 ViT Encoder Block"),
          (FORWARD, FORWARD)),
    _step("layer-views", ("11.4.5", "11.4.4.3"), ("Stacking blocks", "堆叠多个 Encoder Block"),
          ("Z<sub>ℓ</sub> = EncoderBlock<sub>ℓ</sub>(Z<sub>ℓ−1</sub>), ℓ = 1, …, L: representations are built layer "
           "by layer.",
           "单个 encoder block 只进行一次 self-attention 和一次 MLP 变换。完整的 ViT Encoder 会把多个 encoder "
           "block 堆起来：Z<sub>ℓ</sub> = EncoderBlock<sub>ℓ</sub>(Z<sub>ℓ−1</sub>)。")),
    _step("lens-view", ("11.4.5", "11.4.4.3"), ("What the tokens now contain", "Token 现在包含了什么"),
          ("After several layers each token fuses information from other patches and becomes a "
           "context-aware representation.",
           "可以看到，encoder 输出仍然是一个 token 序列，而 out[:, 0] 就是 class token 的最终表示。")),
    _step("depth-plot", ("11.4.6", "11.4.7"), ("From the class token to the class", "从 class token 到类别"),
          ("z<sub>cls</sub> = Z<sub>L</sub>[:, 0, :], logits = Linear(z<sub>cls</sub>): shape (B, K).",
           "class token 表示是 z<sub>cls</sub> = Z<sub>L</sub>[:, 0, :]，分类头就是一个线性层："
           "logits = Linear(z<sub>cls</sub>)，"
           "形状是 (B, num_classes)。")),
    _step("rollout-view", ("11.4.7", "11.4.8"),
          ("Input module, encoder, head: the whole path", "输入模块、encoder、分类头：完整的路径"),
          ("Image → tokens with class token and positions → encoder → class token → logits.",
           "这一节我们把 ViT 的输入序列接到了 Transformer Encoder 上。……class token 则在这个过程中不断从所有 "
           "patch token 中汇聚信息，最后作为整张图像的全局表示。")),
)

DETAILS: dict[str, dict[str, str]] = {
    "detail-no-classifier": {
        "en": "This model has no classifier (a backbone): there are no class scores to read, at the end or on the "
              "way. Choose a model with a head to see this step's numbers.",
        "zh": "这个模型没有分类头（一个 backbone）：无论在最后还是中途，都没有类别分数可读。选择一个带分类头的模型，"
              "才能看到这一步的数字。"},
    "detail-patch-grid": {
        "en": "Here: a {H}×{W} image in {rows}×{cols} patches of {P} px, so N = {N} patch tokens + {prefix} = {T} "
              "tokens of D = {D} numbers: Z₀ has shape **{shape}** (B = 1).",
        "zh": "这里：一张 {H}×{W} 的图像被切成 {rows}×{cols} 个 {P} 像素的 patch，所以 N = {N} 个 patch token + "
              "{prefix} = {T} 个 token，每个 D = {D} 维：Z₀ 的形状是 **{shape}**（B = 1）。"},
    "detail-stage-table": {
        "en": "Read the table: every layer's output is **{shape}**, from layer 1 to L = {L}; only the MLP's hidden "
              "layer is wider, {hidden} (4D = {four_d}), and back to D inside the block.",
        "zh": "看这张表：从第 1 层到 L = {L}，每一层的输出都是 **{shape}**；只有 MLP 的隐藏层更宽，{hidden}"
              "（4D = {four_d}），并在 block 内部投影回 D。"},
    "detail-matrix-view": {
        "en": "{at}: this head's attention is a {T}×{T} matrix, all {T} tokens looking at all {T}. A decoder's "
              "causal mask would remove the upper triangle.",
        "zh": "{at}：这个 head 的 attention 是 {T}×{T} 的矩阵，全部 {T} 个 token 看向全部 {T} 个 token。"
              "decoder 的 causal mask 会去掉上三角。"},
    "detail-block-view": {
        "en": "{at}, in numbers: ‖X‖ {stream:.1f} → attention adds {attention:.1f}, MLP adds {mlp:.1f} → "
              "‖Y‖ {output:.1f} (means over the {T} tokens).",
        "zh": "{at}，用数字来看：‖X‖ {stream:.1f} → attention 加上 {attention:.1f}，MLP 加上 {mlp:.1f} → "
              "‖Y‖ {output:.1f}（{T} 个 token 上的平均）。"},
    "detail-block-code": {
        "en": "The same four lines run in each of the L = {L} blocks. {at}: x comes in as {shape} "
              "with ‖X‖ {stream:.1f}; attention's {h} heads add {attention:.1f}, the MLP (hidden {hidden}) adds "
              "{mlp:.1f}; x leaves as {shape}, ‖Y‖ {output:.1f}.",
        "zh": "同样的四行代码在 L = {L} 个 block 中的每一个里运行。{at}：x 以 {shape} 进入，"
              "‖X‖ {stream:.1f}；attention 的 {h} 个 head 加上 {attention:.1f}，MLP（隐藏层 {hidden}）加上 "
              "{mlp:.1f}；x 以 {shape} 离开，‖Y‖ {output:.1f}。"},
    "detail-head-views": {
        "en": "{at}: h = {h} heads, each with d = D/h = {D}/{h} = {d} dimensions; the layer's weights are "
              "(1, {h}, {T}, {T}). The tiles show the class token's row in each head.",
        "zh": "{at}：h = {h} 个 head，每个 d = D/h = {D}/{h} = {d} 维；这一层的 attention 权重是 (1, {h}, {T}, {T})。"
              "每一格显示 class token 在每个 head 中的那一行。"},
    "detail-layer-views": {
        "en": "L = {L} blocks, each {shape} → {shape}; the tiles show where the class token looks at each depth.",
        "zh": "L = {L} 个 block，每个都是 {shape} → {shape}；每一格显示 class token 在每个深度看向哪里。"},
    "detail-lens-view": {
        "en": "{at}: the final norm and head, applied to every patch token after this layer, read {agree} of the "
              "{N} patches as **{label}**, the final answer; the most frequent vote is {most} ({most_n}).",
        "zh": "{at}：把最后的 norm 和分类头用在这一层之后的每个 patch token 上，{N} 个 patch 中有 {agree} 个读作最终"
              "答案 **{label}**；票数最多的是 {most}（{most_n} 个）。"},
    "detail-depth-plot": {
        "en": "Here z<sub>cls</sub>, the class token after the encoder's final LayerNorm (ViTEncoder.norm), has shape "
              "(1, {D}), the logits (1, {K}); the answer is **{label}** with probability {prob:.1%}. The plot reads "
              "the class token after every layer.",
        "zh": "这里 z<sub>cls</sub>，即经过 encoder 最后的 LayerNorm（ViTEncoder.norm）之后的 class token，"
              "形状是 (1, {D})，logits 是 (1, {K})；答案是 **{label}**，概率 {prob:.1%}。"
              "图中读取每一层之后的 class token。"},
    "detail-rollout-backbone": {
        "en": "The whole path: (1, 3, {H}, {W}) → {shape} → {L} blocks → {shape}; this model stops there (no "
              "classifier). {at}: rollout through layers 1 to {layer} estimates how much of each patch has reached "
              "the class token by then.",
        "zh": "完整的路径：(1, 3, {H}, {W}) → {shape} → {L} 个 block → {shape}；这个模型到此为止（没有分类头）。"
              "{at}：经过第 1 到第 {layer} 层的 rollout 估计到这一层为止每个 patch 有多少到达了 class token。"},
    "detail-rollout-view": {
        "en": "The whole path: (1, 3, {H}, {W}) → {shape} → {L} blocks → {shape} → z<sub>cls</sub> (1, {D}) → logits "
              "(1, {K}) → **{label}** ({prob:.1%}). {at}: rollout through layers 1 to {layer} estimates how much of "
              "each patch has reached the class token by then.",
        "zh": "完整的路径：(1, 3, {H}, {W}) → {shape} → {L} 个 block → {shape} → z<sub>cls</sub> (1, {D}) → logits "
              "(1, {K}) → **{label}**（{prob:.1%}）。{at}：经过第 1 到第 {layer} 层的 rollout 估计到这一层为止每个 "
              "patch 有多少到达了 class token。"},
    # Which layer (and head) a step's picture and numbers are at: the page's Layer and Head controls (page.py's
    # "layer" and "head" labels), the CLI's and the API's last layer and head 1.
    "at-layer": {"en": "Layer {layer} of {L} (the Layer control)",
                 "zh": "第 {layer} 层（共 {L} 层，“层 Layer”控件所选）"},
    "at-layer-head": {"en": "Layer {layer} of {L}, head {head} of {h} (the Layer and Head controls)",
                      "zh": "第 {layer} 层（共 {L} 层）、head {head}（共 {h} 个），即“层 Layer”和“head”控件所选"},
    "prefix-one": {"en": "1 class token", "zh": "1 个 class token"},
    "prefix-many": {"en": "{n} prefix tokens ({names})", "zh": "{n} 个 prefix token（{names}）"},
}

MESSAGES: dict[str, dict[str, str]] = {**{k: v for step in STEPS for k, v in step.items()}, **DETAILS}
