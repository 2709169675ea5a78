"""The progress bar's words in both languages, named where a run reports (``progress(0.4, "progress-running",
...)``) and written in the page's language by :class:`vit.ui.lang.Progress`; ``{suffix}``: an English ordinal's."""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    "progress-drawing": {"en": "drawing", "zh": "绘图中"},
    "progress-waiting": {"en": "waiting for the model (one analysis at a time, the quickest first)",
                         "zh": "等待模型（一次一个分析，最快的先）"},
    "progress-loading": {"en": "loading {model}", "zh": "加载 {model}"},
    "progress-running": {"en": "running {model} on your image (~{seconds} s)",
                         "zh": "在你的图像上运行 {model}（约 {seconds} 秒）"},
    "progress-layer": {"en": "running {model}: layer {n} of {total}", "zh": "运行 {model}：第 {n} 层，共 {total} 层"},
    "progress-downloading-mb": {"en": "downloading the {model} weights: {mb} MB", "zh": "下载 {model} 的权重：{mb} MB"},
    "progress-downloading": {"en": "downloading the {model} weights", "zh": "下载 {model} 的权重"},
    "progress-in-line": {"en": "waiting: {n}{suffix} in line, about {seconds} s", "zh": "排队中：第 {n} 位，约"
                                                                                        " {seconds} 秒"},
    "progress-in-line-soon": {"en": "waiting: {n}{suffix} in line, less than a second",
                              "zh": "排队中：第 {n} 位，不到一秒"},
    "progress-paused": {"en": "paused after layer {n} of {total} for a quicker analysis; {waiting}",
                        "zh": "第 {n} 层（共 {total} 层）后暂停，让更快的分析先运行；{waiting}"},
    "progress-importance-waiting": {"en": "Head importance: waiting for the model (one run at a time)",
                                    "zh": "head 重要性：等待模型（一次运行一个）"},
    "progress-method-waiting": {"en": "{what}: waiting for the model (one run at a time)",
                                "zh": "{what}：等待模型（一次运行一个）"},
    "progress-explaining-testing": {"en": "{what}: explaining and testing (~{seconds} s)",
                                    "zh": "{what}：解释并测试（约 {seconds} 秒）"},
    "progress-method-running": {"en": "{what} (~{seconds} s)", "zh": "{what}（约 {seconds} 秒）"},
    "progress-importance": {"en": "Head importance: layer {n} of {total}", "zh": "head 重要性：第 {n} 层，共 {total"
                                                                                 "} 层"},
    "progress-method-of": {"en": "{what} ({n} of {total})", "zh": "{what}（第 {n} 个，共 {total} 个）"},
}
