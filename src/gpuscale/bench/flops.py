"""Training FLOPs per sample: ``torch.utils.flop_counter`` with formulas for the ops it
misses or miscounts (torch 2.13), passed as its ``custom_mapping``.

Convention (model FLOPs, as MFU is defined in PaLM, Chowdhery et al. 2022, app. B): a
multiply-add is 2 FLOPs; matrix multiplications, convolutions, attention's two batched
products and recurrent layers' gate products are counted; element-wise work (softmax,
activations, norms, the optimizer) is not; recomputation is not (a kernel that recomputes
the attention scores in backward is counted as if it kept them). Backward counts what
runs: the weight gradient of every layer and the input gradient of every layer whose
input needs one (not the first layer's, whose input is data).

What the stock counter gets wrong, and the formula used here:

* ``convolution_backward`` ignores ``groups`` in the weight-gradient term: a
  depthwise convolution's weight gradient counted ``C_in`` times too high. Here:
  weight gradient = 2 * B * prod(out spatial) * C_out * (C_in / groups) * prod(kernel),
  the forward's own count.
* ``_scaled_dot_product_flash_attention_for_cpu`` and its backward (attention on CPU)
  are not counted at all. Here: forward 2 * B * H * S_q * S_k * (D_qk + D_v), backward
  twice that (dQ, dK, dV and dP: four products).
* The GPU attention backward ops (flash, memory-efficient, cuDNN) are counted with the
  recomputed score product (2.5x forward, hardware FLOPs). Here: 2x forward, as above,
  so the CPU and GPU counts agree and MFU uses model FLOPs.
* Recurrent layers run as one fused op on CPU (``mkldnn_rnn_layer``, LSTM) and on GPU
  (``_cudnn_rnn``, every RNN): not counted. Here: forward 2 * tokens * (weights of the
  layer's gate matrices), backward twice that. (GRU and plain RNN on CPU decompose into
  ``addmm``/``mm``, which the counter sees.)

Causal attention is counted as full attention (PaLM's 12 L H Q T counts it so too).
Ops that look like dense work (names with mm, conv, attention, rnn, lstm, gru, linear,
einsum) and ran without a formula are listed in :attr:`FlopCount.uncounted_ops`: the
count leaves them out, and the bench row says so (``flops_uncounted_ops``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode, conv_flop_count, flop_registry

if TYPE_CHECKING:
    from torch._ops import OpOverloadPacket

aten = torch.ops.aten
Shape = Sequence[int]


def attention_flops(query: Shape, key: Shape, value: Shape) -> int:
    """Forward FLOPs of softmax(Q K^T) V for shapes (B, H, S, D); grouped-query K/V
    (fewer heads) are broadcast to the query's heads, as the kernels do."""
    b, h, s_q, d_qk = query[-4:] if len(query) == 4 else (1, *query[-3:])
    s_k, d_v = key[-2], value[-1]
    return 2 * b * h * s_q * s_k * (d_qk + d_v)


def _attention(
    query: Shape,
    key: Shape,
    value: Shape,
    *args: object,
    out_shape: object = None,
    **kwargs: object,
) -> int:
    return attention_flops(query, key, value)


def _attention_backward(
    grad_out: Shape,
    query: Shape,
    key: Shape,
    value: Shape,
    *args: object,
    out_shape: object = None,
    **kwargs: object,
) -> int:
    return 2 * attention_flops(query, key, value)


def _conv_backward(
    grad_out: Shape,
    x: Shape,
    w: Shape,
    _bias: object,
    _stride: object,
    _padding: object,
    _dilation: object,
    transposed: bool,
    _output_padding: object,
    groups: int,
    output_mask: Sequence[bool],
    out_shape: Sequence[Shape] | None = None,
    **kwargs: object,
) -> int:
    """Input gradient as the stock counter (a transposed convolution of the output
    gradient, right with groups) plus the weight gradient with groups: as many FLOPs
    as the forward convolution."""
    flops = 0
    if output_mask[0]:
        flops += conv_flop_count(list(grad_out), list(w), list(out_shape[0]), not transposed)
    if output_mask[1]:
        flops += conv_flop_count(list(x), list(w), list(grad_out), transposed)
    return flops


