"""A count planned faster than linear against a smaller count asked (time ratio above
device ratio) is said in the table and the notes, with what it comes from and the
measured results it rests on, or flagged and kept out of the Pareto front and the
stops-paying picks where no result ran so (a user walk: BERT on A100 in v3.0, 32 devices
planned 2.28x as fast as 16 on 2x the devices, unsaid and unflagged; the super-linear
flag, at the same per-device batch, misses a rise a larger batch gives)."""

from __future__ import annotations

import math
import re

import pytest

import gpuscale
from gpuscale.planning import PlanRequest, plan_for
from gpuscale.planning.words import plan_document

from .test_plan_model import _scores, amdahl_minutes

FAMILY = "A100-SXM4-80GB"


@pytest.fixture(scope="module")
def v30():
    return gpuscale.load_round("v3.0").scores


def test_bert_on_a100_from_16_to_32_is_said_and_rests_on_the_results_that_ran_so(v30) -> None:
    table = gpuscale.plan(workload="bert", accelerator=FAMILY, devices=[16, 32], scores=v30)
    first, row = table.iloc[0], table.iloc[1]
    time_ratio = first["time_to_train_min"] / row["time_to_train_min"]
    assert time_ratio > 2  # the walk's plan: more than linear on 2x the devices
    # the data: each family's fastest closed BERT result at 16 and at 32 in v3.0
    bert = v30[
        (v30["workload"] == "bert")
        & (v30["division"] == "closed")
        & v30["time_to_train_min"].notna()
    ]
    fastest = bert.loc[
        bert.groupby(["accelerator_family", "accelerators"])["time_to_train_min"].idxmin()
    ]
    at = {
        n: fastest[fastest["accelerators"] == n].set_index("accelerator_family") for n in (16, 32)
    }
    both = at[16].index.intersection(at[32].index)
    ran = at[16].loc[both, "time_to_train_min"] / at[32].loc[both, "time_to_train_min"]
    faster = ran[ran > 2]
    # A100-SXM4-40GB (Dell XE8545, 448 -> 1,536): 2.59x; A100-PCIe-80GB 1.87x
    assert list(faster.index) == ["A100-SXM4-40GB"]
    # the table: how much, and what ran so; not flagged (the data ran so)
    assert row["beyond_linear"].startswith(f"{time_ratio:.2f}x as fast as 16 on 2x the devices")
    assert f"A100-SXM4-40GB 16 -> 32: {faster.iloc[0]:.2f}x on 2x" in row["beyond_linear"]
    assert row["flags"] == "" and first["beyond_linear"] == ""
    # the sentence, against the table
    said = next(n for n in table.attrs["notes"] if n.startswith("32 accelerators are planned"))
    found = re.search(
        r"planned (\S+)x as fast as 16 on 2x the devices, more than linear \((\S+)x\): "
        r"throughput per device (\S+)x 16's \(the product of (.*?)\) times x(\S+) from the "
        r"samples to converge \(the global batch 448 -> 1,536 needs (\S+)x the samples, so "
        r"none of it comes from fewer samples to converge\); the largest part is a larger "
        r"per-device batch",
        said,
    )
    assert found, said
    shown, excess, throughput, terms, samples, more = found.groups()
    assert shown == f"{time_ratio:.2f}"
    hours = first["accelerator_hours"] / row["accelerator_hours"]
    assert excess == f"{hours:.2f}"
    efficiency = row["throughput_efficiency"] / first["throughput_efficiency"]
    assert throughput == f"{efficiency:.3f}"
    parts = [float(x) for x in re.findall(r"x(\d+\.\d+) from", terms)]
    assert math.prod(parts) == pytest.approx(efficiency, abs=0.003)
    assert "per-device batch (28 -> 48)" in terms
    assert [row["batch_per_accelerator"], first["batch_per_accelerator"]] == [48, 28]
    # the per-device batch's factor is the largest, as said
    assert re.search(r"x(\S+) from the per-device batch", terms)[1] == f"{max(parts):.3f}"
    converge = row["convergence_factor"] / first["convergence_factor"]
    assert samples == f"{converge:.3f}"
    assert more == f"{row['expected_to_converge'] / first['expected_to_converge']:.3f}"
    assert float(throughput) * float(samples) == pytest.approx(hours, abs=0.005)
    # the results it rests on, by their systems and times
    for n in (16, 32):
        system = at[n].loc["A100-SXM4-40GB"]
        assert f"{system['system_name']} {system['time_to_train_min']:.4g} min" in said
    # JSON carries the same cell
    result = plan_for(PlanRequest(workload="bert", accelerator=FAMILY, devices=[16, 32]), v30)
    assert plan_document(result)["rows"][1]["beyond_linear"] == row["beyond_linear"]


