"""Advice by numbers with a transformer's shape (``--preset``, ``--layers`` ...): its
FLOPs, FSDP's collectives per layer and its activations in the memory check, through the
command line and ``gpuscale.advise``; a shape that cannot be is refused naming what is
wrong; ``--params`` alone keeps its numbers and says what it assumes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app
from gpuscale.hardware import transformer
from gpuscale.hardware.transformer import presets

from ..golden import Golden

runner = CliRunner()
# one H100 node: a step of 2 s at one sequence a device (what a user measured), FSDP
H100 = ("--step-ms", "2000", "--batch", "1", "--device-name", "H100 SXM")
NODE = ("--interconnect", "nvlink4", "--scaling", "weak")


# llama3-8b at 4,096 tokens, 4 sequences a step on one device and a global batch of 8 kept,
# FSDP on an H100 SXM over NVLink 4: the request two tests below advise
LLAMA3_8B_FSDP_GLOBAL_8: dict[str, object] = {
    "preset": "llama3-8b",
    "step_ms": 8000,
    "batch": 4,
    "global_batch": 8,
    "seq_len": 4096,
    "device_name": "H100 SXM",
    "interconnect": "nvlink4",
    "strategy": "fsdp",
}


def _json(*args: str) -> dict:
    result = runner.invoke(app, ["advise", *args, "-f", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _refused(*args: str) -> str:
    result = runner.invoke(app, ["advise", *args])
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    return " ".join(result.output.split())


def test_a_preset_round_trip_counts_its_activations_by_hand() -> None:
    """Llama 3 8B at 8,192 tokens, one sequence a device, attention recomputed: per
    layer 34 s b h = 34 x 8,192 x 4,096 = 1,140,850,688 bytes; the output layer and loss
    4 s b h (1 + v / h) = 4 x 8,192 x (4,096 + 128,256) = 4,336,910,336; 32 layers:
    40.844132352 GB on each device, whatever the strategy."""
    doc = _json("--preset", "llama3-8b", *H100, *NODE, "--checkpointing", "selective")
    memory = doc["memory"]
    counted = memory["activations_counted"]
    assert counted["per_layer_bytes"] == 1_140_850_688
    assert counted["output_bytes"] == 4_336_910_336
    assert (counted["layers"], counted["seq_len"], counted["micro_batch"]) == (32, 8192, 1)
    assert memory["activations_gb"] == pytest.approx(40.844132352)
    assert {r["activations_gb"] for r in memory["per_device"]} == {memory["activations_gb"]}
    assert memory["params"] == 8_030_261_248
    assert "Korthikanti" in memory["activations_source"]


def test_no_checkpointing_at_8192_tokens_fits_no_count(golden: Golden) -> None:
    """Nothing recomputed, the attention scores of 32 heads at 8,192 tokens are 384 GB a
    device: no count and no strategy holds it, and the refusal says what would."""
    said = _refused(
        "--preset", "llama3-8b", *H100, *NODE, "--strategy", "fsdp", "--checkpointing", "none"
    )
    assert "up to 8 devices" in said and "384 GB" in said
    # what would hold it, each option as it is typed (never one value "selective or full"),
    # on the command line and in Python
    remedies = [re.findall(r"\(-*checkpointing[^)]*\)", said)]
    with pytest.raises(ValueError) as refused:
        gpuscale.advise(
            preset="llama3-8b",
            step_ms=2000,
            batch=1,
            device_name="H100 SXM",
            interconnect="nvlink4",
            scaling="weak",
            strategy="fsdp",
            checkpointing="none",
        )
    remedies.append(re.findall(r"\(-*checkpointing[^)]*\)", str(refused.value)))
    golden.check("advice/shape", "no checkpointing: what would hold it", remedies)


def test_ddp_is_never_advised_a_count_that_does_not_hold_it() -> None:
    """Under DDP each device holds 16 bytes a parameter (128 GB) and the activations:
    no count does; the advice is of the strategy and count that hold it on the fewest
    devices, and never a count below them."""
    doc = _json(
        "--preset", "llama3-8b", *H100, *NODE, "--strategy", "ddp", "--checkpointing", "full"
    )
    memory, advised = doc["memory"], doc["recommendation"]
    assert memory["fits_from"]["ddp"] is None
    fallback = memory["fallback"]
    # ZeRO-2 on 2 would hold 78.8 GB, over the 77.3 usable of 85.9: FSDP (72 GB) holds it
    assert fallback == {"strategy": "fsdp", "devices": 2}
    assert memory["fits_from"]["zero2"] == 4
    assert advised["strategy"] == fallback["strategy"]
    assert advised["accelerators"] >= fallback["devices"]
    held = {(r["strategy"], r["devices"]): r["fits"] for r in memory["per_device"]}
    assert held[(advised["strategy"], advised["accelerators"])]


def test_the_70b_needs_more_than_a_node() -> None:
    """Llama 3 70B: 16 bytes of 70.6B parameters are 1,129 GB, more than 8 H100s hold
    with FSDP (80 GiB each) and the activations: the refusal names the count that does."""
    said = _refused("--preset", "llama3-70b", *H100, *NODE, "--checkpointing", "full")
    assert "up to 8 devices" in said
    # FSDP holds it from 24 devices (three nodes of 8): the remedy names that count
    assert "on 24 devices" in said and "--max-devices 24" in said


def test_fsdp_pays_a_latency_per_layer() -> None:
    """The same parameters and FLOPs: with the shape, FSDP's collectives are issued per
    layer (32 units), each paying its latency; given by --params alone, once a step."""
    shaped = _json(
        "--preset", "llama3-8b", *H100, *NODE, "--strategy", "fsdp", "--checkpointing", "full"
    )
    flops = str(shaped["memory"]["params"])
    alone = _json(
        *("--params", flops, "--flops-per-sample", "474.4T"),
        *H100,
        *NODE,
        *("--strategy", "fsdp"),
    )
    at_8 = [
        next(p for p in doc["predictions"] if p["accelerators"] == 8) for doc in (shaped, alone)
    ]
    assert at_8[0]["latency_ms"] > 10 * at_8[1]["latency_ms"]
    assert at_8[0]["comm_ms"] >= at_8[1]["comm_ms"]


def test_the_shape_gives_the_flops_and_says_so() -> None:
    """The shape's FLOPs per sample with attention are the ones the step is read at, and
    the explanation says where they and the units come from."""
    shape = _json("--preset", "gpt2-xl", *H100, *NODE, "--strategy", "fsdp")["shape"]
    dims = (shape["layers"], shape["hidden"], shape["heads"], shape["seq_len_tokens"])
    assert dims == (48, 1600, 25, 1024)  # GPT-2 XL (Radford et al. 2019, table 2)
    assert (shape["params_given"], shape["flops_given"]) == (False, False)
    assert shape["fsdp_units"] == 48  # one a layer, each a layer's parameters
    assert shape["unit_params"] == pytest.approx(30.7e6, rel=0.01)
    assert shape["attention_share"] == pytest.approx(0.092, abs=0.001)


def test_params_far_from_the_shape_are_said() -> None:
    """--params 7B beside Llama 3 8B's 8.03B: 13% apart, said as a warning."""
    doc = _json("--preset", "llama3-8b", "--params", "7B", *H100, *NODE, "--checkpointing", "full")
    assert (doc["shape"]["params"], doc["shape"]["params_given"]) == (8_030_261_248, True)
    assert doc["memory"]["params"] == 7e9  # memory and collectives from --params
    assert "-13%" in json.dumps(doc["answer"])


