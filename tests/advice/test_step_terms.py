"""The step model's fitted terms (``advice/model/network.py``,
``data/step_terms.json``): the values pinned and agreeing with the fit that chose them
(``benchmarks/results/step_terms_fit.json``), the expected maximum of N normal draws
against its closed forms, and each term standing only where nothing measured it."""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path

import pytest

from gpuscale.advice.model import network as step_terms
from gpuscale.advice.model.network import MIB, StepTerms, collectives
from gpuscale.advice.model.step import Compute, ModelSpec, step_at
from gpuscale.interconnect.network import Link, Network

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((resources.files("gpuscale") / "data" / "step_terms.json").read_text())
FIT = json.loads((ROOT / "benchmarks" / "results" / "step_terms_fit.json").read_text())


def _values(entry: dict[str, object]) -> list[object]:
    """A term's values, per stack and class or one."""
    value = entry["value"]
    if not isinstance(value, dict):
        return [value]
    return [v for per_class in value.values() for v in per_class.values()]


def test_the_terms_are_pinned_and_sourced() -> None:
    spread = {"legacy": 0.058, "modern": 0.042}  # stack: sigma, the same on every link
    contention = {  # stack: link class: kappa
        "legacy": {"nvlink": 0.27, "pcie_p2p": 0.27, "pcie_no_p2p": 0.0, "multinode": 0.56},
        "modern": {"nvlink": 0.0, "pcie_p2p": 0.11, "pcie_no_p2p": 0.02, "multinode": 0.0},
    }
    for stack, per_class in contention.items():
        assert StepTerms(
            nccl_latency=False,
            contention_share=tuple(per_class.items()),
            rank_spread=tuple((cls, spread[stack]) for cls in step_terms.CLASSES),
        ) == step_terms.of_stack(stack)
    assert step_terms.FITTED == step_terms.of_stack("modern") == step_terms.current()
    with pytest.raises(ValueError, match="stack 'tf1' is none of"):
        step_terms.of_stack("tf1")
    for name, entry in DATA["terms"].items():
        assert entry["unit"] and entry["source"], name
        values = _values(entry)
        if all(v in (0.0, False) for v in values):
            assert entry["note"].startswith("left out"), name  # a term out says why
    # no gate written by hand: the classes a term stands in follow from its fitted values
    assert set(DATA["terms"]) == {"nccl_latency", "contention_share", "rank_spread"}


