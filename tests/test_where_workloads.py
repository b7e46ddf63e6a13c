"""A workload asked of data (a round, a ruleset) that lacks it is named as a workload, with
where it is, never called unknown ('resnet' in v5.0 is not a typo of 'retinanet'); a
ruleset's RCP file of an old name holds that ruleset's workload, not a later one's."""

from __future__ import annotations

import pytest

from gpuscale.mlperf.bundled import load_round
from gpuscale.names import UnknownNameError, resolve_workloads, workloads_by_round
from gpuscale.quantities import joined

pytest.importorskip("mlperf_logging")


def test_a_workload_missing_from_the_rounds_loaded_says_which_rounds_hold_it(golden) -> None:
    everything = workloads_by_round(load_round().scores)
    holding = [r for r, held in everything.items() if "resnet" in held]
    assert holding and "v5.0" not in holding
    with pytest.raises(UnknownNameError) as raised:
        resolve_workloads(["resnet"], everything["v5.0"])
    said = str(raised.value)
    assert "did you mean" not in said  # not a typo of retinanet
    assert said.startswith("ResNet-50 ('resnet')")  # named as the workload it is
    assert joined(holding) in said  # the bundled rounds that hold it
    assert f"load_round({holding[-1]!r})" in said and "--round" not in said  # Python's words
    assert f"--round {holding[-1]})" in raised.value.as_option("--benchmark")  # the CLI's
    golden.check("names/unknown_workloads", "a workload the rounds loaded lack", said)


def test_a_name_no_round_knows_is_still_unknown_with_the_closest(golden) -> None:
    with pytest.raises(UnknownNameError) as raised:
        resolve_workloads(["bret"], ["bert", "retinanet"])
    said = str(raised.value)
    assert (raised.value.typed, said.index("'bret'") < said.index("'bert'")) == ("bret", True)
    golden.check("names/unknown_workloads", "a typo, the closest named", said)


def test_advise_on_a_ruleset_without_the_workloads_rcps_names_those_that_have_them(golden) -> None:
    from gpuscale.advice.api import advise_by_keywords as advise
    from gpuscale.mlperf.rcp import rcp_points

    with pytest.raises(ValueError) as raised:
        advise(params=25e6, step_ms=100, workload="resnet", ruleset="5.0.0")
    said = str(raised.value)
    assert "in ruleset 5.0.0" in said
    assert "has them in ruleset" in said
    from gpuscale.mlperf.rcp import workload_rcps

    with_rcps = workload_rcps("resnet", "5.0.0").elsewhere
    assert with_rcps and all(rcp_points(r, "resnet") for r in with_rcps)
    assert not rcp_points("5.0.0", "resnet")
    assert joined(with_rcps) in said and f"ruleset={with_rcps[-1]!r}" in said
    shipped = {joined(with_rcps): "<rulesets>", with_rcps[-1]: "<latest>"}  # mlperf-logging's
    golden.check(
        "names/unknown_workloads", "advise: no RCPs in the ruleset asked", said, paths=shipped
    )


def test_retinanet_is_never_fitted_to_ssd_resnet34s_points() -> None:
    """``rcps_ssd.json`` of rulesets up to 1.1.0 holds SSD-ResNet34 (quality target mAP
    0.23), from 2.0.0 RetinaNet (0.34): RetinaNet in 1.1.0 has no RCPs."""
    from gpuscale.analysis.critical_batch import rcp_model_for

    assert rcp_model_for("retinanet", "1.1.0") is None
    assert rcp_model_for("ssd_resnet34", "1.1.0") is not None
    assert rcp_model_for("ssd", "1.1.0") is not None  # v1.1's ssd folder: SSD-ResNet34
    assert rcp_model_for("retinanet", "4.1.0") is not None  # its old name, ssd, there
    from gpuscale.mlperf.rcp import workload_rcps

    assert "1.1.0" not in workload_rcps("retinanet", "1.1.0").elsewhere
    assert "1.1.0" in workload_rcps("ssd_resnet34", "5.0.0").elsewhere
    assert "2.0.0" not in workload_rcps("ssd_resnet34", "5.0.0").elsewhere


@pytest.mark.parametrize(
    "call, written",
    [
        ("plan", "plan(..., scores=load_round({r}).scores)"),
        ("scaling_table", "scaling_table(load_round({r}).scores, ...)"),
        ("analyze", "analyze(load_round({r}), ...)"),
    ],
)
def test_each_api_function_says_the_exact_call_that_gives_the_missing_round(call, written) -> None:
    import gpuscale

    tables = load_round("v5.0")
    calls = {
        "plan": lambda: gpuscale.plan(workload="resnet", accelerator="H100", scores=tables.scores),
        "scaling_table": lambda: gpuscale.scaling_table(tables.scores, "resnet"),
        "analyze": lambda: gpuscale.analyze(tables, ["resnet"]),
    }
    with pytest.raises(ValueError) as raised:
        calls[call]()
    holding = [r for r, held in workloads_by_round(load_round().scores).items() if "resnet" in held]
    assert written.format(r=repr(holding[-1])) in str(raised.value)  # pasted as it is