def test_params_alone_says_what_it_assumes() -> None:
    """Without a shape, FSDP's collectives are one unit a step and no activations are
    counted: both said."""
    doc = _json("--params", "8B", *H100, *NODE, "--strategy", "fsdp")
    assert "shape" not in doc
    assert "No transformer shape" in json.dumps(doc)  # said, among the assumptions
    assert doc["memory"]["activations_gb"] is None
    assert doc["memory"]["activations_counted"] is None


def test_a_shape_by_its_numbers_through_python_keywords() -> None:
    """``gpuscale.advise`` takes the shape as keywords (GPT's block: 32 layers of 4,096
    are 6.4B parameters, 103 GB of state under DDP: memory limits, so it is kept)."""
    advice = gpuscale.advise(
        layers=32,
        hidden=4096,
        heads=32,
        seq_len=4096,
        vocab=50_257,
        step_ms=500,
        batch=2,
        device_name="H100 SXM",
        interconnect="nvlink4",
        checkpointing="selective",
    )
    assert advice.memory is not None
    counted = advice.memory.activations_counted
    assert counted is not None and (counted.layers, counted.micro_batch) == (32, 2)
    assert counted.seq_len == 4096 and counted.checkpointing.value == "selective"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ("--layers", "-1", "--hidden", "4096", "--heads", "32", "--seq-len", "2048"),
            "--layers -1: must be a positive whole number",
        ),
        (
            ("--layers", "2", "--hidden", "4100", "--heads", "32", "--seq-len", "2048"),
            "--hidden 4100 does not divide into --heads 32",
        ),
        (("--layers", "2", "--hidden", "4096"), "without --heads and --seq-len"),
        (("--preset", "llama3-8"), "did you mean 'llama3-8b'?"),
        (("--preset", "lama2-13b"), "did you mean 'llama2-13b'?"),
        (("--preset", "gpt2-xl", "--hidden", "2048"), "the preset is the shape"),
        (("--params", "7B", "--checkpointing", "full"), "without a transformer's shape"),
        (
            ("--preset", "gpt2-xl", "--checkpointing", "some"),
            "must be one of none, selective, full",
        ),
        (("--preset", "gpt2-xl", "--seq-len", "0"), "--seq-len 0: must be a positive whole"),
        # GPT-2 XL's 1,024 learned positions end its sequence; Llama's rotary ones do not
        (
            ("--preset", "gpt2-xl", "--seq-len", "2048"),
            "longer than gpt2-xl's 1,024 learned positions",
        ),
    ],
)
def test_a_shape_that_cannot_be_is_refused(args: tuple[str, ...], says: str) -> None:
    assert says in _refused(*args, "--step-ms", "10")


