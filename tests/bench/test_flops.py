"""Training FLOPs per sample against hand counts from the layer shapes.

Every expected figure below is arithmetic on the shapes written in the test (2 FLOPs per
multiply-add; forward F, weight gradients F, input gradients F except where the input
is data that needs no gradient); none calls a counter formula. Element-wise work
(activations, norms, softmax, gate non-linearities) is not counted, by the convention of
:mod:`gpuscale.bench.flops`.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from gpuscale.bench.flops import count  # noqa: E402

B = 4  # samples


def per_sample(module: nn.Module, x: torch.Tensor) -> tuple[float, tuple[str, ...]]:
    def step() -> None:
        out = module(x)
        out = out[0] if isinstance(out, tuple) else out
        out.float().pow(2).sum().backward()

    counted = count(step)
    return counted.total / x.shape[0], counted.uncounted_ops


def test_mlp() -> None:
    model = nn.Sequential(
        nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 48), nn.GELU(), nn.Linear(48, 10)
    )
    flops, uncounted = per_sample(model, torch.randn(B, 32))
    forward = 2 * (32 * 64 + 64 * 48 + 48 * 10)
    weight_grads = forward
    input_grads = 2 * (64 * 48 + 48 * 10)  # not the first layer's: its input is data
    assert flops == pytest.approx(forward + weight_grads + input_grads, rel=0.01)
    assert uncounted == ()


def test_transformer_block_with_attention_on_cpu() -> None:
    """The CPU SDPA kernel (``_scaled_dot_product_flash_attention_for_cpu``) and its
    backward are counted: torch 2.13's counter alone is 6.7% low on this block."""
    d, heads, ff, seq = 64, 4, 128, 16
    block = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True)
    flops, uncounted = per_sample(block, torch.randn(B, seq, d))
    linear_weights = 3 * d * d + d * d + d * ff + ff * d  # in-proj, out-proj, FF
    forward = 2 * seq * linear_weights + 2 * (2 * seq * seq * d)  # + Q K^T and P V
    weight_grads = 2 * seq * linear_weights
    input_grads = 2 * seq * (linear_weights - 3 * d * d)  # in-proj's input is the data
    attention_backward = 4 * (2 * seq * seq * d)  # dP, dV, dQ, dK
    assert flops == pytest.approx(
        forward + weight_grads + input_grads + attention_backward, rel=0.01
    )
    assert uncounted == ()


def test_depthwise_separable_cnn() -> None:
    """torch 2.13's counter ignores groups in the weight gradient: the depthwise
    layers' gradients counted C_in times too high (3x overall on such a net)."""
    hw = 16 * 16
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1, bias=False),
        nn.ReLU(),
        nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False),  # depthwise
        nn.Conv2d(32, 64, 1, bias=False),  # pointwise
        nn.ReLU(),
        nn.Conv2d(64, 64, 3, padding=1, groups=64, bias=False),
        nn.Conv2d(64, 128, 1, bias=False),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(128, 10),
    )
    flops, uncounted = per_sample(model, torch.randn(B, 3, 16, 16))
    # per layer: 2 x output positions x C_out x (C_in / groups) x kernel
    stem = 2 * hw * 32 * 3 * 9
    rest = [
        2 * hw * 32 * 1 * 9,
        2 * hw * 64 * 32,
        2 * hw * 64 * 1 * 9,
        2 * hw * 128 * 64,
        2 * 128 * 10,
    ]
    expected = 2 * stem + 3 * sum(rest)  # the stem needs no input gradient
    assert flops == pytest.approx(expected, rel=0.01)
    assert uncounted == ()


