"""AttnLRP: layer-wise relevance propagation through attention, as the model's own forward and one backward pass.

Achtibat et al. 2024, "AttnLRP: Attention-Aware Layer-Wise Relevance Propagation for Transformers" (ICML). With
relevance as input x gradient, each rule changes the gradient alone; the forward value is the plain output, bit
for bit. LayerNorm: std held constant; GELU: the identity rule; attention: the uniform rule (q, k quartered, v
halved; the softmax's is its plain gradient, Prop. 3.1); linear layers and sums: epsilon, the plain gradient.
Relevance is read at the patch tokens, not the pixels (why: docs/explanations.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import Tensor, nn

from vit.model.hubmodules import QuickGELU
from vit.model.modules import ScaledDotProductAttention

QK_SHARE, V_SHARE = 0.25, 0.5  # the uniform rule of softmax(q kᵀ) v: two matmuls for q and k, one for v


def same_value(value: Tensor, surrogate: Tensor) -> Tensor:
    """``value`` in the forward pass, ``surrogate``'s gradient in the backward (x - x is exactly 0)."""
    return value.detach() + (surrogate - surrogate.detach())


def scaled_gradient(x: Tensor, share: float) -> Tensor:
    """``x``, its gradient multiplied by ``share``."""
    return same_value(x, x * share)


def _layer_norm(norm: nn.LayerNorm, args: tuple, output: Tensor) -> Tensor:
    x = args[0]
    centred = x - x.mean(dim=-1, keepdim=True)
    std = (centred.pow(2).mean(dim=-1, keepdim=True) + norm.eps).sqrt().detach()  # held constant
    y = centred / std
    if norm.weight is not None:
        y = y * norm.weight + norm.bias if norm.bias is not None else y * norm.weight
    return same_value(output, y)


def _identity(_act: nn.Module, args: tuple, output: Tensor) -> Tensor:
    x = args[0]
    ratio = output / torch.where(x == 0, torch.ones_like(x), x)  # gelu(x)/x; its limit at 0 is 1/2
    ratio = torch.where(x == 0, torch.full_like(x, 0.5), ratio).detach()
    return same_value(output, x * ratio)


def _attention(_attend: nn.Module, args: tuple) -> tuple:
    q, k, v, *rest = args
    return (scaled_gradient(q, QK_SHARE), scaled_gradient(k, QK_SHARE), scaled_gradient(v, V_SHARE), *rest)


@contextmanager
def rules(model: nn.Module) -> Iterator[None]:
    """While open, ``model``'s backward pass propagates AttnLRP's relevance (its forward is unchanged)."""
    handles = []
    for module in model.modules():
        if isinstance(module, nn.LayerNorm):
            handles.append(module.register_forward_hook(_layer_norm))
        elif isinstance(module, (nn.GELU, QuickGELU)):
            handles.append(module.register_forward_hook(_identity))
        elif isinstance(module, ScaledDotProductAttention):
            handles.append(module.register_forward_pre_hook(_attention))
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


@contextmanager
def patch_tokens(model: nn.Module) -> Iterator[list[Tensor]]:
    """While open, each output of ``model.embedding.patch_embed`` (B, N, D) is made a leaf that keeps its gradient
    and appended to the yielded list: where relevance is read."""
    kept: list[Tensor] = []

    def leaf(_module, _args, output: Tensor) -> Tensor:
        kept.append(output.detach().requires_grad_())
        return kept[-1]

    handle = model.embedding.patch_embed.register_forward_hook(leaf)
    try:
        yield kept
    finally:
        handle.remove()


def token_relevance(tokens: Tensor, grad: Tensor) -> Tensor:
    """Input x gradient summed over the features: (1, N, D) twice -> (N,), float32, row-major."""
    return (tokens.detach().float() * grad.float()).sum(dim=-1)[0]