def test_a_shape_is_for_a_model_by_numbers() -> None:
    """With bench results the bench measured its models: a shape is refused, named."""
    bench = Path(__file__).parent / "cpu_tiny_model_gloo.jsonl"
    said = _refused("--bench", str(bench), "--preset", "gpt2-xl")
    assert "--preset: for a model given by numbers" in said


def test_a_shape_needs_a_step_time() -> None:
    assert "give --step-ms" in _refused("--preset", "gpt2-xl")


def test_presets_are_named_in_the_help() -> None:
    result = runner.invoke(app, ["advise", "--help"])
    text = " ".join(result.output.split())
    assert all(name in text for name in presets())


def test_the_default_stores_no_attention_scores() -> None:
    """Without --checkpointing the activations are selective recomputation's 34 s b h a
    layer (what FlashAttention holds): llama3-8b at 8,192 tokens, one sequence, fits FSDP
    from 4 devices where storing the scores (384 GB) fits none."""
    doc = _json("--preset", "llama3-8b", *H100, *NODE, "--strategy", "fsdp")
    counted = doc["memory"]["activations_counted"]
    assert counted["checkpointing"] == "selective"
    assert counted["per_layer_bytes"] == 34 * 8192 * 4096
    assert doc["memory"]["fits_from"]["fsdp"] == 4


def test_activations_follow_each_counts_micro_batch() -> None:
    """A global batch of 8 kept, 4 sequences of 4,096 tokens on one device: 2 devices
    run 4 each, 4 run 2 and 8 run 1. The activations each device holds are its own
    micro-batch's (81.7 GB at 4 sequences, half at 2, a quarter at 1), so FSDP holds
    llama3-8b from 4 devices; counted at one device's 4 sequences, no count would."""
    advice = gpuscale.advise(**LLAMA3_8B_FSDP_GLOBAL_8)
    memory, table = advice.memory, advice.predictions
    by_count = {r.devices: r.activations_gb for r in memory.rows if r.strategy == "fsdp"}
    micro = dict(zip(table["accelerators"], table["batch_per_device"], strict=True))
    assert micro == {1: 4, 2: 4, 4: 2, 8: 1}
    assert by_count[1] == pytest.approx(81.7, abs=0.05)
    assert by_count[2] == by_count[1]
    assert by_count[4] == pytest.approx(by_count[1] / 2)
    assert by_count[8] == pytest.approx(by_count[1] / 4)
    assert memory.fits_from("fsdp") == 4
    assert list(table["fits"]) == [False, False, True, True]
    counted = _json(
        "--preset",
        "llama3-8b",
        "--step-ms",
        "8000",
        "--batch",
        "4",
        "--global-batch",
        "8",
        "--seq-len",
        "4096",
        "--device-name",
        "H100 SXM",
        "--interconnect",
        "nvlink4",
    )["memory"]["activations_counted"]
    assert counted["micro_batch"] == 4
    assert [(r["devices"], r["micro_batch"]) for r in counted["by_devices"]] == [(4, 2), (8, 1)]


