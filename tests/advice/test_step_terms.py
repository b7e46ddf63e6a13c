"""The step model's fitted terms (``advice/model/step_terms.py``,
``data/step_terms.json``): the values pinned and agreeing with the fit that chose them
(``benchmarks/results/step_terms_fit.json``), the expected maximum of N normal draws
against its closed forms, and each term standing only where nothing measured it."""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path

import pytest

from gpuscale.advice.model import step_terms
from gpuscale.advice.model.network import Link, Network
from gpuscale.advice.model.step import Compute, ModelSpec, step_at
from gpuscale.advice.model.step_terms import StepTerms

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((resources.files("gpuscale") / "data" / "step_terms.json").read_text())
FIT = json.loads((ROOT / "benchmarks" / "results" / "step_terms_fit.json").read_text())


def test_the_terms_are_pinned_and_sourced() -> None:
    assert (
        StepTerms(
            nccl_latency=False,
            contention_share=0.0,
            rank_spread=0.074,
            rank_spread_classes=("nvlink", "pcie_no_p2p"),
        )
        == step_terms.FITTED
    )
    # the gate was read off held-out rows: the data says so
    assert "AFTER the held-out check" in DATA["terms"]["rank_spread_classes"]["source"]
    for name, entry in DATA["terms"].items():
        assert entry["unit"] and entry["source"], name
        if entry["value"] in (0.0, False):
            assert entry["note"].startswith("left out"), name  # a term out says why


def test_the_data_holds_what_the_fit_chose() -> None:
    chosen, fitted = FIT["chosen_terms"], step_terms.FITTED
    assert (fitted.nccl_latency, fitted.contention_share, fitted.rank_spread) == (
        chosen["nccl_latency"],
        chosen["contention_share"],
        chosen["rank_spread"],
    )
    # the fit read development rows only: 17 (table, device) groups, every row in one
    assert sum(FIT["groups"].values()) == FIT["rows"]
    assert len(FIT["groups"]) == 17
    development_tables = (
        "tensorflow_benchmarks_2017",
        "cscs_distributed_tf_2017",
        "nvidia_dle",
        "lambda_pytorch_fp32",
        "kempnerforge",
        "dlperf_deepspeed_2020",
        "dlperf_oneflow_2021",
    )
    assert all(g.startswith(development_tables) for g in FIT["groups"])


def test_expected_max_of_normal_draws_meets_its_closed_forms() -> None:
    assert step_terms.expected_max_normal(1) == 0.0
    assert step_terms.expected_max_normal(2) == pytest.approx(1 / math.sqrt(math.pi), rel=1e-6)
    assert step_terms.expected_max_normal(3) == pytest.approx(1.5 / math.sqrt(math.pi), rel=1e-6)
    # tabulated: E[max of 8] = 1.4236, of 100 = 2.5076 (Tippett 1925)
    assert step_terms.expected_max_normal(8) == pytest.approx(1.4236, abs=1e-4)
    assert step_terms.expected_max_normal(100) == pytest.approx(2.5076, abs=1e-4)
    for n in (8, 64, 512):  # below the bound sqrt(2 ln N)
        assert step_terms.expected_max_normal(n) < math.sqrt(2 * math.log(n))


def test_using_restores_the_fitted_terms() -> None:
    with step_terms.using(StepTerms(rank_spread=0.0)):
        assert step_terms.current().rank_spread == 0.0
    assert step_terms.current() == step_terms.FITTED


def test_out_of_range_terms_are_refused() -> None:
    with pytest.raises(ValueError, match="contention share"):
        StepTerms(contention_share=1.5)
    with pytest.raises(ValueError, match="rank spread"):
        StepTerms(rank_spread=-0.1)


MODEL = ModelSpec(params=25.6e6, flops_per_sample=24.6e9)
NETWORK = Network(intra=Link.from_preset("nvlink3"))


def _step(compute: Compute, terms: StepTerms, overlap: float | None = None) -> float:
    with step_terms.using(terms):
        return step_at(MODEL, compute, NETWORK, 8, batch=256, overlap=overlap).step_ms


def test_the_slowest_rank_waits_where_nothing_measured_it() -> None:
    compute = Compute(tflops=60.0)
    without = _step(compute, StepTerms())
    with_spread = _step(compute, StepTerms(rank_spread=0.05))
    one = step_at(MODEL, compute, NETWORK, 1, batch=256).compute_ms
    assert with_spread - without == pytest.approx(0.05 * 1.4236 * one, rel=0.02)
    # a bench that ran N > 1 measured the slowdown: it stands, the spread adds nothing
    measured = Compute(tflops=60.0, slowdown=((2, 1.01), (8, 1.02)))
    assert _step(measured, StepTerms(rank_spread=0.05)) == _step(measured, StepTerms())


def test_the_spread_stands_on_the_classes_the_data_keeps_it_for() -> None:
    compute = Compute(tflops=60.0)
    kept = step_terms.FITTED
    assert step_terms.link_class("nvlink3", nodes=False) == "nvlink"
    assert step_terms.link_class("pcie-phb", nodes=False) == "pcie_no_p2p"
    assert step_terms.link_class("pcie4-x16", nodes=False) == "pcie_p2p"
    assert step_terms.link_class("nvlink4", nodes=True) == "multinode"
    assert step_terms.link_class("custom", nodes=False) is None
    assert _step(compute, kept) > _step(compute, StepTerms())  # nvlink3: kept
    with step_terms.using(kept):
        for network in (
            Network(intra=Link.from_preset("pcie4-x16")),
            Network(
                intra=Link.from_preset("nvlink3"), per_node=4, inter=Link.from_preset("ib-hdr200")
            ),
            Network(intra=Link(busbw_gbs=50.0, latency_us=5.0, name="custom")),
        ):
            step = step_at(MODEL, compute, network, 4, batch=256)
            assert step.wait_ms == 0.0, network.name


def test_a_spread_measured_on_the_host_stands_instead() -> None:
    # a bench's N = 1 steps timed the spread: E[max of N] of them, not the fitted sigma
    measured = Compute(tflops=60.0, jitter_ms=(100.0, 101.0, 99.0), jitter_ref_ms=100.0)
    assert _step(measured, StepTerms(rank_spread=0.05)) == _step(measured, StepTerms())


def test_contention_stands_only_with_the_default_overlap() -> None:
    compute = Compute(tflops=60.0)
    assert _step(compute, StepTerms(contention_share=0.5)) > _step(compute, StepTerms())
    # a measured overlap holds the backward's loss already: the run is reproduced
    assert _step(compute, StepTerms(contention_share=0.5), overlap=0.6) == _step(
        compute, StepTerms(), overlap=0.6
    )
