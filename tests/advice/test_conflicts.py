"""Every option of ``advise`` either acts in every advice, or is refused where it
contradicts another or does not apply (with or without bench results), in one line naming
both: never resolved silently at exit 0 (a walk: ``--scaling weak --global-batch 128``
ran strong scaling "as asked"; ``--interconnect pcie-phb --busbw-gbs 50`` dropped the
preset without a word; ``--family cnn`` without ``--bench``, and its typo, were ignored)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice import api
from gpuscale.advice.request import AdviceRequest
from gpuscale.cli import app

BENCH = Path(__file__).with_name("cpu_tiny_model_gloo.jsonl")
NUMBERS = {"params": 7e6, "step_ms": 2.0, "batch": 64}
# Fields that act in every advice they are given to (no other option overrides them, and
# bench results or numbers both use them); every other field is in a table of conflicts
ALWAYS = {
    *("bench", "params", "batch", "fixed_ms", "scaling", "topo", "busbw_gbs"),
    *("nodes", "gpus_per_node", "max_devices", "overlap", "grad_bytes", "bucket_mb"),
    *("strategy", "workload", "samples", "global_batch", "target_efficiency"),
    "price_per_device_hour",
    *("power_w", "interconnect", "noise_scale", "flops_per_sample", "collectives"),
    "explain",  # a view: the whole explanation (issue 60)
    *("optimizer", "precision"),  # the model state's bytes, by numbers or a bench's model
}

# (keywords, both options the refusal names): contradicting pairs, with numbers
PAIRS = [
    ({"scaling": "weak", "global_batch": 128}, ("scaling='weak'", "global_batch=")),
    ({"link": None, "interconnect": "pcie-phb", "busbw_gbs": 50.0}, ("interconnect=", "busbw")),
    ({"link": None, "interconnect": "nvlink4", "latency_us": 5.0}, ("latency_us=", "busbw")),
    ({"noise_scale": 1000.0, "workload": "bert"}, ("noise_scale=", "workload=")),
    ({"ruleset": "4.1.0"}, ("ruleset=", "workload=")),
    ({"nics_per_node": 2}, ("nics_per_node=", "node")),
    ({"inter_node": "ib-ndr400"}, ("inter_node=", "node")),
    # two nodes, but no count past one: `--nodes 2 --max-devices 8 --inter-node eth25` ran
    # at exit 0, the link between nodes unused and unsaid (a user walk)
    ({"inter_node": "eth25", "nodes": 2, "max_devices": 8}, ("inter_node=", "max_devices=")),
    ({"workload": "bert", "samples": 5e6}, ("samples=", "workload=")),
    # DDP's bucket size with a strategy that has no buckets (bench refuses it too)
    ({"strategy": "fsdp", "bucket_mb": 50.0}, ("bucket_mb=", "strategy=")),
    ({"strategy": "zero2", "bucket_mb": 5.0}, ("bucket_mb=", "strategy=")),
]
# (keywords) that only bench results give meaning to
BENCH_ONLY = [{"model": "tf-7m"}, {"family": "cnn"}, {"family": "cnnn"}, {"allow_flagged": True}]
# (keywords) that only a model given by numbers gives meaning to, with bench results
NUMBERS_ONLY = [
    {"step_ms": 2.0},
    {"device_name": "H100 SXM"},
    {"family": "mlp"},
    {"flops_per_sample": 4e9},
]


def test_every_field_acts_or_is_in_a_table_of_conflicts() -> None:
    named = {f for f, _ in api.BENCH_ONLY} | set(api.NUMBERS_ONLY)
    in_pairs = {"latency_us", "ruleset", "inter_node", "nics_per_node"}  # only in PAIRS
    every = {f.name for f in fields(AdviceRequest) if f.init}
    assert every == ALWAYS | named | in_pairs, every ^ (ALWAYS | named | in_pairs)
    tested = {k for case, _ in PAIRS for k in case} | {k for c in BENCH_ONLY for k in c}
    assert in_pairs | {f for f, _ in api.BENCH_ONLY} <= tested


@pytest.mark.parametrize(("given", "options"), PAIRS, ids=[str(p[0]) for p in PAIRS])
def test_a_contradicting_pair_is_refused_naming_both(given: dict, options: tuple) -> None:
    asked = {"link": "pcie-phb", **NUMBERS, **given}
    if asked["link"] is None:
        del asked["link"]
    with pytest.raises(ValueError) as refused:
        gpuscale.advise(**asked)
    said = str(refused.value)
    assert all(o in said for o in options), said
    assert "\n" not in said


@pytest.mark.parametrize("given", BENCH_ONLY, ids=str)
def test_a_bench_option_without_bench_results_is_refused(given: dict) -> None:
    option = next(iter(given)) + "="
    with pytest.raises(ValueError, match=f"{option} without bench="):
        gpuscale.advise(link="pcie-phb", **NUMBERS, **given)


@pytest.mark.parametrize("given", NUMBERS_ONLY, ids=str)
def test_a_numbers_option_with_bench_results_is_refused(given: dict) -> None:
    option = next(iter(given)) + "="
    with pytest.raises(ValueError, match=option):
        gpuscale.advise(bench=BENCH, **given)


@pytest.mark.parametrize(
    "given",
    [
        {"scaling": "strong", "global_batch": 128},
        {"busbw_gbs": 50.0, "latency_us": 5.0, "link": None},
        {"nics_per_node": 2, "nodes": 2},
        {"inter_node": "ib-ndr400", "max_devices": 16},
        {"workload": "bert", "ruleset": "5.0.0"},
    ],
    ids=str,
)
def test_the_same_options_consistent_are_used(given: dict) -> None:
    asked = {"link": "pcie-phb", **NUMBERS, **given}
    if asked["link"] is None:
        del asked["link"]
    assert gpuscale.advise(**asked).predictions is not None


@pytest.mark.parametrize(
    "extra",
    [
        ["--scaling", "weak", "--global-batch", "128"],
        ["--busbw-gbs", "50"],
        ["--family", "cnn"],
        ["--family", "cnnn"],
    ],
    ids=" ".join,
)
def test_the_walks_commands_exit_with_one_line(extra: list[str]) -> None:
    args = ["advise", "--params", "7M", "--step-ms", "2", "--batch", "64"]
    result = CliRunner().invoke(app, [*args, "--interconnect", "pcie-phb", *extra])
    assert result.exit_code != 0
    assert extra[0] in result.output and len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["--step-ms", "2"], "--step-ms without --params"),
        (["--params", "7M", "--batch", "64"], "--params without --step-ms"),
    ],
    ids=" ".join,
)
def test_half_a_model_by_numbers_names_the_half_missing(given: list[str], said: str) -> None:
    """`advise --step-ms 2` said "give ... the model's parameters and step time (--params
    and --step-ms)", as though the step time given were missing too."""
    result = CliRunner().invoke(app, ["advise", *given])
    assert result.exit_code != 0
    assert f"nothing to advise from: {said}:" in result.output
    assert len(result.output.strip().splitlines()) == 1