def test_the_data_holds_what_the_fit_chose() -> None:
    chosen = FIT["chosen_terms"]
    for stack in step_terms.STACKS:
        fitted = step_terms.of_stack(stack)
        assert fitted.nccl_latency == chosen["nccl_latency"]
        for name in ("contention_share", "rank_spread"):
            assert dict(getattr(fitted, name)) == chosen[name][stack], name
            # the gate is the fit's: a class has the term where its fitted value is above 0
            assert FIT["gate"][name][stack] == [
                c for c in step_terms.CLASSES if chosen[name][stack][c] > 0
            ]
    for name in ("contention_share", "rank_spread"):
        assert DATA["terms"][name]["value"] == chosen[name], name
    variant = FIT["variants"][FIT["chosen"]]
    assert variant["fitted_on_all"] == {k: chosen[k] for k in ("contention_share", "rank_spread")}
    # the choice is the declared rule's: least error, the smaller size within 0.1 point
    least = min(v["loso_error"] for v in FIT["variants"].values())
    tied = [v for v in FIT["variants"].values() if v["loso_error"] <= least + 0.001]
    assert variant["size"] == min(v["size"] for v in tied)
    # 30 variants: nccl off or on, kappa off, pooled, per class, per stack or per stack
    # and class, sigma off, pooled or per stack (no value per link class: the ranks' spread
    # is the compute's)
    assert len(FIT["variants"]) == 30
    for variant in FIT["variants"].values():
        assert variant["terms"]["rank_spread"] in ("off", "pooled", "per_stack")
        for per_class in variant["fitted_on_all"]["rank_spread"].values():
            assert len(set(per_class.values())) == 1
    # the stacks: the 2017 TensorFlow tables' 5 groups of devices before Volta, the rest
    assert FIT["rows_by_stack"] == {"legacy": 174, "modern": 181}
    assert all(
        g.startswith(("tensorflow_benchmarks_2017", "cscs")) for g in FIT["stacks"]["legacy"]
    )
    assert len(FIT["stacks"]["legacy"]) == 5 and len(FIT["stacks"]["modern"]) == 25
    # the fit read development rows only: 30 (table, device) groups, every row in one
    assert sum(FIT["groups"].values()) == FIT["rows"] == 355
    assert len(FIT["groups"]) == 30
    development_tables = (
        "tensorflow_benchmarks_2017",
        "cscs_distributed_tf_2017",
        "nvidia_dle",
        "lambda_pytorch_fp32",
        "kempnerforge",
        "dlperf_deepspeed_2020",
        "dlperf_oneflow_2021",
        "csc_ml_benchmarks_2024",
        "jingchaozhang_fsdp_2026",
        "servergear_turing_2019",
        "lambda_pytorch_2021",
        "lambda_pytorch_ampere_2021",
        "lambda_tensorflow_2021",
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


def test_the_nccl_term_costs_a_preset_links_collectives_as_nccl_does() -> None:
    # one 1 MiB bucket on 8 NVLink 3 GPUs: NCCL's latency in, 2(N-1) x the preset's 10 us out
    latency_s = {}
    for term in (True, False):
        with step_terms.using(StepTerms(nccl_latency=term)):
            plan = collectives(NETWORK, MIB, 8, bucket_mb=25.0, strategy="ddp")
            latency_s[term] = plan[2]
    assert latency_s[False] == pytest.approx(2 * 7 * 10e-6, rel=0.01)
    assert latency_s[True] < 60e-6


def test_out_of_range_terms_are_refused() -> None:
    with pytest.raises(ValueError, match="contention share"):
        StepTerms(contention_share=1.5)
    with pytest.raises(ValueError, match="rank spread"):
        StepTerms(rank_spread=-0.1)
    with pytest.raises(ValueError, match="link classes"):
        StepTerms(rank_spread=(("nvlink", 0.05),))


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


def test_the_spread_stands_on_the_classes_whose_value_is_above_zero() -> None:
    compute = Compute(tflops=60.0)
    assert step_terms.link_class("nvlink3", nodes=False) == "nvlink"
    assert step_terms.link_class("pcie-phb", nodes=False) == "pcie_no_p2p"
    assert step_terms.link_class("pcie4-x16", nodes=False) == "pcie_p2p"
    assert step_terms.link_class("nvlink4", nodes=True) == "multinode"
    assert step_terms.link_class("custom", nodes=False) is None
    gated = StepTerms(
        rank_spread=(("nvlink", 0.05), ("pcie_p2p", 0.0), ("pcie_no_p2p", 0.05), ("multinode", 0.0))
    )
    assert _step(compute, gated) > _step(compute, StepTerms())  # nvlink3: 0.05
    others = (
        Network(intra=Link.from_preset("pcie4-x16")),
        Network(intra=Link.from_preset("nvlink3"), per_node=2, inter=Link.from_preset("ib-hdr200")),
    )
    for terms, waits in ((gated, False), (StepTerms(rank_spread=0.05), True)):
        with step_terms.using(terms):
            for network in others:
                step = step_at(MODEL, compute, network, 4, batch=256)
                assert (step.wait_ms > 0) == waits, network.name
    # a link of no class (custom or measured) takes the classes' median: 0.025 here, none
    # where most classes have none
    custom = Network(intra=Link(busbw_gbs=50.0, latency_us=5.0, name="custom"))
    mostly_none = StepTerms(
        rank_spread=(("nvlink", 0.05), ("pcie_p2p", 0.0), ("pcie_no_p2p", 0.0), ("multinode", 0.0))
    )
    half = StepTerms(rank_spread=0.025)
    for terms, like in ((gated, half), (mostly_none, StepTerms())):
        with step_terms.using(terms):
            found = step_at(MODEL, compute, custom, 4, batch=256).wait_ms
        with step_terms.using(like):
            assert found == pytest.approx(step_at(MODEL, compute, custom, 4, batch=256).wait_ms)


def test_a_class_value_is_the_one_used_there() -> None:
    compute = Compute(tflops=60.0)
    one = step_at(MODEL, compute, NETWORK, 1, batch=256).compute_ms
    terms = StepTerms(
        rank_spread=(("nvlink", 0.1), ("pcie_p2p", 0.0), ("pcie_no_p2p", 0.0), ("multinode", 0.0))
    )
    assert _step(compute, terms) - _step(compute, StepTerms()) == pytest.approx(
        0.1 * 1.4236 * one, rel=0.02
    )


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


def test_the_assumed_stack_is_said_only_where_the_stacks_differ(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nvlink = Network(intra=Link(busbw_gbs=100.0, latency_us=5.0, name="nvlink"))
    # the fit's: today's stack (assumed) 0.042, the 2017 tables' 0.058
    assert step_terms.fitted_spread(nvlink) == (pytest.approx(0.042), True)
    same = {"legacy": StepTerms(rank_spread=0.05), "modern": StepTerms(rank_spread=0.05)}
    monkeypatch.setattr(step_terms, "FITTED_BY_STACK", same)
    with step_terms.using(same["modern"]):
        assert step_terms.fitted_spread(nvlink) == (0.05, False)