def test_grouped_convolution_and_its_transpose() -> None:
    model = nn.Sequential(
        nn.Conv2d(8, 16, 3, padding=1, bias=False),
        nn.Conv2d(16, 32, 3, padding=1, groups=4, bias=False),
        nn.ConvTranspose2d(32, 16, 2, stride=2, groups=4, bias=False),
    )
    flops, _ = per_sample(model, torch.randn(B, 8, 8, 8))
    first = 2 * 64 * 16 * 8 * 9
    grouped = 2 * 64 * 32 * (16 // 4) * 9
    # transposed: every input position times C_in x (C_out / groups) x kernel
    transposed = 2 * 64 * 32 * (16 // 4) * 4
    assert flops == pytest.approx(2 * first + 3 * grouped + 3 * transposed, rel=0.01)


def test_lstm_fused_on_cpu_is_counted() -> None:
    """nn.LSTM on CPU runs as one fused ``mkldnn_rnn_layer`` per layer, which torch's
    counter does not count (0 FLOPs): counted here as 2 x tokens x gate weights."""
    seq, inputs, hidden = 12, 24, 40
    model = nn.Sequential(
        nn.Linear(inputs, inputs), nn.LSTM(inputs, hidden, num_layers=2, batch_first=True)
    )
    flops, uncounted = per_sample(model, torch.randn(B, seq, inputs))
    linear = 2 * seq * inputs * inputs * 2  # forward and weight gradient (input is data)
    layer1 = 2 * seq * 4 * hidden * (inputs + hidden)  # four gates: [x, h] @ W^T
    layer2 = 2 * seq * 4 * hidden * (hidden + hidden)
    assert flops == pytest.approx(linear + 3 * (layer1 + layer2), rel=0.01)
    assert uncounted == ()


def test_gru_decomposed_on_cpu_is_counted() -> None:
    """nn.GRU on CPU decomposes into addmm/mm per step, which the counter sees; the
    first step's hidden-state gradient is not computed (h0 needs none)."""
    seq, inputs, hidden = 10, 24, 32
    model = nn.Sequential(nn.Linear(inputs, inputs), nn.GRU(inputs, hidden, batch_first=True))
    flops, uncounted = per_sample(model, torch.randn(B, seq, inputs))
    linear = 2 * seq * inputs * inputs * 2
    x_part = 2 * seq * 3 * hidden * inputs  # three gates
    h_part = 2 * seq * 3 * hidden * hidden
    h_input_grads = 2 * (seq - 1) * 3 * hidden * hidden
    expected = linear + 3 * x_part + 2 * h_part + h_input_grads
    assert flops == pytest.approx(expected, rel=0.01)
    assert uncounted == ()


@pytest.mark.parametrize(
    "op",
    [
        "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_efficient_attention",
        "_scaled_dot_product_cudnn_attention",
    ],
)
def test_gpu_attention_kernels_count_model_flops(op: str) -> None:
    """The GPU kernels, run on meta tensors (shapes only): forward as the CPU kernel;
    backward 2x forward (the stock counter adds the recomputed scores: 2.5x)."""
    aten = torch.ops.aten
    b, h, s_q, s_k, d = 2, 4, 16, 32, 8
    q = torch.empty(b, h, s_q, d, device="meta")
    k, v = torch.empty(b, h, s_k, d, device="meta"), torch.empty(b, h, s_k, d, device="meta")
    args = (q, k, v) if op == "_scaled_dot_product_flash_attention" else (q, k, v, None, True)
    forward = count(lambda: getattr(aten, op)(*args))
    assert forward.total == 2 * b * h * s_q * s_k * d * 2
    if op == "_scaled_dot_product_flash_attention":
        out, lse, cq, ck, mq, mk, seed, offset, _ = getattr(aten, op)(q, k, v)
        backward = count(
            lambda: aten._scaled_dot_product_flash_attention_backward(
                torch.empty_like(out), q, k, v, out, lse, cq, ck, mq, mk, 0.0, False, seed, offset
            )
        )
        assert backward.total == 4 * (2 * b * h * s_q * s_k * d)


def test_cudnn_rnn_formula_from_weight_shapes() -> None:
    """``_cudnn_rnn`` (every nn.LSTM/GRU/RNN on GPU) cannot run here; its formula on the
    shapes of a 2-layer LSTM with biases, as cuDNN receives them."""
    from gpuscale.bench.flops import FORMULAS

    aten = torch.ops.aten
    seq, batch, inputs, hidden = 7, 3, 16, 20
    weights = [[80, 16], [80, 20], [80], [80], [80, 20], [80, 20], [80], [80]]
    forward = FORMULAS[aten._cudnn_rnn]([seq, batch, inputs], weights)
    expected = 2 * seq * batch * 4 * hidden * ((inputs + hidden) + (hidden + hidden))
    assert forward == expected
    mask = [True, True, True, True]
    backward = FORMULAS[aten._cudnn_rnn_backward](
        [seq, batch, inputs], weights, 4, *[None] * 18, mask
    )
    assert backward == 2 * expected


def test_dense_ops_without_a_formula_are_named() -> None:
    """An int8 matmul (``_int_mm``) has no formula: the count leaves it out and says so."""
    a = torch.randint(-4, 4, (32, 64), dtype=torch.int8)
    b = torch.randint(-4, 4, (64, 32), dtype=torch.int8)
    counted = count(lambda: torch._int_mm(a, b))
    assert counted.total == 0
    assert counted.uncounted_ops == ("_int_mm",)


def test_the_bench_row_names_what_was_not_counted() -> None:
    from gpuscale.bench.results import bench_table

    from ..builders import bench_record

    record = bench_record("mlp-1m", 1_000_000, 1, 100.0, flops_per_sample=6e6)
    record["flops"]["uncounted_ops"] = ["_int_mm"]
    plain = bench_record("mlp-2m", 2_000_000, 1, 100.0, flops_per_sample=6e6)
    table = bench_table([record, plain]).set_index("model")
    assert table.loc["mlp-1m", "flops_uncounted_ops"] == "_int_mm"
    assert table.loc["mlp-2m", "flops_uncounted_ops"] == ""