def _rnn_flops(input_shape: Shape, weights: Sequence[Shape]) -> int:
    """2 x tokens x the gate matrices' weights (every 2-D weight: input, hidden and
    projection matrices; biases are element-wise). Tokens = all leading dimensions of
    the input (time x batch, or the packed length)."""
    tokens = math.prod(input_shape[:-1])
    return 2 * tokens * sum(math.prod(w) for w in weights if len(w) == 2)


def _mkldnn_rnn(
    input_shape: Shape,
    w0: Shape,
    w1: Shape,
    *args: object,
    out_shape: object = None,
    **kwargs: object,
) -> int:
    return _rnn_flops(input_shape, [w0, w1])


def _mkldnn_rnn_backward(
    input_shape: Shape,
    w1: Shape,
    w2: Shape,
    *args: object,
    out_shape: object = None,
    **kwargs: object,
) -> int:
    return 2 * _rnn_flops(input_shape, [w1, w2])


def _cudnn_rnn(
    input_shape: Shape,
    weights: Sequence[Shape],
    *args: object,
    out_shape: object = None,
    **kwargs: object,
) -> int:
    return _rnn_flops(input_shape, weights)


def _cudnn_rnn_backward(
    input_shape: Shape,
    weights: Sequence[Shape],
    *args: object,
    out_shape: object = None,
    **kwargs: object,
) -> int:
    mask = args[-1] if args else (True, True, True, True)  # output_mask, the last argument
    return _rnn_flops(input_shape, weights) * (2 if mask[3] else 1)


# op packet -> formula on shapes (the counter's ``custom_mapping``)
FORMULAS: dict[OpOverloadPacket, Callable[..., int]] = {
    aten.convolution_backward: _conv_backward,
    aten._scaled_dot_product_flash_attention_for_cpu: _attention,
    aten._scaled_dot_product_flash_attention_for_cpu_backward: _attention_backward,
    aten._scaled_dot_product_flash_attention: _attention,
    aten._scaled_dot_product_efficient_attention: _attention,
    aten._scaled_dot_product_cudnn_attention: _attention,
    aten._scaled_dot_product_flash_attention_backward: _attention_backward,
    aten._scaled_dot_product_efficient_attention_backward: _attention_backward,
    aten._scaled_dot_product_cudnn_attention_backward: _attention_backward,
    aten.mkldnn_rnn_layer: _mkldnn_rnn,
    aten.mkldnn_rnn_layer_backward: _mkldnn_rnn_backward,
    aten._cudnn_rnn: _cudnn_rnn,
    aten._cudnn_rnn_backward: _cudnn_rnn_backward,
}

_DENSE = re.compile(r"mm|conv|attention|rnn|lstm|gru|linear|einsum|matmul")
_COUNTED = {*flop_registry, *FORMULAS}


class _OpsRun(TorchDispatchMode):
    """Records the ops that actually execute (entered outside the counter, it sees
    what the counter ran after its decompositions)."""

    def __init__(self) -> None:
        super().__init__()
        self.packets: set[OpOverloadPacket] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        self.packets.add(func._overloadpacket)
        return func(*args, **(kwargs or {}))


@dataclass(frozen=True, slots=True)
class FlopCount:
    """FLOPs counted, by op name, and the dense-looking ops that ran uncounted."""

    total: int
    by_op: dict[str, int]
    uncounted_ops: tuple[str, ...]


def count(step: Callable[[], object]) -> FlopCount:
    """Run ``step`` (a forward and backward) under the counter with :data:`FORMULAS`."""
    seen = _OpsRun()
    with seen, FlopCounterMode(display=False, custom_mapping=FORMULAS) as counter:
        step()
    by_op = {
        str(op).removeprefix("aten."): int(n)
        for op, n in counter.get_flop_counts().get("Global", {}).items()
    }
    uncounted = sorted(
        str(p).removeprefix("aten.")
        for p in seen.packets
        if p not in _COUNTED and _DENSE.search(str(p).removeprefix("aten."))
    )
    return FlopCount(int(counter.get_total_flops()), by_op, tuple(uncounted))
