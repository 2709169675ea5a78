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
    "close-fullscreen": {"en": "✕ Close full screen (Esc)", "zh": "✕ 退出全屏（Esc）"},
    # the lesson's tab
    "lesson-progress": {"en": "**Step {n} of {total}** · {section} {title}",
                        "zh": "**第 {n} 步，共 {total} 步** · {section} {title}"},
    "lesson-first": {"en": "Analyse an image first (an example, or your own): the lesson uses its numbers.",
                     "zh": "请先分析一张图像（示例或你自己的）：本课要用它的数字。"},
    "lesson-no-analysis": {"en": "Analyse an image first (an example, or your own): the lesson's pages use its "
                                 "numbers.",
                           "zh": "请先分析一张图像（示例或你自己的）：本课的每一页都要用它的数字。"},
    "proposal-caption": {"en": "Hatched: the patches to remove.", "zh": "斜线标出的是要去掉的 patch。"},
    "proposal-title": {"en": "Remove these patches", "zh": "去掉这些 patch"},
    "check-title": {"en": "Please check", "zh": "请检查"},
    "server-error-title": {"en": "Server error", "zh": "服务器错误"},
    "server-error": {"en": "Something went wrong on the server (it has been logged). Try again, or another image "
                           "or setting.",
                     "zh": "服务器出了问题（已记录）。请重试，或换一张图像或设置。"},
}
