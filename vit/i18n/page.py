"""What the page's components say, in both languages, for gradio's ``gr.I18n`` (:mod:`vit.ui.lang`). Keys have no
dots (gradio reads dots as nesting); the pictures' titles and "What is this?" are the registry's."""

from __future__ import annotations

PAGE: dict[str, dict[str, str]] = {
    # the switch
    "lang-switch": {"en": "Language", "zh": "语言 Language"},
    # the sidebar
    "your-image": {"en": "Your image", "zh": "你的图像"},
    # The upload box's words: gradio's own name for the box, word for word, so a screen reader says what is shown.
    "upload-here": {"en": "Drop an image file here to upload", "zh": "将图像文件拖放到此处以上传"},
    # Draw: a canvas in the upload box's place (vit/ui/page.js draws on it; each finished stroke is the image).
    "draw": {"en": "Draw", "zh": "画"},
    "pen": {"en": "Pen (px)", "zh": "笔宽（像素）"},
    "undo": {"en": "Undo", "zh": "撤销"},
    "clear-drawing": {"en": "Clear", "zh": "清空"},
    "model": {"en": "Model", "zh": "模型"},
    # A model's name in the menu, the banner and the notices (vit.ui.meter.model_words): model-<key>, the English
    # config.DISPLAY_NAMES'; the menu's value stays the English name (the API's).
    "model-vit_tiny_shapes": {"en": "ViT-Tiny shapes, trained here", "zh": "ViT-Tiny 形状，在这里训练"},
    "patch-size": {"en": "Patch size P (px)", "zh": "patch size P（像素）"},
    "depth": {"en": "Depth", "zh": "深度（encoder block 数）"},
    "analyze": {"en": "Analyze", "zh": "分析"},
    "analyzing": {"en": "Analyzing…", "zh": "分析中…"},
    "top-k-label": {"en": "Top-k: softmax(h_cls W + b)", "zh": "Top-k：softmax(h_cls W + b)"},
    "top-k": {"en": "Top-k", "zh": "Top-k"},
    "opacity": {"en": "Heatmap opacity", "zh": "热力图不透明度"},
    "colormap": {"en": "Colormap", "zh": "颜色映射"},
    "examples": {"en": "Examples: click one", "zh": "示例：点击一个"},
    "examples-start": {"en": "Start here: pick an example (or upload a photo, on the left)",
                       "zh": "从这里开始：选一个示例（或在左边上传一张照片）"},
    "projector": {"en": "Projector mode: bigger text and pictures (or add ?projector to the address)",
                  "zh": "投影模式：更大的文字和图片（或在地址后加 ?projector）"},
    "offer": {"en": "Try the shapes model (no download)", "zh": "试试这里训练的 shapes 模型（无需下载）"},
    # the view controls
    "layer": {"en": "Layer", "zh": "层 Layer"},
    "head": {"en": "Head", "zh": "head"},
    "head-fusion": {"en": "Head fusion", "zh": "head 融合方式"},
    # Head fusion's choices as the dropdown shows them (fusion-<value>); the value stays the API's "mean", "max", "min"
    "fusion-mean": {"en": "mean", "zh": "平均 mean"},
    "fusion-max": {"en": "max", "zh": "最大 max"},
    "fusion-min": {"en": "min", "zh": "最小 min"},
    "discard-ratio": {"en": "Discard ratio", "zh": "丢弃比例 discard ratio"},
    "download": {"en": "Download", "zh": "下载"},
    # every picture
    "download-picture": {"en": "⬇ Download", "zh": "⬇ 下载"},
    "pin": {"en": "Pin to compare", "zh": "固定以便比较"},
    "fullscreen": {"en": "Full screen", "zh": "全屏"},
    "what-is": {"en": "What is this?", "zh": "这是什么？"},
    "pinned-title": {"en": "**Pinned, to compare**", "zh": "**已固定，用于比较**"},
    "pinned": {"en": "Pinned", "zh": "已固定"},
    "unpin": {"en": "✕ Unpin", "zh": "✕ 取消固定"},
    # the tabs
    "tab-patches": {"en": "Patches & shapes", "zh": "Patch 与形状"},
    "tab-attention": {"en": "Attention", "zh": "Attention"},
    "tab-depth": {"en": "Across depth", "zh": "逐层来看"},
    "tab-why": {"en": "Why this class?", "zh": "为什么是这个类别？"},
    "tab-whatif": {"en": "What if?", "zh": "如果……会怎样？"},
    "tab-inside": {"en": "Inside", "zh": "内部"},
    "tab-figure7": {"en": "Figure 7", "zh": "图 7"},
    "tab-lesson": {"en": "Lesson", "zh": "课程"},
    "inside-block": {"en": "What a block adds", "zh": "一个 block 加了什么"},
    "inside-tokens": {"en": "Each patch's vote; token lengths", "zh": "每个 patch 的投票；token 长度"},
    "inside-matrix": {"en": "The whole matrix", "zh": "整个矩阵"},
    # the lesson
    "lesson-prev": {"en": "← Previous", "zh": "← 上一步"},
    "lesson-next": {"en": "Next →", "zh": "下一步 →"},
    "lesson-start": {"en": "Analyse an image (or draw one: Draw), then walk through 11.4.1 → 11.4.7 with its numbers. "
                           "Next/Previous, or the arrow keys (a presenter's clicker).",
                     "zh": "先分析一张图像（或画一张：勾选“画”），再带着它的数字从 11.4.1 走到 11.4.8"
                           "（中文版的小节编号）。"
                           "用“下一步/上一步”，或方向键（演示翻页器）。"},
    "lesson-guess": {"en": "Your guess", "zh": "你的猜测"},
    "quiz-me": {"en": "Quiz me: a question first, then this tab's answer",
                "zh": "考考我：先回答问题，再看这一页的答案"},
    "lesson-check": {"en": "Check my guess", "zh": "检查我的猜测"},
    "yes": {"en": "Yes", "zh": "是"},
    "no": {"en": "No", "zh": "否"},
    "lesson-predict-on": {"en": "Predict first: a question before each reveal",
                          "zh": "先预测：每次揭晓前先回答一个问题"},
    "lesson-download": {"en": "⬇ Download the lesson (PDF)", "zh": "⬇ 下载本课（PDF）"},
    # Why this class?
    "why-target": {"en": "Class to explain (or click a prediction)", "zh": "要解释的类别（或点击一个预测）"},
    "why-method": {"en": "Method", "zh": "方法"},
    "why-versus": {"en": "Rather than", "zh": "而不是"},
    "why-versus-auto": {"en": "the strongest other class", "zh": "最强的其他类别"},
    "method-attention": {"en": "Last layer's attention", "zh": "最后一层的 attention"},
    "method-occlusion": {"en": "Occlusion (2×2 tokens)", "zh": "遮挡（2×2 个 token）"},
    "why-layer": {"en": "Grad-CAM reads block", "zh": "Grad-CAM 读取的 block"},
    "why-layer-info": {"en": "whose norm1 output (Grad-CAM only)", "zh": "读取它的 norm1 输出（仅 Grad-CAM）"},
    "default": {"en": "default", "zh": "默认"},
    "why-baseline": {"en": "Test: replace patches with", "zh": "测试：用什么替换 patch"},
    "grey-mean": {"en": "grey (the mean)", "zh": "灰色（均值）"},
    "blurred": {"en": "blurred", "zh": "模糊"},
    "why-test": {"en": "Test it: delete and insert patches in the map's order",
                 "zh": "测试：按热力图的顺序删除和插入 patch"},
    "why-compare": {"en": "Compare all methods on this class", "zh": "在这个类别上比较所有方法"},
    # What if?
    "whatif-fraction": {"en": "x (% of the patches)", "zh": "x（patch 的百分比）"},
    "whatif-order": {"en": "Ranked by", "zh": "排序依据"},
    "whatif-keep-top": {"en": "Keep only the top x %", "zh": "只保留前 x %"},
    "whatif-remove-top": {"en": "Remove the top x %", "zh": "去掉前 x %"},
    "whatif-remove-random": {"en": "Remove a random x %", "zh": "随机去掉 x %"},
    "whatif-swap": {"en": "Swap: remove the others instead", "zh": "互换：改为去掉其余的"},
    "whatif-all-back": {"en": "Put every patch back", "zh": "放回所有 patch"},
    "whatif-grey": {"en": "Compare: grey the same patches instead (the deletion test's way, every token kept)",
                    "zh": "对比：改为把同样的 patch 涂灰（deletion 测试的做法，保留所有 token）"},
    "whatif-ablation": {"en": "A head switched off: replace its output by", "zh": "关闭一个 head：把它的输出替换为"},
    "zero-output": {"en": "zero its output", "zh": "输出置零"},
    "mean-output": {"en": "its mean over the tokens", "zh": "它在各 token 上的均值"},
    "order-rollout": {"en": "rollout (no run)", "zh": "rollout（无需运行）"},
    "order-model-run": {"en": "(a model run)", "zh": "（需运行一次模型）"},
    "order-random": {"en": "random (seeded)", "zh": "随机（固定种子）"},
    "whatif-importance": {"en": "Head importance: each head off alone", "zh": "head 重要性：逐个单独关闭"},
    "whatif-heads-on": {"en": "Every head back on", "zh": "重新打开所有 head"},
}
