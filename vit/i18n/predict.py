"""The lesson's predict-first questions in both languages (:mod:`vit.lesson.predict`): ``ask-<kind>-title`` and
``ask-<kind>`` (the question), ``why-<kind>`` (how the analysis shows the answer), the reveal and the tally."""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    # the sections: the English edition's, and the Chinese edition's own numbering, never going back along the
    # walk (vit.i18n.lesson says why): the class token gathering the patches is the Chinese summary's, 11.4.8
    "ask-tokens-section": {"en": "11.4.1", "zh": "11.4.1"},
    "ask-layer-section": {"en": "11.4.6", "zh": "11.4.7"},
    "ask-patch-section": {"en": "11.4.7", "zh": "11.4.8"},
    "ask-runner_up-section": {"en": "11.4.7", "zh": "11.4.8"},
    "ask-survive-section": {"en": "11.4.7", "zh": "11.4.8"},
    "ask-tokens-title": {"en": "Predict: how many tokens?", "zh": "预测：有多少个 token？"},
    "ask-layer-title": {"en": "Predict: when is the answer decided?", "zh": "预测：答案在哪一层确定？"},
    "ask-patch-title": {"en": "Predict: where does the class token look?", "zh": "预测：class token 看向哪里？"},
    "ask-runner_up-title": {"en": "Predict: a map for another class?", "zh": "预测：换一个类别，图会变吗？"},
    "ask-survive-title": {"en": "Predict: will the answer survive?", "zh": "预测：答案还能保住吗？"},
    "ask-no-classifier": {
        "en": "This model has no classifier (a backbone): there is no class to ask about. Next →",
        "zh": "这个模型没有分类头（一个 backbone）：没有类别可问。下一步 →"},
    "ask-no-classifier-refusal": {
        "en": "This model has no classifier (a backbone): there is no class to ask about.",
        "zh": "这个模型没有分类头（一个 backbone）：没有类别可问。"},
    # A typed guess that is no answer (an empty box, 2.5, -1, 65): said beside the box, the guess kept in it.
    "guess-whole": {"en": "Type a whole number from {lo} to {hi} in the box.",
                    "zh": "请在框里输入 {lo} 到 {hi} 之间的整数。"},
    "guess-whole-from": {"en": "Type a whole number, {lo} or more, in the box.",
                         "zh": "请在框里输入一个不小于 {lo} 的整数。"},
    "guess-yes-no": {"en": "Answer with Yes or No.", "zh": "请回答“是”或“否”。"},
    "ask-tokens": {
        "en": "The image is {H}×{W} px, cut into patches of P = {P} px. **How many tokens does the encoder see at "
              "P = {P}?** Type a number, then check.",
        # Bold ends before the full-width "？": a closing ** between CJK punctuation and a character is no
        # closing delimiter for a CommonMark parser (the page showed the asterisks).
        "zh": "图像是 {H}×{W} 像素，切成 P = {P} 像素的 patch。**在 P = {P} 时，encoder 看到多少个 token**？"
              "输入一个数字，然后检查。"},
    "ask-layer": {
        "en": "The model runs L = {L} blocks and finally says **{label}**. Reading the class token after every "
              "block (an early exit): **at which layer does “{label}” first become the top-1?** A number from 1 "
              "to {L}.",
        "zh": "模型运行 L = {L} 个 block，最后说 **{label}**。在每个 block 之后读取 class token（early exit）："
              "**“{label}” 从哪一层开始第一次成为 top-1？** 输入 1 到 {L} 之间的数字。"},
    "ask-patch": {
        "en": "The grid has N = {N} patches. **Click the patch the class token draws most from at the last layer** "
              "(attention rollout through all {L} layers). Your own drawing works too: with Draw, on the shapes "
              "model, draw a heart and a circle; which one does the class token read?",
        "zh": "网格有 N = {N} 个 patch。**点击 class token 在最后一层从中取得最多信息的那个 patch**"
              "（经过全部 {L} 层的 attention rollout）。也可以用你自己的画：勾选“画”，在 shapes 模型上画一颗心和一个"
              "圆；class token 读的是哪一个？"},
    "ask-runner_up": {
        "en": "{at}: this is attention rollout for **{label}**, through layers 1 to {layer}. **Will this map change "
              "if we ask about the runner-up class, {second}?** Yes or no.",
        "zh": "{at}：这是 **{label}** 的 attention rollout，经过第 1 到第 {layer} 层。**如果改问第二名的类别 "
              "{second}，这张图会变吗？** 是或否。"},
    "another-class": {"en": "another class", "zh": "另一个类别"},
    "ask-survive": {
        "en": "The model says “{label}”. Hatched: the top {share:.0%} of the patches by rollout through all {L} "
              "layers ({n} of {N}). **If we remove them, will the model still say “{label}” on the {left} patch "
              "tokens left?** Yes or no.",
        "zh": "模型说“{label}”。斜线标出的是经过全部 {L} 层的 rollout 排名前 {share:.0%} 的 patch（{N} 个中的 "
              "{n} 个）。**如果去掉它们，模型在剩下的 {left} 个 patch token 上还会说“{label}”吗？** 是或否。"},
    "cell": {"en": "row {row}, column {col} (token {token})", "zh": "第 {row} 行，第 {col} 列（token {token}）"},
    "layer-n": {"en": "layer {n}", "zh": "第 {n} 层"},
    "yes": {"en": "yes", "zh": "是"},
    "no": {"en": "no", "zh": "否"},
    "why-tokens": {
        "en": "{rows}×{cols} patches of {P} px: N = {N} patch tokens + {prefix} = **{T}** tokens, each of D = {D} "
              "numbers.",
        "zh": "{rows}×{cols} 个 {P} 像素的 patch：N = {N} 个 patch token + {prefix} = **{T}** 个 token，每个 "
              "D = {D} 维。"},
    "why-layer": {
        "en": "The early exits: after layer {first} the class token first reads as **{label}** ({first_prob:.1%}); "
              "after layer {n} it read as {said} ({said_prob:.1%}). The plot shows the final class's probability "
              "after every layer.",
        "zh": "Early exit：第 {first} 层之后，class token 第一次读作 **{label}**（{first_prob:.1%}）；第 {n} 层之后"
              "它读作 {said}（{said_prob:.1%}）。图中显示最终类别在每一层之后的概率。"},
    "why-patch": {
        "en": "Your patch (outlined on the rollout) ranks **{rank} of {N}** by rollout (1 = the class token draws "
              "most from it; right: among the top {top}). The most: {best}.",
        "zh": "你的 patch（在 rollout 上框出）按 rollout 排在 **{N} 个中的第 {rank}**（1 = class token 从中取得最多；"
              "前 {top} 名算对）。最多的是：{best}。"},
    "why-runner_up": {
        "en": "Rollout multiplies the attention maps only; no class enters it, so the runner-up's map is this very "
              "map. {others} weigh by the gradient of the class's score: their maps change with the class (in "
              "“Why this class?”).",
        "zh": "Rollout 只把各层的 attention 图相乘；其中没有任何类别，所以第二名的图就是这张图。{others} 按类别分数的"
              "梯度加权：它们的图会随类别变化（见“为什么是这个类别？”）。"},
    "and": {"en": " and ", "zh": " 和 "},
    "why-survive": {
        "en": "On the {kept} patch tokens left, p({label}): {before:.1%} → **{after:.1%}**; the model now says "
              "“{now}” ({now_prob:.1%}).",
        "zh": "在剩下的 {kept} 个 patch token 上，p({label})：{before:.1%} → **{after:.1%}**；模型现在说"
              "“{now}”（{now_prob:.1%}）。"},
    "right": {"en": "✓ right", "zh": "✓ 答对了"},
    "not-right": {"en": "✗ not this time", "zh": "✗ 这次没对"},
    "reveal": {"en": "**{title}** · your guess: **{guess}** · the answer: **{answer}** · {mark}\n\n{why}",
               "zh": "**{title}** · 你的猜测：**{guess}** · 答案：**{answer}** · {mark}\n\n{why}"},
    "tally-none": {"en": "Right so far: none asked yet.", "zh": "目前答对：还没有提问。"},
    "tally": {"en": "Right so far: **{right} of {asked}**.", "zh": "目前答对：**{asked} 题中的 {right} 题**。"},
}