@pytest.mark.parametrize(
    ("args", "says", "never"),
    [
        # one sequence a device: a smaller --batch cannot be given, a shorter sequence can
        (
            ("--checkpointing", "selective"),
            "(--checkpointing full) or give a shorter --seq-len",
            "smaller --batch",
        ),
        # every layer recomputed already: what is left is a shorter sequence
        (
            ("--checkpointing", "full", "--seq-len", "400000"),
            "every layer recomputed: give a shorter --seq-len",
            "--checkpointing",
        ),
    ],
)
def test_activations_that_fill_a_device_say_what_shrinks_them(
    args: tuple[str, ...], says: str, never: str
) -> None:
    """llama3-70b at one sequence a device: 187 GB of activations attention recomputed,
    743 GB at 400,000 tokens every layer recomputed; no count holds either."""
    said = _refused(
        "--preset",
        "llama3-70b",
        "--step-ms",
        "16000",
        "--batch",
        "1",
        "--device-name",
        "H100 SXM",
        "--interconnect",
        "nvlink4",
        *args,
    )
    assert says in said
    assert never not in said.split("any strategy", 1)[1]


def test_the_json_carries_the_shape_as_a_record() -> None:
    """llama3-8b at 8,192 tokens: 8,030,261,248 parameters (Meta's 8.03B), 32 units of
    218,112,000, 57.9 GFLOPs a token (docs/memory.md), the activations of one sequence
    (40.8 GB, attention recomputed) as numbers; a request without a shape has no record."""
    shape = _json("--preset", "llama3-8b", *H100, *NODE)["shape"]
    assert shape["name"] == "llama3-8b"
    assert (shape["layers"], shape["hidden"], shape["heads"]) == (32, 4096, 32)
    assert shape["seq_len_tokens"] == 8192
    assert shape["params"] == 8_030_261_248
    assert (shape["fsdp_units"], shape["unit_params"]) == (32, 218_112_000)
    assert shape["flops_per_sample"] / 8192 == pytest.approx(57.9e9, rel=1e-3)
    assert shape["attention_share"] == pytest.approx(0.22, abs=0.005)
    held = shape["activations"]
    assert (held["micro_batch"], held["checkpointing"]) == (1, "selective")
    assert held["total_gb"] == pytest.approx(40.8, abs=0.05)
    assert "shape" not in _json("--params", "8B", *H100, *NODE)


def test_fsdp_holds_its_gathered_layers_whole() -> None:
    """llama3-70b, every layer recomputed, one sequence a device: a layer is 855,654,400
    parameters; FSDP holds two layers' 16-bit weights whole (the one computing, the one
    prefetched) and one layer's 16-bit gradients, 5.13 GB beyond the shards. On 16 H100s
    the shards and activations are 85.8 GB of the 85.9 GB a device has; with the gathered
    layers 90.9 GB, so 16 do not hold it and 32 do. ZeRO-2 and DDP hold the weights whole
    already: nothing is added to them."""
    advice = gpuscale.advise(
        preset="llama3-70b",
        step_ms=16000,
        batch=1,
        global_batch=64,
        checkpointing="full",
        device_name="H100 SXM",
        interconnect="nvlink4",
        strategy="fsdp",
        nodes=4,
    )
    memory = advice.memory
    assert memory.gathered_gb == pytest.approx(855_654_400 * 6 / 1e9)
    rows = {(r.strategy, r.devices): r for r in memory.rows}
    sixteen = rows["fsdp", 16]
    assert sixteen.gathered_gb == memory.gathered_gb
    assert sixteen.total_gb - sixteen.gathered_gb < sixteen.capacity_gb < sixteen.total_gb
    assert memory.fits_from("fsdp") == 32
    assert rows["fsdp", 1].gathered_gb is None  # one device: nothing sharded
    assert rows["zero2", 16].gathered_gb is None and rows["ddp", 16].gathered_gb is None