def unsupported():
    """Y scales a little worse than linearly at 8-64 (its batch 8 a device up to 16, 32
    from 32 on); X ran 8 and 16 at 8 a device and once at 64 a device on 8, four times
    faster: the fit learns that a larger per-device batch is faster, so X at 32 (Y's
    batch there) is planned faster than linear against 16, which no result ran."""
    rows = [
        ("v4.0", "bert", "Y", n, amdahl_minutes(n, 0.02) * w, 8 * n if n <= 16 else 32 * n)
        for n in (8, 16, 32, 64)
        for w in (0.99, 1.0, 1.01)
    ]
    rows += [("v4.0", "bert", "X", n, 2 * amdahl_minutes(n, 0.02), 8 * n) for n in (8, 16)]
    rows.append(("v4.0", "bert", "X", 8, 2 * amdahl_minutes(8, 0.02) / 4, 64 * 8))
    return _scores(rows)


def test_a_plan_faster_than_linear_that_no_result_ran_is_flagged_and_kept_out() -> None:
    scores = unsupported()
    # no family in one round ran more than linearly from 8-16 to 32-64 (fastest per count)
    fastest = scores.groupby(["accelerator_family", "accelerators"])["time_to_train_min"].min()
    pairs = [
        fastest[(f, low)] / fastest[(f, high)] / (high / low)
        for f, low, high in [(f, a, b) for f in ("X", "Y") for a in (8, 16) for b in (32, 64)]
        if (f, low) in fastest and (f, high) in fastest
    ]
    assert pairs and max(pairs) < 1
    table = gpuscale.plan(workload="bert", accelerator="X", devices=[8, 16, 32], scores=scores)
    row = table.iloc[2]
    time_ratio = table["time_to_train_min"].iloc[1] / row["time_to_train_min"]
    assert time_ratio > 2 * 1.1  # above plausibility's super-linear threshold
    assert row["beyond_linear"].startswith(f"{time_ratio:.2f}x as fast as 16 on 2x the devices")
    assert row["beyond_linear"].endswith("no result measured so")
    assert row["flags"].startswith("more than linear: ")
    assert not row["pareto"] and row["stops_paying"] == ""
    said = next(n for n in table.attrs["notes"] if n.startswith("32 accelerators are planned"))
    assert "No submitter's own results of a family ran more than linearly" in said
    assert said.endswith("flagged, kept out of the Pareto front and the stops-paying picks.")
    assert any(
        n.startswith("Flagged more than linear at 32 accelerators") for n in table.attrs["notes"]
    )


def test_a_plan_a_little_faster_than_linear_that_no_result_ran_is_flagged() -> None:
    """v0.7 BERT on the 450 W V100-SXM3-32GB: 8 (below the 16 it ran) planned 106 min,
    16 52.62 min, 1.007x linear; no family ran more than linearly there, so 16 is flagged
    however small the excess beyond the run-to-run spread: a plan's line is no
    measurement, whose noise a tolerance would allow for."""
    from gpuscale.planning.linear import judged
    from gpuscale.plausibility import LINEAR_SPREAD

    systems = [["v0.7", "Acme", "a", n, t, 32 * n] for n, t in [(8, 50.0), (16, 26.0)]]
    fit = {"families": {"X": {"systems": systems}}}
    points = [
        {"accelerators": 8, "time_to_train_min": 106.0},
        {"accelerators": 16, "time_to_train_min": 52.62},
    ]
    verdict = judged(fit, points, [0, 1])[1]
    assert 1 + LINEAR_SPREAD < verdict["excess"] < 1.1
    assert verdict["against"] == 0 and not verdict["supported"]
    assert verdict["flagged"]
    # within the run-to-run spread: linear, no verdict
    points[0]["time_to_train_min"] = 2 * 52.62 * (1 + LINEAR_SPREAD / 2)
    assert judged(fit, points, [0, 1]) == {}


