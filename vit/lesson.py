"""A guided walk through chapter 11.4 (sections 11.4.1 to 11.4.7), one picture per step.

Each :class:`LessonStep` quotes or paraphrases the chapter briefly and names the
picture to show (an element id of the app); :func:`lesson_text` fills in this
image's numbers: the shapes, N, D, h, L, the residual norms, the answer.
Pure and Gradio-free: an :class:`vit.Analysis` in, markdown out.
"""

from __future__ import annotations

from dataclasses import dataclass

from vit import validate

LANGUAGES = ("en",)  # the lesson's text; issue 25 part 2 adds "zh" (one message catalogue)
LESSON_VIEWS = ("patch-grid", "stage-table", "block-view", "block-code", "matrix-view", "rollout-view",
                "head-views", "layer-views", "depth-plot", "lens-view")  # the app's elem ids a step may show


@dataclass(frozen=True)
class LessonStep:
    section: str  # "11.4.1"
    title: str
    chapter: str  # the chapter's sentence or equation, briefly
    view: str  # which picture to show: one of LESSON_VIEWS


LESSON: list[LessonStep] = [
    LessonStep("11.4.1", "Input: a sequence of tokens",
               "Z₀ ∈ ℝ^(B×(N+1)×D): N patch tokens and 1 class token.", "patch-grid"),
    LessonStep("11.4.1", "Output: the same shape",
               "The encoder changes neither the number of tokens nor their dimension: "
               "(B, N+1, D) → (B, N+1, D). What it changes is the content of each token.", "stage-table"),
    LessonStep("11.4.2", "An encoder, not a decoder",
               "Classification is not autoregressive: every patch may attend to every other, "
               "so no causal mask is needed.", "matrix-view"),
    LessonStep("11.4.3", "One block: H = X + MSA(LN(X)), Y = H + MLP(LN(H))",
               "Pre-norm: layer norm before attention and before the MLP; each adds to the stream. "
               "Attention mixes along the tokens, the MLP along the features.", "block-view"),
    LessonStep("11.4.3.1", "Self-attention: patches interact directly",
               "Each head compares queries with keys, softmax(QKᵀ/√d), and mixes the values.", "head-views"),
    LessonStep("11.4.4", "Implementing the encoder block",
               "attn_input = self.norm1(x); attn_output, _ = self.attn(attn_input, attn_input, attn_input); "
               "x = x + self.dropout1(attn_output); x = x + self.mlp(self.norm2(x))", "block-code"),
    LessonStep("11.4.5", "Stacking blocks",
               "Z_ℓ = EncoderBlock_ℓ(Z_ℓ₋₁), ℓ = 1, …, L: representations are built layer by layer.",
               "layer-views"),
    LessonStep("11.4.5", "What the tokens now contain",
               "After several layers each token fuses information from other patches and becomes a "
               "context-aware representation.", "lens-view"),
    LessonStep("11.4.6", "From the class token to the class",
               "z_cls = Z_L[:, 0, :], logits = Linear(z_cls): shape (B, K).", "depth-plot"),
    LessonStep("11.4.7", "Input module, encoder, head: the whole path",
               "Image → tokens with class token and positions → encoder → class token → logits.",
               "rollout-view"),
]


def _numbers(a) -> dict:
    D = int(a.queries[0].shape[-1])
    hidden = next((s.shape for s in a.stages if s.name.endswith("MLP hidden")), None)
    return {"N": a.num_patches, "T": a.num_tokens, "D": D, "h": a.num_heads, "L": a.depth, "d": D // a.num_heads,
            "K": int(a.probs.shape[0]), "P": a.patch_size, "rows": a.grid[0], "cols": a.grid[1],
            "H": a.input_size[0], "W": a.input_size[1], "hidden": tuple(hidden) if hidden else (1, a.num_tokens, 4 * D)}


def prefix_words(names) -> str:
    """"1 class token", or "5 prefix tokens (class, register 1, ...)" for DeiT's and the registers' models."""
    return "1 class token" if len(names) == 1 else f"{len(names)} prefix tokens ({', '.join(names)})"


