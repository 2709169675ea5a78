"""The text the server writes, in both languages: banners, notices, table headers, toasts.

Formatted by :func:`vit.i18n.text` in the language of the request; the API and the CLI write English.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    "no-classifier": {"en": "No classifier: this model is a backbone (no class scores)",
                      "zh": "没有分类头：这个模型是一个 backbone（没有类别分数）"},
    "patch-size-info": {"en": "checkpoint's own: {P}", "zh": "checkpoint 自己的：{P}"},
    "depth-info": {"en": "blocks run, 1 to L = {L}", "zh": "运行的 block 数，1 到 L = {L}"},
    "pinned-caption": {"en": "**Pinned:** ", "zh": "**已固定：** "},
    # a pinned picture's caption begins with the setting it was pinned at ("ViT-B/16, P = 8, L = 12")
    "pinned-at": {"en": "**Pinned at {setting}:** ", "zh": "**已固定（{setting}）：** "},
    # an action over the server's time limit (vit.ui.runs.check_duration)
    "too-long": {"en": "{what} would take about {seconds:.0f} s of model time here, over this server's limit of "
                       "{limit:.0f} s per action (the whole class waits for the model meanwhile). Choose a larger "
                       "patch size, fewer layers or a smaller model; the person running the server can raise the "
                       "limit with {env}.",
                 "zh": "{what}在这里大约需要 {seconds:.0f} 秒的模型时间，超过了这台服务器每个操作 {limit:.0f} 秒的上限"
                       "（这段时间全班都在等模型）。请选择更大的 patch 大小、更少的层或更小的模型；"
                       "运行服务器的人可以用 {env} 提高这个上限。"},
    "what-analysis": {"en": "An analysis with {setting}", "zh": "用 {setting} 做一次分析"},
    "what-importance": {"en": "Head importance", "zh": "head 重要性"},
    "what-explanation": {"en": "This explanation", "zh": "这个解释"},
    "what-action": {"en": "This", "zh": "这个操作"},
    # the cost meter (vit.ui.meter)
    "meter-setting": {"en": "**{model}** at P = {P} (checkpoint's own: {native}), L = {L}: grid {grid}×{grid} on "
                            "{size}×{size} px",
                      "zh": "**{model}**，P = {P}（checkpoint 自己的：{native}），L = {L}：{size}×{size} 像素上的 "
                            "{grid}×{grid} 网格"},
    "meter-tokens": {"en": "→ N+1 = **{tokens} tokens**; attention (N+1)² = **{per_head}** entries per head, "
                           "L·h·(N+1)² = **{total}** in all",
                     "zh": "→ N+1 = **{tokens} 个 token**；attention (N+1)² = 每个 head **{per_head}** 个元素，"
                           "L·h·(N+1)² = 一共 **{total}** 个"},
    "meter-flops": {"en": "→ **≈ {gflops} GFLOPs**, {time} on {where}; keeps {mb} MB of attention "
                          "maps for this tab",
                    "zh": "→ **≈ {gflops} GFLOPs**，在{where}上{time}；为这个页面保留 {mb} MB 的 "
                          "attention 图"},
    "about-seconds": {"en": "about {seconds:.1f} s", "zh": "约 {seconds:.1f} 秒"},
    "under-a-tenth": {"en": "under 0.1 s", "zh": "不到 0.1 秒"},  # the estimate is FLOPs only: no "about 3 ms"
    "meter-too-big": {"en": "⚠ **Too big for this server** ({gb:.1f} GB of attention; the limit is {limit:g} GB): "
                            "choose a larger patch size or fewer layers.",
                      "zh": "⚠ **对这台服务器来说太大了**（{gb:.1f} GB 的 attention；上限是 {limit:g} GB）：请选择"
                            "更大的 patch size 或更少的层。"},
    "meter-slow": {"en": "⚠ **Slow: ~{seconds:.0f} s on {where}.** It runs when you press **Analyze**.",
                   "zh": "⚠ **较慢：在{where}上约 {seconds:.0f} 秒。** 按下 **分析** 后才运行。"},
    "hw-gpu": {"en": "the GPU", "zh": " GPU "},
    "hw-cpu": {"en": "a {cores}-core CPU", "zh": " {cores} 核 CPU "},
    # the banner and the notices
    "banner-idle-head": {"en": "No image analysed yet", "zh": "还没有分析图像"},
    "banner-idle": {"en": "Pick an example or upload a photo.", "zh": "选一个示例，或上传一张照片。"},
    "banner-untrained": {"en": "⚠ UNTRAINED", "zh": "⚠ 未训练 UNTRAINED"},
    "banner-trained-here": {"en": "✔ TRAINED HERE", "zh": "✔ 在这里训练 TRAINED HERE"},
    "banner-pretrained": {"en": "✔ PRETRAINED", "zh": "✔ 预训练 PRETRAINED"},
    "banner-modified": {"en": "{head}, modified", "zh": "{head}，已修改"},
    "banner-showing": {"en": "{head} · showing {setting}", "zh": "{head} · 显示的是 {setting}"},
    "status-trained": {"en": "a ViT trained here on drawn shapes (not ImageNet): {K} classes",
                       "zh": "在这里用绘制的形状训练的 ViT（不是 ImageNet）：{K} 个类别"},
    "status-pretrained": {"en": "pretrained weights ({weights})", "zh": "预训练的权重（{weights}）"},
    "status-random": {"en": "random weights: the checkpoint could not be had, so the predictions mean nothing",
                      "zh": "随机权重：checkpoint 无法获取，所以预测没有意义"},
    "status-resized": {"en": "patch embedding PI-resized to P = {P}, position embedding resampled to a "
                              "{rows}×{cols} grid",
                       "zh": "patch embedding 已 PI-resize 到 P = {P}，position embedding 已重采样到 "
                                       "{rows}×{cols} 网格"},
    "status-cut": {"en": "only the first {L} of {native} encoder blocks run",
                   "zh": "只运行前 {L} 个 encoder block（共 {native} 个）"},
    "downloading-failed": {"en": "the {model} weights could not be downloaded, so its analyses use random weights "
                                 "until a download succeeds (tried again a minute later).",
                           "zh": "{model} 的权重无法下载，所以在下载成功之前，它的分析使用随机权重（一分钟后重试）。"},
    "downloading-head": {"en": "Downloading the {model} weights: {size}", "zh": "正在下载 {model} 的权重：{size}"},
    "downloading-of": {"en": "{done} of {total} MB", "zh": "{done} / {total} MB"},
    "downloading": {"en": "Pick a photo: its analysis starts as soon as they are here.",
                    "zh": "选一张照片：权重一到，分析就开始。"},
    "stale": {"en": '⚠ <b>Out of date</b>{why}: the pictures show {shown}; your settings say {wanted}. '
                    'Press <b>Analyze</b>.',
              "zh": '⚠ <b>已过时</b>{why}：图片显示的是 {shown}；你的设置是 {wanted}。请按 <b>分析</b>。'},
    "stale-first": {"en": "⚠ {wanted} {reason}: press <b>Analyze</b>.",
                    "zh": "⚠ {wanted}：{reason}。请按 <b>分析</b>。"},
    "running": {"en": "⏳ <b>Running…</b> {before}{wanted} is being analysed.",
                "zh": "⏳ <b>运行中…</b> {before}正在分析 {wanted}。"},
    "running-before": {"en": "the pictures show {shown}; ", "zh": "图片显示的是 {shown}；"},
    "reason-too-big": {"en": "too big for this server: choose a larger patch size or fewer layers",
                       "zh": "对这台服务器来说太大了：请选择更大的 patch size 或更少的层"},
    "reason-slow": {"en": "takes ~{seconds:.0f} s here", "zh": "在这里约需 {seconds:.0f} 秒"},
    "reason-weights": {"en": "needs its ~{mb} MB of weights first", "zh": "需要先下载约 {mb} MB 的权重"},
    "reason-checkpoint": {"en": "needs its {mb} MB checkpoint first", "zh": "需要先下载 {mb} MB 的 checkpoint"},
    # the run's time (vit.ui.runs, vit.ui.pictures)
    "timing": {"en": "Time ({dtype}): model run {run:.0f} ms (traced forward {traced:.0f} ms) · drawing "
                     "{drawing:.0f} ms · total {total:.0f} ms",
               "zh": "时间（{dtype}）：模型运行 {run:.0f} 毫秒（带追踪的前向传播 {traced:.0f} 毫秒）· "
                     "绘图 {drawing:.0f} 毫秒 · 总计 {total:.0f} 毫秒"},
    "redrawn": {"en": "redrawn in {ms:.0f} ms, without running the model", "zh": "重新绘制用了 {ms:.0f} 毫秒，没有"
                                                                                 "运行模型"},
    "redrawn-alone": {"en": "Time: {took}", "zh": "时间：{took}"},
    "redrawn-after": {"en": "{run}  \nLast {took}", "zh": "{run}  \n最近一次{took}"},
    # the lesson's tab
    "lesson-progress": {"en": "**Step {n} of {total}** · {section} {title}",
                        "zh": "**第 {n} 步，共 {total} 步** · {section} {title}"},
    "lesson-first": {"en": "Analyse an image first (an example, or your own): the lesson uses its numbers.",
                     "zh": "请先分析一张图像（示例或你自己的）：本课要用它的数字。"},
    "lesson-export-busy": {"en": "Your lesson PDF is still being made: it downloads in a moment. Press again once it "
                                 "has.",
                           "zh": "你的课程 PDF 还在生成中，马上就会下载。下载之后再按一次。"},
    "lesson-no-analysis": {"en": "Analyse an image first (an example, or your own): the lesson's pages use its "
                                 "numbers.",
                           "zh": "请先分析一张图像（示例或你自己的）：本课的每一页都要用它的数字。"},
    "proposal-caption": {"en": "Hatched: the patches to remove.", "zh": "斜线标出的是要去掉的 patch。"},
    "proposal-title": {"en": "Remove these patches", "zh": "去掉这些 patch"},
    "check-title": {"en": "Please check", "zh": "请检查"},
    "server-error-title": {"en": "Server error", "zh": "服务器错误"},
    # the examples' names under their pictures (assets/: vit.ui.events.EXAMPLES)
    "example-astronaut": {"en": "astronaut", "zh": "宇航员"},
    "example-cameraman": {"en": "cameraman", "zh": "摄影师"},
    "example-cat": {"en": "cat", "zh": "猫"},
    "example-coffee": {"en": "coffee", "zh": "咖啡"},
    "example-hubble_deep_field": {"en": "hubble deep field", "zh": "哈勃深空"},
    "example-retina": {"en": "retina", "zh": "视网膜"},
    "example-rocket": {"en": "rocket", "zh": "火箭"},
    "example-shapes-cross": {"en": "drawn cross", "zh": "画的十字"},
    "example-shapes-heart": {"en": "drawn heart", "zh": "画的心形"},
    "example-shapes-heart_and_circle": {"en": "drawn heart and circle", "zh": "画的心形和圆"},
    "example-shapes-ring": {"en": "drawn ring", "zh": "画的圆环"},
    "example-shapes-star": {"en": "drawn star", "zh": "画的星形"},
    "example-shapes-triangle": {"en": "drawn triangle", "zh": "画的三角形"},
    "server-error": {"en": "Something went wrong on the server (it has been logged). Try again, or another image "
                           "or setting.",
                     "zh": "服务器出了问题（已记录）。请重试，或换一张图像或设置。"},
}
