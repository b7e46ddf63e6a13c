"""A transformer's shape (``gpuscale.hardware.transformer``): the presets' parameters
against the counts their sources state, the FLOPs against published model-FLOPs figures,
the activations against Korthikanti et al.'s formula worked by hand, and shapes that
cannot be refused."""

from __future__ import annotations

import pytest

from gpuscale.hardware import transformer
from gpuscale.hardware.transformer import (
    activations,
    flops_per_sample,
    flops_per_token,
    layer_params,
    of_numbers,
    params,
    presets,
    sources,
)


@pytest.mark.parametrize("name", sorted(presets()))
def test_each_preset_counts_the_parameters_its_source_states(name: str) -> None:
    """The count from the shape agrees with the figure the model card or paper states
    (three significant digits there: 8.03B, 70.6B; GPT-2 XL's paper rounds 1,557.6M of
    the released weights to 1,542M, 1.0% below), and each row's source is cited."""
    shape = presets()[name]
    assert shape.params_stated is not None
    assert params(shape) == pytest.approx(shape.params_stated, rel=0.012)
    assert shape.source in sources()
    assert sources()[shape.source].url.startswith("https://")


def test_exact_counts_of_released_weights() -> None:
    """Two counts of released checkpoints: Meta-Llama-3-8B's safetensors hold
    8,030,261,248 parameters, openai-community/gpt2-xl's 1,557,611,200 (without the
    attention-mask buffers)."""
    assert params(presets()["llama3-8b"]) == 8_030_261_248
    assert params(presets()["gpt2-xl"]) == 1_557_611_200


def test_a_layer_is_one_fsdp_unit_of_the_layers_parameters() -> None:
    """Llama 3 8B's layer by hand: q and o 4,096^2 each, k and v 4,096 x 1,024 each (8
    key-value heads of 128), the gated feed-forward 3 x 4,096 x 14,336, two RMSNorms of
    4,096."""
    by_hand = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096
    assert by_hand == 218_112_000
    assert layer_params(presets()["llama3-8b"]) == by_hand


# NVIDIA NeMo Framework 24.12, performance summary (pre-training, Megatron's model FLOPs):
# model TFLOP/s per GPU over tokens/s per GPU is the FLOPs it counts per token
# https://docs.nvidia.com/nemo-framework/user-guide/24.12/nemotoolkit/performance/performance_summary.html
NEMO_24_12 = {  # preset: (sequence, tokens/s/GPU, model TFLOP/s/GPU)
    "llama3-8b": (8192, 12_273, 711),
    "llama3-70b": (8192, 1_524, 734),
    "llama2-7b": (4096, 16_934, 780),
}


@pytest.mark.parametrize("name", sorted(NEMO_24_12))
def test_flops_per_token_are_the_published_model_flops(name: str) -> None:
    """FLOPs per token with attention at the published sequence agree with NeMo's model
    FLOPs per token to the rounding of its three-digit TFLOP/s (0.1%; the same count,
    PaLM's 6 N + 12 L h s, with N the parameters that multiply activations)."""
    seq, tokens_per_s, tflops = NEMO_24_12[name]
    shape = presets()[name].at(seq)
    published = tflops * 1e12 / tokens_per_s
    assert flops_per_token(shape) == pytest.approx(published, rel=2e-3)


def test_llama3_8b_at_8192_tokens_a_sample() -> None:
    """A sample is a sequence: 8,192 tokens of Llama 3 8B's 57.9 GFLOPs each, 4.74e14;
    6 N alone (4.82e14 counting the embedding lookup, 4.50e14 without) misses the
    attention's 12 L h s, 22% of the FLOPs at this sequence."""
    shape = presets()["llama3-8b"]
    assert shape.seq_len == 8192
    assert flops_per_sample(shape) == pytest.approx(711e12 / 12_273 * 8192, rel=2e-3)
    assert transformer.attention_share(shape) == pytest.approx(
        12 * 32 * 4096 * 8192 / flops_per_token(shape)
    )
    assert 0.2 < transformer.attention_share(shape) < 0.25


def test_activations_are_the_papers_formula_by_hand() -> None:
    """GPT-3 175B's shape (a = 96 heads, h = 12,288, L = 96, s = 2,048, v = 50,257) at
    micro-batch 1, worked by hand from Korthikanti et al. 2022, section 4: s b h =
    2,048 x 12,288 = 25,165,824; per layer s b h (34 + 5 a s / h) = 25,165,824 x (34 +
    5 x 96 x 2,048 / 12,288 = 80) = 2,868,903,936 bytes; selective 34 s b h =
    855,638,016; full 2 s b h = 50,331,648; the output layer and loss 4 s b h (1 + v / h)
    = 100,663,296 + 4 x 2,048 x 50,257 = 512,368,640."""
    shape = presets()["gpt3-175b"]
    none = activations(shape, 1, "none")
    assert none.per_layer_bytes == 2_868_903_936
    assert none.output_bytes == 512_368_640
    assert none.total_bytes == 96 * 2_868_903_936 + 512_368_640
    assert activations(shape, 1, "selective").per_layer_bytes == 855_638_016
    assert activations(shape, 1, "full").per_layer_bytes == 50_331_648


def test_the_shapes_numbers_are_counted_once_per_micro_batch() -> None:
    """Llama 3 8B read once: its released weights' count, one layer of 218,112,000
    parameters, and one ``Activations`` per distinct micro-batch asked (selective
    recomputation by default), twice the sequences holding twice the layers' bytes."""
    numbers = transformer.numbers_of(presets()["llama3-8b"], (1, 2, 1))
    assert (numbers.params, numbers.layer_params) == (8_030_261_248, 218_112_000)
    one, two = numbers.activations
    assert (one.micro_batch, two.micro_batch) == (1, 2)
    assert one.checkpointing is transformer.Checkpointing.SELECTIVE
    assert two.per_layer_bytes == 2 * one.per_layer_bytes


def test_activations_grow_with_the_micro_batch_and_the_sequence() -> None:
    """Linear in the micro-batch; faster than linear in the sequence with nothing
    recomputed (the a s^2 scores), linear with selective recomputation."""
    shape = presets()["llama3-8b"]
    one, four = activations(shape, 1), activations(shape, 4)
    assert four.total_bytes == pytest.approx(4 * one.total_bytes)
    short = activations(shape.at(4096), 1)
    assert one.per_layer_bytes > 2 * short.per_layer_bytes
    selective = activations(shape, 1, "selective").per_layer_bytes
    assert selective == pytest.approx(
        2 * activations(shape.at(4096), 1, "selective").per_layer_bytes
    )


@pytest.mark.parametrize(
    ("keywords", "says"),
    [
        ({"layers": 0, "hidden": 4096, "heads": 32, "seq_len": 2048}, "layers must be a positive"),
        ({"layers": -2, "hidden": 4096, "heads": 32, "seq_len": 2048}, "layers must be a positive"),
        ({"layers": 2, "hidden": 4100, "heads": 32, "seq_len": 2048}, "does not divide into 32"),
        ({"layers": 2, "hidden": 4096, "heads": 32, "seq_len": 2048, "vocab": -1}, "vocab must"),
    ],
)
def test_a_shape_that_cannot_be_is_refused(keywords: dict[str, int], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        of_numbers(**keywords)


def test_the_micro_batch_and_the_recomputation_are_checked() -> None:
    shape = presets()["gpt2-xl"]
    with pytest.raises(ValueError, match="micro-batch must be a positive"):
        activations(shape, 0)
    with pytest.raises(ValueError, match="'some' is not a valid Checkpointing"):
        activations(shape, 1, "some")
