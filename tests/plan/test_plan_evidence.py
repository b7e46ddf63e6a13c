"""Intervals as wide as the evidence (issue 58): a level resting on one result of one
submitter is planned with a wider interval than one where many agree, and says so."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from gpuscale.planning import plan
from gpuscale.planning.cache import default_fits
from gpuscale.planning.fits import transfer
from gpuscale.planning.predict import transfer_factor


def _half(table, n: int) -> float:
    row = table[table["accelerators"] == n].iloc[0]
    return math.log(row["time_to_train_min_high"] / row["time_to_train_min"])


def test_one_result_of_one_submitter_is_wide_and_said() -> None:
    few = plan(workload="bert", accelerator="MI300X", devices=(8, 12, 24, 96))
    many = plan(workload="bert", accelerator="H100-SXM5-80GB", devices=(8, 12, 24, 96))
    assert few.attrs["model"]["evidence"] == {
        "results": 1,
        "submitters": 1,
        "rounds": 1,
        "pairs": 1,
    }
    assert many.attrs["model"]["evidence"]["submitters"] > 5
    # at the count it ran, the one result's level is not trusted as dozens of results are
    assert _half(few, 8) > 2 * _half(many, 8)
    # beyond it, never narrower than at the count the level rests on
    assert all(_half(few, n) >= _half(few, 8) for n in (12, 24, 96))
    assert any("1 result of bert by 1 submitter" in s for s in few.attrs["notes"])
    assert not any("by 1 submitter" in s for s in many.attrs["notes"])


def test_the_evidence_priors_are_calibrated_per_class() -> None:
    """Each class's evidence prior is one of the grid the calibration picks from, and
    class (i), where the level at a count rests on its own results, widens with few."""
    intervals = default_fits()["intervals"]
    assert intervals["evidence_i"] > 0
    assert intervals["evidence_iii"] == 0.0


def test_a_level_borrowed_from_fewer_workloads_is_wider_and_said() -> None:
    """Class (iii): the interval widens by the workloads the family's speed rests on,
    ``sqrt(1 + 1/k)``, and on one workload at least by the floor the in-sample spread of a
    level from one other workload sets (``fits.transfer``)."""
    fits = default_fits()
    transfer = fits["speed"]["transfer"]
    assert transfer["pairs"] >= 50 and 0 < transfer["spread"] < transfer["one"]
    halves, factors = {}, {}
    for family in ("MI325X", "TPU-v5p", "RTX 4090"):  # ran 1, 2 and 3 workloads
        k, factor = transfer_factor(fits, family)
        table = plan(workload="rgat", accelerator=family, devices=(8,))
        assert list(table["count_class"]) == ["iii"]
        halves[k], factors[k] = _half(table, 8), factor
        notes = table.attrs["notes"]
        assert any(f"borrowed from {k} workload" in s for s in notes), notes
        assert table.attrs["model"]["evidence"]["workloads"] == k
    assert sorted(halves) == [1, 2, 3]
    assert halves[1] > halves[2] > halves[3]
    assert factors[2] == pytest.approx(math.sqrt(1.5)) and factors[3] == pytest.approx(
        math.sqrt(4 / 3)
    )
    assert factors[1] >= max(math.sqrt(2), transfer["one"] / transfer["spread"]) - 1e-12
    # the base is the class's calibrated half-width, the same for all three
    assert halves[2] / factors[2] == pytest.approx(halves[3] / factors[3], rel=1e-9)
    assert halves[2] / factors[2] == pytest.approx(fits["intervals"]["iii"], rel=1e-9)


def test_too_few_pairs_held_out_give_no_in_sample_spread() -> None:
    """Under five held-out pairs the spread is not said (NaN), and a family on one
    workload then widens by sqrt(2) alone."""
    few = transfer(np.array([0.1, -0.2]), np.array([1, 2]), np.array([0.3]))
    assert math.isnan(few["spread"]) and few["pairs"] == 2
    fits = default_fits()
    blind = fits | {"speed": fits["speed"] | {"transfer": few}}
    assert transfer_factor(blind, "MI325X") == (1, pytest.approx(math.sqrt(2)))


def test_thin_evidence_is_marked_in_the_default_view_and_the_json() -> None:
    """A level on one submission (MI300X's one BERT result) or one submitter's results
    (xFusion's A30) is marked on each row, in the table the terminal shows and in the
    JSON; a count many submitters ran (H100 at 8) is not; a borrowed level (class iii)
    is said by its class."""
    from typer.testing import CliRunner

    from gpuscale.cli import app
    from gpuscale.planning import PlanRequest, plan_for
    from gpuscale.planning.terminal import plan_answer

    def marks(accelerator: str, devices: str) -> list[tuple[str, str, str]]:
        result = plan_for(PlanRequest(workload="bert", accelerator=accelerator, devices=devices))
        shown = plan_answer(result)[0]
        assert [bool(r.get("rests on")) for r in shown] == [
            bool(r["rests_on"]) for r in result.rows
        ]
        return [
            (r["rests_on"], r["rests_on_submitter"], r["rests_on_outlier"]) for r in result.rows
        ]

    assert marks("MI300X", "8,64") == [("one submission", "tinycorp", "")] * 2
    assert marks("A30", "8,16") == [("one submitter", "xFusion", "")] * 2
    assert marks("H100", "8,16,4096") == [("", "", "")] * 3
    assert marks("TPU-v5p", "64") == [("", "", "")]  # never ran BERT: class iii
    shown = CliRunner().invoke(app, ["plan", "-w", "bert", "-a", "MI300X", "-n", "8", "-f", "json"])
    (row,) = json.loads(shown.stdout)["rows"]
    assert (row["rests_on"], row["rests_on_submitter"]) == ("one submission", "tinycorp")
    default = CliRunner().invoke(app, ["plan", "-w", "bert", "-a", "MI300X", "-n", "8,64"])
    assert default.stdout.count("tinycorp") == 2  # each row's mark names whose


def test_a_level_on_a_submitter_whose_software_is_an_outlier_elsewhere_says_so(golden) -> None:
    """Llama2 on A100 rests on Juniper's one v4.0 submission; Juniper's DeepSpeed on 8 H100s
    in v4.0 took 3.92x the median of the H100 family's other submitters (an outlier,
    ``gpuscale.analysis.outliers``, left out of the fit). Each row names Juniper and that
    outlier, in the JSON and in the default view."""
    from typer.testing import CliRunner

    from gpuscale.cli import app

    args = ["plan", "-w", "llama2_70b_lora", "-a", "A100-SXM4-80GB", "-n", "8,64"]
    rows = json.loads(CliRunner().invoke(app, [*args, "-f", "json"]).stdout)["rows"]
    fit = default_fits()["workloads"]["llama2_70b_lora"]
    (root,) = [o for o in fit["outliers"] if o[1] == "JuniperNetworks" and "alone" not in o[6]]
    assert (root[0], root[5], root[3]) == ("v4.0", "H100-SXM5-80GB", 8)
    for row in rows:
        assert (row["rests_on"], row["rests_on_submitter"]) == ("one submission", "JuniperNetworks")
        assert root[6] in row["rests_on_outlier"] and root[2] in row["rests_on_outlier"]
    from gpuscale.planning import PlanRequest, plan_for
    from gpuscale.planning.terminal import plan_answer

    result = plan_for(PlanRequest(workload="llama2_70b_lora", accelerator="A100", devices="8,64"))
    shown, said, _ = plan_answer(result)
    (mark,) = {r["rests on"] for r in shown}  # one mark, on each row
    (line,) = [s for s in said if root[6] in s]  # the outlier, once under the table
    golden.check("plan/answer", "llama2_70b_lora on A100 8,64: the mark", "\n".join([mark, line]))
    assert any(line in s for s in result.notes)  # --explain and -f json's notes too
    default = CliRunner().invoke(app, args, env={"COLUMNS": "100"})
    assert default.exit_code == 0, default.output
    assert max(len(s) for s in default.stdout.splitlines()) <= 100
    assert "JuniperNetworks" in default.stdout


@pytest.mark.parametrize(
    ("workload", "accelerator", "devices"),
    [
        ("gpt3", "TPU-v5p", (7680, 8192)),  # class ii_out: no widening for few (prior 0)
        ("bert", "MI300X", (8, 12, 24, 96)),  # one result: widened
    ],
)
def test_the_widening_for_thin_evidence_is_said_only_where_there_is_one(
    workload: str, accelerator: str, devices: tuple[int, ...]
) -> None:
    """The sentence on what a level resting on 1-2 (submitter, round) pairs rests on says
    "up to xW as wide" with W the rows' largest evidence factor, and only where W reads
    above 1.00 (a widening of x1.00 is none)."""
    from gpuscale.planning import PlanRequest, plan_for

    found = plan_for(PlanRequest(workload=workload, accelerator=accelerator, devices=devices))
    said = [s for s in found.notes if s.startswith("The plan rests on ")]
    assert len(said) == 1
    wide = max(r["evidence_factor"] for r in found.rows)
    if f"{wide:.2f}" == "1.00":
        assert "as wide" not in said[0], said[0]
        assert said[0].endswith("not a consensus.")
    else:
        assert f"up to x{wide:.2f} as wide (in log)" in said[0]


def test_the_notes_give_the_interval_a_row_has_where_many_pairs_widen_it() -> None:
    """B200 on Stable Diffusion rests on 7 (submitter, round) pairs: its intervals are
    widened for them, and the notes say by how much, so that the class factor the notes
    give, raised to the widening they give, is the interval of each row measured before
    (to the rounding of the two printed numbers)."""
    from gpuscale.planning import PlanRequest, plan_for

    asked = PlanRequest(workload="stable_diffusion", accelerator="B200", devices=(8, 64))
    found = plan_for(asked)
    assert found.rows[0]["evidence"]["pairs"] > 2
    (factors,) = [s for s in found.notes if s.startswith("80% intervals:")]
    (widened,) = [s for s in found.notes if s.startswith("The plan rests on ")]
    factor = float(re.search(r"(\d\.\d\d) at counts measured before", factors)[1])
    wide = float(re.search(r"up to x(\d+\.\d\d) as wide", widened)[1])
    for row in found.rows:
        assert row["count_class"] == "i"
        half = math.log(row["time_to_train_min_high"] / row["time_to_train_min"])
        low = math.log(factor - 0.005) * (wide - 0.005)
        high = math.log(factor + 0.005) * (wide + 0.005)
        assert low <= half <= high, (half, factor, wide)