def _detail(step: LessonStep, a, n: dict) -> str:
    top = a.topk[0] if a.topk else None
    shape = f"(1, {n['T']}, {n['D']})"
    if top is None and step.view in ("lens-view", "depth-plot"):
        return ("This model has no classifier (a backbone): there are no class scores to read, at the end or "
                "on the way. Choose a model with a head to see this step's numbers.")
    if step.view == "patch-grid":
        return (f"Here: a {n['H']}×{n['W']} image in {n['rows']}×{n['cols']} patches of {n['P']} px, so "
                f"N = {n['N']} patch tokens + {prefix_words(a.prefix_token_names)} = {n['T']} tokens of "
                f"D = {n['D']} numbers: Z₀ has shape **{shape}** (B = 1).")
    if step.view == "stage-table":
        return (f"Read the table: every layer's output is **{shape}**, from layer 1 to L = {n['L']}; only the MLP's "
                f"hidden layer is wider, {n['hidden']} (4D = {4 * n['D']}), and back to D inside the block.")
    if step.view == "matrix-view":
        return (f"One head's attention here is a {n['T']}×{n['T']} matrix: all {n['T']} tokens look at all "
                f"{n['T']}. A decoder's causal mask would remove the upper triangle.")
    if step.view == "block-view":
        r = a.residual()[-1]
        return (f"In numbers, layer {r.layer}: ‖X‖ {r.stream:.1f} → attention adds {r.attention:.1f}, "
                f"MLP adds {r.mlp:.1f} → ‖Y‖ {r.output:.1f} (means over the {n['T']} tokens).")
    if step.view == "block-code":
        r = a.residual()[-1]
        return (f"The same four lines run in each of the L = {n['L']} blocks. Here, layer {r.layer}: x comes in as "
                f"{shape} with ‖X‖ {r.stream:.1f}; attention's {n['h']} heads add {r.attention:.1f}, the MLP "
                f"(hidden {n['hidden']}) adds {r.mlp:.1f}; x leaves as {shape}, ‖Y‖ {r.output:.1f}.")
    if step.view == "head-views":
        return (f"h = {n['h']} heads, each with d = D/h = {n['D']}/{n['h']} = {n['d']} dimensions: the weights "
                f"are (1, {n['h']}, {n['T']}, {n['T']}). The tiles show the class token's row in each head.")
    if step.view == "layer-views":
        return (f"L = {n['L']} blocks, each {shape} → {shape}; the tiles show where the class token looks at "
                f"each depth.")
    if step.view == "lens-view":
        agree = int((a.lens_index[-1] == top.index).sum()) if a.lens_index is not None else 0
        return (f"Applying the final norm and head to every patch token of layer {n['L']}: "
                f"{agree} of {n['N']} patches already read as **{top.label}**.")
    if step.view == "depth-plot":
        return (f"Here z_cls, the class token after the encoder's final LayerNorm (ViTEncoder.norm), has shape "
                f"(1, {n['D']}), the logits (1, {n['K']}); the answer is **{top.label}** "
                f"with probability {top.prob:.1%}. The plot reads the class token after every layer.")
    if step.view == "rollout-view" and top is None:
        return (f"The whole path: (1, 3, {n['H']}, {n['W']}) → {shape} → {n['L']} blocks → {shape}; this model "
                f"stops there (no classifier). Rollout estimates how much of each patch reached the class token.")
    if step.view == "rollout-view":
        return (f"The whole path: (1, 3, {n['H']}, {n['W']}) → {shape} → {n['L']} blocks → {shape} → "
                f"z_cls (1, {n['D']}) → logits (1, {n['K']}) → **{top.label}** ({top.prob:.1%}). Rollout "
                f"estimates how much of each patch reached the class token.")
    raise ValueError(f"expected a view among {', '.join(LESSON_VIEWS)}, got {step.view!r}")


def language(lang: str) -> str:
    """The lesson's language, checked: one of :data:`LANGUAGES`."""
    return validate.choice("lang", lang, LANGUAGES)


def lesson_text(step: LessonStep, a, lang: str = "en") -> str:
    """Markdown for one step in ``lang``: the section, the chapter's words, and this image's numbers."""
    language(lang)
    return f"**{step.section} {step.title}**\n\n> {step.chapter}\n\n{_detail(step, a, _numbers(a))}"
