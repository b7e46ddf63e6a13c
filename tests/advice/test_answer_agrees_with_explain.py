"""A new user's walk: where the default answer and ``--explain`` read the same decision
differently. One device allowed was told to lower its target efficiency while --explain
said there was nothing to compare; a deciding term that is not enough alone was named as
if it were; a warning's count of more counts was a line of its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.explain.answer import deciding_line
from gpuscale.advice.explain.phrasebook import term_words
from gpuscale.advice.types import Finding, FindingKind
from gpuscale.cli import app

SHARED = Path(__file__).resolve().parents[3] / "shared"  # beside the checkout
LADDER = (SHARED if SHARED.exists() else Path("/work/shared")) / "gpu" / "h100" / "ladder.jsonl"

R50 = [
    *("--params", "25.6M", "--step-ms", "273", "--batch", "256", "--device-name", "A100 80GB"),
    *("--interconnect", "nvlink3", "--flops-per-sample", "24.6G"),
]


def _json(*args: str) -> dict:
    result = CliRunner().invoke(app, ["advise", *args, "-f", "json"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_one_device_allowed_is_capped_by_the_count_not_the_target() -> None:
    decision = _json(*R50, "--max-devices", "1")["decision"]
    assert decision["limit"]["cap"] == "devices" and decision["limit"]["change"] == "devices"


def test_a_term_not_enough_alone_is_said_with_the_others() -> None:
    """The largest overhead at 2 devices not enough alone (a walk's case: tf-300m on the
    H100 ladder, whose fixed cost is enough alone since DDP's pipelined overlap is
    assumed; here a 25M model on PCIe through the host, its exposed all-reduce with the
    fixed cost too): the answer named the largest alone."""
    advice = gpuscale.advise(params=25e6, step_ms=10, batch=32, link="pcie-phb", max_devices=8)
    assert advice.decision.limit.also_shrink  # the premise
    line = deciding_line(advice)
    assert "not enough alone" in line
    assert term_words(advice.decision.limit.also_shrink[0], "says") in line
    plain = gpuscale.advise(params=25.6e6, step_ms=273, batch=256, max_devices=8, link="nvlink3")
    assert not plain.decision.limit.also_shrink and "not enough alone" not in deciding_line(plain)


def test_more_implausible_counts_are_said_in_the_warning_not_apart() -> None:
    advice = gpuscale.advise(
        params=300e6,
        step_ms=10,
        batch=16,
        nodes=4,
        gpus_per_node=8,
        interconnect="nvlink4",
        workload="llama2_70b_lora",
    )
    warnings = advice.decision.warnings
    assert not [w for w in warnings if w.startswith("(and")]
    (implausible,) = [w for w in warnings if w.startswith("IMPLAUSIBLE") and "MLPerf" in w]
    assert "more count" in implausible


@pytest.mark.skipif(not LADDER.exists(), reason="the shared H100 ladder is not here")
def test_a_model_by_size_takes_its_members_terms_as_fitted_not_measured() -> None:
    """A walk: ``--params 1.3B --family transformer`` on the ladder said DDP's own work
    (47.4 ms) was "measured: synchronised minus no-sync step at N = 1" and that "a
    1.3B-parameter transformer model was benched"; nothing of 1.3B was benched."""
    advice = gpuscale.advise(bench=str(LADDER), params=1.3e9, family="transformer", batch=8)
    said = {a.term: a for a in advice.assumptions}
    assert said["ddp"].source == "fitted" and said["ddp"].measure
    (strategy,) = [
        dict(f.values)
        for f in advice.calibration.said.sources
        if isinstance(f, Finding) and f.kind == FindingKind.STRATEGY_AS_BENCHED
    ]
    assert strategy == {"model": "tf-300m", "benched": "ddp"}  # the member benched, not 1.3B
    benched = gpuscale.advise(bench=str(LADDER))  # tf-300m itself: measured
    assert {a.term: a for a in benched.assumptions}["ddp"].source == "measured"
    # its rest a step (hooks) kept, its bucket copies resized: more than tf-300m's own,
    # far less than its rate per parameter carried to 1.3B (47.4 ms, the walk's)
    own = benched.predictions.set_index("accelerators").loc[2, "ddp_ms"]
    carried = advice.predictions.set_index("accelerators").loc[2, "ddp_ms"]
    assert own < carried < 0.5 * own * 1.3e9 / 319.2e6


