"""The pictures' words in both languages: the stage table, captions, legends and the text drawn in pictures
(:mod:`vit.views`)."""

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
}