@pytest.mark.parametrize(
    ("args", "at"),
    [
        (("--preset", "llama3-8b"), "at the shape's FLOPs"),
        (("--preset", "llama3-8b", "--flops-per-sample", "400T"), "at the FLOPs given"),
        (("--params", "8B"), "at 6 x parameters FLOPs per sample"),
    ],
)
def test_the_rate_names_whose_flops_it_is_at(args: tuple[str, ...], at: str) -> None:
    """The step's rate is at the FLOPs the shape counts, those given, or 6 x parameters."""
    said = _json(*args, *H100, *NODE)["explanation"]
    compute = next(line for line in said if line.startswith("Compute:"))
    assert at in compute


def test_a_language_models_global_batch_is_accumulated_on_one_device() -> None:
    """1,024 sequences of llama3-8b a step at one a device on 8 nodes: one device takes
    them in 1,024 micro-steps (the reference every speedup is against), 64 devices in 16.
    Past the default 64 micro-steps it was refused."""
    table = _json(
        "--preset",
        "llama3-8b",
        *H100,
        "--global-batch",
        "1024",
        "--interconnect",
        "nvlink4",
        "--nodes",
        "8",
        "--inter-node",
        "ib-ndr400",
        "--strategy",
        "fsdp",
    )["predictions"]
    accum = {row["accelerators"]: row["accum"] for row in table}
    assert accum[1] == 1024 and accum[64] == 16
    assert all(row["global_batch"] == 1024 for row in table)
    assert all(0 < row["speedup"] <= row["accelerators"] for row in table)


def test_a_rotary_preset_takes_a_longer_sequence() -> None:
    """llama3-8b has no table of positions: 32,768 tokens are its FLOPs and activations."""
    args = ("--preset", "llama3-8b", "--seq-len", "32768", "--checkpointing", "full")
    shape = _json(*args, *H100, *NODE)["shape"]
    assert shape["seq_len_tokens"] == 32768


@pytest.mark.parametrize(
    ("args", "gb", "says"),
    [
        ((), 2.89, "assumed: the attention scores never stored, as FlashAttention"),
        (("--checkpointing", "none"), 9.18, "the attention scores stored"),
        (("--checkpointing", "full"), 0.37, "every layer recomputed"),
    ],
)
def test_the_shape_says_its_activations_where_one_device_holds_it(
    args: tuple[str, ...], gb: float, says: str
) -> None:
    """GPT-2 XL at 1,024 tokens fits one H100, so no memory sentence is said: the shape's
    line says the activations of a sequence and what is recomputed (the default as an
    assumption). Per layer 34 s h = 55.7 MB selective, s h (34 + 5 a s / h) = 187 MB with
    the scores stored (a = 25), 2 s h = 3.3 MB full; x 48 layers, + 4 s (h + v) = 213 MB."""
    said = _json("--preset", "gpt2-xl", *H100, *NODE, *args)
    line = next(text for text in said["explanation"] if text.startswith("Shape:"))
    assert f"activations {gb} GB a sequence" in line
    assert says in line
    assert "memory" not in said


def test_a_shapes_numbers_are_counted_once_an_advice(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shape's numbers are counted once, where the calibration starts (its FLOPs once),
    and the FLOPs, the shape's finding and the memory check at each count's micro-batch
    (4, 2 and 1 sequences) all read that one record."""
    counted: list[transformer.ShapeNumbers] = []
    flops: list[float] = []
    numbers_of, flops_per_sample = transformer.numbers_of, transformer.flops_per_sample

    def counting(
        shape: transformer.TransformerShape,
        micro_batches: Iterable[int] = (1,),
        how: transformer.Checkpointing | str = transformer.DEFAULT_CHECKPOINTING,
    ) -> transformer.ShapeNumbers:
        counted.append(numbers_of(shape, micro_batches, how))
        return counted[-1]

    def counting_flops(shape: transformer.TransformerShape) -> float:
        flops.append(flops_per_sample(shape))
        return flops[-1]

    monkeypatch.setattr(transformer, "numbers_of", counting)
    monkeypatch.setattr(transformer, "flops_per_sample", counting_flops)
    advice = gpuscale.advise(**LLAMA3_8B_FSDP_GLOBAL_8)
    assert len(counted) == 1 and len(flops) == 1
    (numbers,) = counted
    assert [a.micro_batch for a in numbers.activations] == [1, 2, 3, 4]
    assert advice.calibration.model.spec.flops_per_sample == numbers.flops_per_sample
    by_count = advice.memory.activations_by_count
    assert {n: a.micro_batch for n, a in by_count} == {4: 2, 8: 1}
    assert all(a in numbers.activations for _, a in by_count)