def test_a_pair_of_two_submitters_is_said_but_supports_nothing_one_submitters_own_first() -> None:
    """A family's fastest at each count, of two submitters, is two software stacks at two
    global batches, not one system scaling: said with both submitters and batches, the
    row flagged; where one submitter ran both counts, its own pair is the one judged."""
    from gpuscale.planning.linear import cell, judged

    points = [
        {"accelerators": 2, "time_to_train_min": 72.0},
        {"accelerators": 4, "time_to_train_min": 34.0},  # 72 / 34 / 2 = 1.06x linear
    ]
    across = [
        ["v3.0", "Quanta", "q", 2, 43.72, 512.0],
        ["v3.0", "ASUSTeK", "a", 8, 10.51, 768.0],  # 4.16x on 4x, of two submitters
    ]
    verdict = judged({"families": {"H": {"systems": across}}}, points, [0, 1])[1]
    assert verdict["supported"] == [] and verdict["flagged"]
    [pair] = verdict["across"]
    assert not pair["one_submitter"] and pair["excess"] == pytest.approx(43.72 / 10.51 / 4)
    said = cell(points[0], points[1], verdict)
    assert said.endswith(
        "no result measured so by one submitter; across two: H 2 -> 8: 4.16x on 4x "
        "(v3.0; Quanta at a global batch of 512 -> ASUSTeK at 768)"
    )
    # Quanta ran 8 too, slower than linear from its own 2: its own pair is judged, the
    # faster ASUSTeK at 8 is no support and no longer said as a pair of two submitters
    own = [*across, ["v3.0", "Quanta", "q8", 8, 12.0, 512.0]]
    verdict = judged({"families": {"H": {"systems": own}}}, points, [0, 1])[1]
    assert [(e["low"][1], e["high"][1]) for e in verdict["measured"]] == [("Quanta", "Quanta")]
    assert verdict["flagged"] and verdict["across"] == []
    # one submitter's own pair that ran more than linearly supports the row
    fast = [*across, ["v3.0", "Quanta", "q8", 8, 10.0, 512.0]]
    verdict = judged({"families": {"H": {"systems": fast}}}, points, [0, 1])[1]
    assert not verdict["flagged"] and verdict["supported"][0]["high"][2] == "q8"
    assert "measured so: H 2 -> 8: 4.37x on 4x (v3.0)" in cell(points[0], points[1], verdict)


def test_bert_on_a100_from_2_to_4_rests_on_no_one_submitters_pair(v30) -> None:
    """The bundled rounds' BERT on A100 at 2 and 4 (a user walk: 4 planned 2.08x as fast
    as 2, "measured so" by H100-PCIe-80GB in v3.0): no submitter ran more than linearly
    from 1-2 to 4-8; H100-PCIe-80GB's fastest at 2 (Quanta_Cloud_Technology, global batch
    512) and at 8 (ASUSTeK, 768) are two submitters: 4 is flagged and the pair is said
    with its submitters and batches."""
    table = gpuscale.plan(workload="bert", accelerator=FAMILY, devices=[2, 4])
    row = table.iloc[1]
    assert row["flags"].startswith("more than linear: ") and not row["pareto"]
    assert row["beyond_linear"].endswith(
        "across two: H100-PCIe-80GB 2 -> 8: 4.16x on 4x "
        "(v3.0; Quanta_Cloud_Technology at a global batch of 512 -> ASUSTeK at 768)"
    )
    bert = v30[(v30["workload"] == "bert") & (v30["accelerator_family"] == "H100-PCIe-80GB")]
    ran = bert.groupby("submitter")["accelerators"].agg(set)
    assert not any({2, 8} <= counts or {2, 4} <= counts for counts in ran)
