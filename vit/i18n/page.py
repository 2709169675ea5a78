"""What the page's components say, in both languages: labels, buttons, tabs, accordions, "What is this?".

Given to gradio's ``gr.I18n`` (:mod:`vit.ui.lang`): the browser shows each in its language. Keys have no
dots (gradio's translations read dots as nesting). The pictures' titles and "What is this?" texts are
keyed ``title-<picture>`` and ``what-<picture>``: English in the picture registry
(:data:`vit.views.registry.PICTURES`), Chinese in :data:`PICTURES_ZH`.
"""

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

# The pictures' titles and "What is this?" in Chinese: (title, what is this), by picture (vit.views.registry).
PICTURES_ZH: dict[str, tuple[str, str]] = {
    "patch-grid": (
        "Patch 网格：点击一个 patch，或用 ← ↑ → ↓",
        "Transformer 读的是 token 序列，而不是像素。H×W 的图像被切成 P×P 的 patch，每个 patch 经同一个线性映射"
        "（kernel = stride = P 的卷积）变成一个 D 维 token。N = HW/P² 个 patch token 按行从左到右排列，"
        "排在一个可学习的 class token（token 0）之后：一共 N+1 个 token。P 越小，token 越多越细，"
        "attention 的开销随 (N+1)² 增长。"),
    "query-view": (
        "被点击的 patch 在关注哪里",
        "softmax(QKᵀ/√d) 的一行：所选 patch 的 query 和每个 token 的 key 比较，softmax 把分数变成和为 1 的权重。"
        "亮的 patch 是这个 patch 在这一层、这个 head 中混入 value 最多的。它显示的是一个 patch 在一个深度上看向哪里，"
        "而不是模型最终依赖什么。"),
    "rollout-view": (
        "Attention rollout：class token 看向哪里",
        "Attention rollout（Abnar & Zuidema, 2020）沿着各层把 attention 往回追。每一层的 attention 融合各 head "
        "并加上 residual 路径（A + I，行重新归一化），表示每个 token 从其他 token 取了多少；从第 1 层往上相乘，"
        "估计每个 patch 有多少到达了做出预测的 class token。它是对信息流的估计，不是对什么起了作用的证明。"),
    "head-views": (
        "Class token，按 head",
        "每一层有 h 个并行的 attention head，各自有自己的 query、key 和 value 投影。每个 head 一格，显示 class token "
        "在这个 head 中看向哪里：head 可以各有专长，关注物体、背景或相邻的 patch。每格从 0 到它自己的最大值着色，"
        "所以比较各格看向哪里，而不是看得多强。"),
    "layer-views": (
        "Class token，按层",
        "每个 encoder layer 一格：在这个深度 class token 看向哪里（各 head 融合）。浅层往往看得很广或很局部；"
        "深层在 token 交换过信息之后，往往落在决策所依据的地方。每格从 0 到它自己的最大值着色。"),
    "depth-plot": (
        "预测是如何形成的（early exit）",
        "每一层之后，把 class token 送进最后的 LayerNorm 和分类头，就好像模型在那里停下（early exit）。"
        "蓝色：最终答案在每个深度上的概率；橙色：在那一层会胜出的类别。分类头只在最后一层上训练过，"
        "所以早期的读数很粗略，但能看出答案在哪个深度形成。"),
    "block-view": (
        "Block 内部：attention 和 MLP 加了什么",
        "每个 encoder block 都是 Pre-LN：H = X + MSA(LN(X))，然后 Y = H + MLP(LN(H))。图中逐层给出进入 block 的 "
        "token（residual stream）、attention 加上的量、MLP 加上的量以及离开 block 的 token 的平均长度 ||·||₂。"
        "形状从不改变，改变的是内容（11.4.1）。"),
    "block-code": (
        "代码里的 encoder block（11.4.4）",
        "本章的 ViTEncoderLayer.forward，四行：LayerNorm、attention、相加；LayerNorm、MLP、相加。每行下面是这张图像"
        "在所选的一层上的数字，和课程文字中的一样：形状（从不改变），以及 attention 和 MLP 加到 residual "
        "stream 上的向量有多长。"),
    "lens-view": (
        "Token 内容：每个 patch 自己的投票（所选层）",
        "把最后的 norm 和分类头用在这一层之后的每个 patch token 上，而不只是 class token：每个 patch 单独会投给"
        "哪个类别。浅层的投票是噪声；更深处，物体上的 patch 与最终答案一致。"),
    "token-norms": (
        "所选层之后的 token 长度 ||Y||",
        "这一层之后每个 patch token 的向量有多长。在训练好的大模型上，少数背景 patch 会变得很长：它们被当作草稿空间"
        "使用（Darcet et al. 2024, 'Vision Transformers Need Registers'）。"),
    "matrix-view": (
        "所选层和 head 的整个矩阵，以及加上 causal mask 之后",
        "一个 head 的整个 softmax(QKᵀ/√d)：第 i 行是 token i 看向哪里，第 j 列是谁在看 token j；第 0 行是 class "
        "token。旁边是加上 causal mask 的同一个矩阵，即 decoder 看到的样子：每个 token 只能看到它之前的 token。"
        "ViT encoder 没有这样的 mask（11.4.2）。"),
    "filters-view": (
        "Patch embedding 的滤波器：主成分",
        "Patch embedding 卷积核（patch 卷积的 D 个滤波器）的前几个主成分，和 ViT 论文的 Figure 7（左）一样。"
        "它们显示第一层在一个 patch 中寻找什么。"),
    "position-view": (
        "Position embedding 的相似度",
        "学到的 position embedding 之间的余弦相似度：每个 patch 位置一张小图，另一个位置的 embedding 越相似越亮。"
        "训练好的模型会学到行和列（ViT 论文 Figure 7，中）；改变 patch size 之后，这些是重采样后的 embedding。"),
    "distance-view": (
        "每个 head 的平均 attention 距离",
        "对每个 head 和每一层，patch 平均看多远（以像素计）：一个 patch 与它所关注的 patch 之间按 attention "
        "加权的距离（ViT 论文 Figure 7，右）。有些 head 从第一层就看得很远；另一些直到很深才不再局部。"),
    "why-map": (
        "为什么是这个类别？所选类别的热力图",
        "解释图回答的是“哪些 patch 让模型说出这个类别，而不是那个？”。默认的 AttnLRP（Achtibat et al., 2024）"
        "按为 attention 设计的规则把分数一层层传回去；问“为什么是 A 而不是 B？”时，它照亮让 A 与众不同的地方，"
        "所以在有两个形状的图上会指向所问的那个。遮挡（occlusion）依次拿走每个 2×2 的 patch 块并测量下降："
        "这是模型的行为，而不是对其内部的解读。Rollout 和最后一层的 attention 只跟随 attention，每个类别都是"
        "同一张图；gradient-weighted rollout 和 Grad-CAM 按类别的梯度给 attention 或特征加权，有两个物体时常常"
        "两个都照亮。解释图是一个主张，不是事实：请测试它。"),
    "why-curves": (
        "它对吗？Deletion 和 insertion",
        "测试（deletion 和 insertion，Petsiuk et al., 2018）：把热力图排在最前的 patch 每次涂灰 10%，观察该类别的"
        "概率。如果热力图是对的，概率会很快下降（deletion：面积越小越好）；从一张灰色图像开始先放回这些 patch，"
        "概率会很快上升（insertion：面积越大越好）。虚线按随机顺序做同样的事：值得相信的热力图会胜过它们。"),
    "whatif-map": (
        "如果……？点击 patch 把它们拿走",
        "ViT 可以只在一部分 token 上运行：被拿走的 patch 的 token 直接省略，每个保留的 patch 保留自己的 position "
        "embedding（MAE 背后的想法，He et al. 2022）；CNN 则需要灰色方块。旁边的预测是模型在剩下部分上的预测。"
        "颜色：保留的 patch 上的 attention rollout。勾选灰色对比，可以看 deletion 测试的做法：同样的 patch 涂灰，"
        "保留所有 token；两者不一致之处，模型是在对灰色作出反应，而不是对缺失的内容。"),
    "whatif-heads": (
        "各个 head：点击一个把它关闭",
        "每层的 h 个 head，每个一格（纵向是层，横向是 head）。关闭的 head 的输出 softmax(QKᵀ/√d)V 在输出投影混合"
        "各 head 之前被替换为零（或它在各 token 上的均值）。“head 重要性”逐个单独关闭每个 head，测量预测类别的概率"
        "下降多少：亮的 head 是答案需要的。很多 head 去掉后变化很小（Michel et al. 2019, \"Are Sixteen Heads Really "
        "Better than One?\"）。"),
}
