"""The What if? tab's words in both languages (:mod:`vit.views.whatif`, :mod:`vit.ui.tabs.whatif`)."""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    "rollout-label": {"en": "brighter = more rollout", "zh": "越亮 = rollout 越多"},
    "heads-off": {"en": "{n} {heads} off ({pairs}; layer:head, {how})", "zh": "关闭了 {n} 个 head（{pairs}；层:head"
                                                                              "，{how}）"},
    "head-one": {"en": "head", "zh": "head"},
    "head-many": {"en": "heads", "zh": "head"},
    "how-zero": {"en": "zeroed", "zh": "置零"},
    "how-mean": {"en": "replaced by their mean over the tokens", "zh": "替换为它们在各 token 上的均值"},
    "how-mean-short": {"en": "mean over the tokens", "zh": "各 token 上的均值"},
    "patches-removed": {"en": "{n} of {total} patches removed", "zh": "{total} 个 patch 中去掉了 {n} 个"},
    "whatif-nothing": {"en": "**Nothing taken away yet:** “{label}” at {before}. Click patches to remove them (click "
                             "again to put one back), use the buttons, or switch heads off in the grid.",
                       "zh": "**还没有拿走任何东西：**“{label}”为 {before}。点击 patch 把它们去掉（再点一次放回），"
                             "使用按钮，或在网格中关闭 head。"},
    "whatif-grey": {"en": " Greying the same patches instead (every token kept, the deletion test's way): {p}.",
                    "zh": " 改为把同样的 patch 涂灰（保留所有 token，deletion 测试的做法）：{p}。"},
    "whatif-now": {"en": "the model now says “{label}” ({p})", "zh": "模型现在说“{label}”（{p}）"},
    "whatif-caption": {"en": "**What if: {change}.** “{label}”: {before} → {after}; {now}. The model ran on the {kept} "
                             "kept patch tokens only, each with its own position embedding, and the {prefix} {tokens}; "
                             "hatched: removed. Colours: rollout over what was kept.{grey}",
                       "zh": "**如果：{change}。**“{label}”：{before} → {after}；{now}。模型只在保留的 {kept} 个 patch "
                             "token 上运行，每个都带着自己的 position embedding，还有 {prefix} {tokens}；斜线：已去掉。"
                             "颜色：保留部分上的 rollout。{grey}"},
    "token-one": {"en": "token", "zh": "token"},
    "token-many": {"en": "tokens", "zh": "token"},
    "whatif-legend": {"en": "{label}; colours scaled from the kept patches' min ({lo}) to their max ({hi}); hatched "
                            "patches were removed",
                      "zh": "{label}；颜色按保留的 patch 的最小值（{lo}）到最大值（{hi}）缩放；斜线的 patch 已去掉"},
    "whatif-title": {"en": "What if, {label}", "zh": "如果……，{label}"},
    "grid-head": {"en": "head →", "zh": "head →"},
    "grid-layer": {"en": "layer {n}", "zh": "第 {n} 层"},
    "importance-bar": {"en": "drop in p({label}) with that head alone off", "zh": "只关闭那个 head 时 p({label}) 的"
                                                                                  "下降"},
    "importance-caption": {
        "en": "**Head importance for “{label}”:** how far its probability falls when each head alone is switched off "
              "({how}); the most: layer {layer}, head {head} ({change}). A head whose loss raises the class is drawn "
              "as 0. Click a head to switch it off.{now}",
        "zh": "**“{label}”的 head 重要性：** 每次单独关闭一个 head（{how}）时它的概率下降多少；"
              "下降最多的是第 {layer} 层、head {head}（{change}）。关闭后类别概率反而上升的 head 画成 0。"
              "点击一个 head 把它关闭。{now}"},
    # a probability's change, in percentage points (a drop is not "+40.4%")
    "p-falls": {"en": "p falls by {points:.1f} points", "zh": "p 下降 {points:.1f} 个百分点"},
    "p-rises": {"en": "p rises by {points:.1f} points", "zh": "p 上升 {points:.1f} 个百分点"},
    "importance-legend": {"en": "brighter = the class loses more without that head alone",
                          "zh": "越亮 = 单独去掉那个 head 时类别损失越多"},
    "heads-caption-plain": {
        "en": "**The {L}×{h} heads** (layers down, heads across): click one to switch it off, again to switch it back "
              "on.{now} “Head importance” colours each by what it alone is worth.",
        "zh": "**{L}×{h} 个 head**（纵向是层，横向是 head）：点击一个把它关闭，再点一次重新打开。{now}"
              "“head 重要性”按每个 head 单独的价值着色。"},
    "heads-now": {"en": " Now: {off}.", "zh": " 现在：{off}。"},
    "heads-legend": {"en": "crossed = switched off", "zh": "打叉 = 已关闭"},
    "heads-grid-title": {"en": "Heads, switched off and importance", "zh": "各个 head：关闭情况和重要性"},
    # the tab's own text (vit.ui.tabs.whatif)
    "result-grey": {"en": "; with grey patches instead: <b>{p}</b>", "zh": "；改用灰色 patch：<b>{p}</b>"},
    "result-nothing": {"en": "nothing taken away", "zh": "什么都没拿走"},
    "result-before": {"en": "before", "zh": "之前"},
    "result-after": {"en": "what if", "zh": "如果……"},
    "cost-words": {"en": "Head importance switches each of the {L}×{h} heads off alone and re-runs the layers after "
                         "it: {forwards} forward passes' worth, about {seconds:.1f} s here.",
                   "zh": "head 重要性逐个单独关闭 {L}×{h} 个 head 中的每一个，并重新运行它之后的层：相当于 {forwards} "
                         "次前向传播，在这里约 {seconds:.1f} 秒。"},
    "cost-measured": {"en": "{words} Measured: {seconds:.1f} s.", "zh": "{words} 实测：{seconds:.1f} 秒。"},
    "whatif-title-short": {"en": "What if?", "zh": "如果……会怎样？"},
    "whatif-changed": {"en": "The image or the setting changed since the last analysis: press Analyze first, then ask "
                             "what if.",
                       "zh": "自上次分析以来图像或设置已改变：请先按“分析”，再问如果……会怎样。"},
    "whatif-first": {"en": "Analyse an image first, then ask what if.", "zh": "请先分析一张图像，再问如果……会怎样。"},
    "whatif-one-stays": {"en": "At least one patch must stay: put one back first.",
                         "zh": "至少要留下一个 patch：请先放回一个。"},
    # text alternatives: What if? (vit.views.whatif)
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