def test_a_step_faster_than_its_tf32_peak_is_bounded_by_bf16_not_left_without_fixed_cost() -> None:
    """A walk: a 7B model at 2 s a step, batch 8, 172T FLOPs a sample (688 TFLOP/s: above
    the H100's 495 TF32 peak, under its 989 bf16 one: mixed precision with fp32 gradients)
    got "Fixed per-step cost: 0 ms, assumed: ... 1-20 ms", a value outside its own range."""
    fixed = _json(
        *("--params", "7B", "--step-ms", "2000", "--batch", "8", "--device-name", "H100"),
        *("--interconnect", "nvlink4", "--flops-per-sample", "172T"),
    )["scaling"]["fixed_cost"]
    assert fixed["low_ms"] <= fixed["ms"] <= fixed["high_ms"] and fixed["ms"] > 0


ONE_SAMPLE = [  # a global batch of 1, kept at every count (strong scaling)
    [
        *("--params", "1T", "--step-ms", "100000", "--batch", "1", "--nodes", "128"),
        *("--gpus-per-node", "8", "--interconnect", "nvlink5", "--inter-node", "eth25"),
    ],
    [*("--params", "7B", "--step-ms", "2000", "--batch", "1", "--interconnect", "nvlink4")],
]


@pytest.mark.parametrize("args", ONE_SAMPLE, ids=["1T-1024-allowed", "7B-8-allowed"])
def test_a_global_batch_that_does_not_split_caps_the_count_not_the_devices_allowed(
    args: list[str],
) -> None:
    """A new user's walk: a global batch of 1 with 1,024 devices allowed was told "Decides:
    the count allowed ... more devices allowed (--max-devices, --nodes)" while --explain
    said the batch does not split over more devices: the cap is why the search stopped."""
    document = _json(*args)
    decision = document["decision"]
    assert decision["largest"] == 1 and document["scaling"]["global_batch_kept"] == 1
    capped = (
        decision["limit"]["cap"],
        decision["limit"]["change"],
        document["recommendation"]["speedup_capped_by"],
    )
    assert capped == ("batch", "batch", "batch")
    # weak scaling splits nothing: the same counts are predicted, up to the most allowed
    weak = _json(*args, "--scaling", "weak")["decision"]
    assert weak["largest"] > 1 and weak["limit"]["cap"] != "batch"


def test_a_count_above_the_largest_predicted_that_does_not_split_is_the_cap() -> None:
    """Global batch 4 over 8 allowed: 1, 2 and 4 predicted, 8 searched without a row."""
    args = ("--params", "7B", "--step-ms", "2000", "--batch", "4", "--interconnect", "nvlink4")
    decision = _json(*args, "--flops-per-sample", "100T")["decision"]
    assert (decision["largest"], decision["focus"]["accelerators"], decision["limit"]["cap"]) == (
        4,
        4,
        "batch",
    )
    allowed = _json(*args, "--flops-per-sample", "100T", "--max-devices", "4")["decision"]
    assert (allowed["largest"], allowed["limit"]["cap"], allowed["limit"]["change"]) == (
        4,
        "devices",
        "devices",
    )


def test_the_answer_says_the_samples_of_the_count_it_names() -> None:
    """With a convergence model the global batch grows with the count, and so do the samples
    to train: the answer's "N min to train M samples" is the named count's row (BERT on the
    H100 ladder: 8 devices at a global batch of 1,024 need 2.52M samples, 1 device 2.38M)."""
    if not LADDER.exists():
        pytest.skip(f"{LADDER} not present")
    found = _json("--bench", str(LADDER), "--workload", "bert")
    n = found["decision"]["focus"]["accelerators"]  # withheld: the count the answer reads
    rows = {r["accelerators"]: r for r in found["predictions"]}
    samples = rows[n]["samples_to_train"]
    assert n > 1 and samples > rows[1]["samples_to_train"]  # the premise: the batch grew
    assert f"to train {samples / 1e6:.2f}M samples" in found["answer"][0]
