"""Clusters, Pareto front, knee, speed x efficiency, threshold and bootstrap intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gpuscale.analysis.clusters import cluster_systems
from gpuscale.analysis.equilibrium import equilibrium, pareto_mask
from gpuscale.analysis.metrics import scaling_table
from gpuscale.analysis.score_intervals import bootstrap_intervals
from gpuscale.tables import CI_COLUMNS

from .tables import runs_for, scores


def ladder() -> list[tuple[str, str, int, float]]:
    # Near-linear to 8 accelerators, then diminishing returns.
    times = {1: 64.0, 2: 32.5, 4: 16.6, 8: 8.6, 16: 6.0, 32: 4.8, 64: 4.2, 128: 3.9}
    return [(f"s{n}", "H100", n, t) for n, t in times.items()]


def test_pareto_mask_known_answer() -> None:
    t = np.array([10.0, 5.0, 5.0, 12.0, 1.0])
    cost = np.array([1.0, 2.0, 3.0, 1.0, 9.0])
    assert pareto_mask(t, cost).tolist() == [True, True, False, False, True]


def test_identical_points_are_both_on_the_front() -> None:
    assert pareto_mask(np.array([1.0, 1.0]), np.array([2.0, 2.0])).tolist() == [True, True]


def test_criteria_on_a_ladder() -> None:
    table = scaling_table(scores(ladder()), "bert")
    eq = equilibrium(table, threshold=0.8)
    assert eq.knee is not None and eq.knee.accelerators == 8
    # S*E = S^2/N: largest for 16 accelerators here (64/6)^2/16 = 7.1 vs 8: 6.9, 32: 5.6
    assert eq.max_speed_x_efficiency.accelerators == 16
    # E' >= 0.8 * max(E'): E'(8) = 64/8.6/8 = 0.93, E'(16) = 0.67
    assert eq.efficiency_threshold.accelerators == 8
    assert {p.split("/")[1] for p in eq.pareto} == {f"s{n}" for n in (1, 2, 4, 8, 16, 32, 64, 128)}
    assert "8 accelerators" in eq.agreement


def test_threshold_validation_and_empty() -> None:
    table = scaling_table(scores(ladder()), "bert")
    with pytest.raises(ValueError):
        equilibrium(table, threshold=0)
    empty = equilibrium(table.iloc[0:0])
    assert empty.picks == []
    # each criterion that picked nothing says why (an empty table said nothing at all)
    assert list(empty.unpicked) == ["knee", "max_speed_x_efficiency", "efficiency_threshold"]
    assert empty.unpicked_labels == ["knee", "speed x efficiency", "E' >= 0.8 x best"]
    assert set(empty.unpicked.values()) == {"the table has no system"}
    assert (empty.benchmark, empty.scope, empty.pareto, empty.reference) == ("", "all", [], "")
    shown = repr(empty).splitlines()
    # its title names the empty table (it read "Equilibrium (, all)"), one line says why
    assert shown[0] == "Equilibrium (empty table, all):" and "(, " not in repr(empty)
    assert len(shown) == 3 and "the table has no system" in shown[1]


def test_knee_needs_three_counts() -> None:
    table = scaling_table(scores([("a", "X", 1, 10.0), ("b", "X", 2, 6.0)]), "bert")
    eq = equilibrium(table)
    assert eq.knee is None and "knee" in eq.unpicked
    # the two that pick agree on 2; the knee, which picked none, is not said to agree
    assert {p.accelerators for p in eq.picks} == {2} and len(eq.picks) == 2
    assert not eq.agreement.startswith("all criteria") and "knee picks none" in eq.agreement


def test_clusters_are_deterministic_and_ordered() -> None:
    rows = [*ladder(), ("x2", "A5000", 2, 300.0), ("x4", "A5000", 4, 160.0)]
    table = scaling_table(scores(rows), "bert")
    first = cluster_systems(table)
    second = cluster_systems(table)
    assert np.array_equal(first.labels, second.labels) and 2 <= first.k <= 6
    means = table.assign(c=first.labels).groupby("c")["accelerators"].mean()
    assert means.is_monotonic_increasing
    assert cluster_systems(table, k=3).k == 3
    assert cluster_systems(table.iloc[:2]).labels.tolist() == [0, 0]


def test_bootstrap_is_reproducible_and_covers_the_score() -> None:
    frame = scores(ladder())
    table = scaling_table(frame, "bert")
    runs = runs_for(frame)
    a = bootstrap_intervals(table, runs, n_boot=500, seed=7)
    b = bootstrap_intervals(table, runs, n_boot=500, seed=7)
    assert a.equals(b)
    assert (a["time_to_train_min_ci_low"] <= table["time_to_train_min"]).all()
    assert (a["time_to_train_min_ci_high"] >= table["time_to_train_min"]).all()
    ref = table["system_id"] == table["reference_system_id"]
    assert (a.loc[ref, "speedup_ci_low"] == 1.0).all()
    assert (a.loc[ref, "speedup_ci_high"] == 1.0).all()
    c = bootstrap_intervals(table, runs, n_boot=500, seed=8)
    assert not a.equals(c)


def test_bootstrap_needs_two_runs() -> None:
    frame = scores(ladder()[:3])
    table = scaling_table(frame, "bert")
    runs = runs_for(frame).groupby("system_id").head(1)
    ci = bootstrap_intervals(table, runs, n_boot=200)
    assert ci[list(CI_COLUMNS)].isna().all().all()
    assert (ci["ci_kept_apart"] == 0).all()  # nothing at the batch was kept apart


def test_systems_sharing_submitter_and_id_across_org_folders() -> None:
    # v4.0: smc-ac-power and smc-dc-power share the submitter name and system file stems.
    frame = scores([("box", "H100", 8, 10.0), ("big", "H100", 64, 2.0)])
    twin = frame.copy()
    twin["org"] = "Org-dc"
    twin["time_to_train_min"] = [20.0, 4.0]
    both = pd.concat([frame, twin], ignore_index=True)
    table = scaling_table(both, "bert", reference="Org-dc/box")
    intervals = bootstrap_intervals(table, runs_for(both, spread=0.02), n_boot=300)
    for pos, row in table.iterrows():
        low = intervals.loc[pos, "time_to_train_min_ci_low"]
        high = intervals.loc[pos, "time_to_train_min_ci_high"]
        assert low <= row["time_to_train_min"] <= high  # its own runs, not its twin's
    # the slower twins (20 min, 4 min) are dominated; keys carry the org folder
    assert equilibrium(table).pareto == ["Org/box", "Org/big"]


def test_no_cross_reference_pick_from_the_python_api() -> None:
    """equilibrium() itself (not only the CLI) makes no speed x efficiency or E' pick over
    systems measured against different references (``reference="family"``): a family with
    one system has E' = 1 by construction and would win."""
    from gpuscale.analysis.metrics import scaling_table

    from .tables import scores as scores_of

    scores = scores_of(
        [
            ("a8", "H100-SXM5-80GB", 8, 20.0),
            ("a64", "H100-SXM5-80GB", 64, 4.0),
            ("lone", "A100-PCIe-80GB", 32, 9.0),
        ]
    )
    picks = equilibrium(scaling_table(scores, "bert", reference="family"))
    assert picks.max_speed_x_efficiency is None and picks.efficiency_threshold is None
    assert picks.knee is not None or len(picks.pareto) > 0
    one_reference = equilibrium(scaling_table(scores, "bert"))
    assert one_reference.efficiency_threshold is not None


def test_a_criterion_that_picked_nothing_says_why() -> None:
    """The library result carries the reason the CLI prints: several references, too few
    counts for a knee; a criterion that picked says nothing there."""
    from .tables import scores as scores_of

    rows = [
        ("a8", "H100-SXM5-80GB", 8, 20.0),
        ("a64", "H100-SXM5-80GB", 64, 4.0),
        ("lone", "A100-PCIe-80GB", 32, 9.0),
    ]
    per_family = equilibrium(scaling_table(scores_of(rows), "bert", reference="family"))
    for criterion in ("max_speed_x_efficiency", "efficiency_threshold"):
        assert "several references" in per_family.unpicked[criterion]
    two = equilibrium(scaling_table(scores([("a", "X", 1, 10.0), ("b", "X", 2, 6.0)]), "bert"))
    assert two.unpicked == {"knee": "a knee needs 3 or more accelerator counts; the table has 2"}
    full = equilibrium(scaling_table(scores(ladder()), "bert"))
    assert full.unpicked == {} and len(full.picks) == 3


def test_why_none_picked_is_keyed_as_the_picks_whatever_the_threshold() -> None:
    """``unpicked`` is keyed by the criterion ids its picks are keyed by
    (``max_speed_x_efficiency``, ``efficiency_threshold``), one key at every threshold, in
    Python as in the JSON; the label (which moves with the threshold) beside the reason
    in the JSON, and from ``label_of`` in Python (it was keyed by label in Python: the
    key moved with --threshold)."""
    from gpuscale.analysis.document import equilibrium_json

    from .tables import scores as scores_of

    rows = [
        ("a8", "H100-SXM5-80GB", 8, 20.0),
        ("a64", "H100-SXM5-80GB", 64, 4.0),
        ("lone", "A100-PCIe-80GB", 32, 9.0),
    ]
    table = scaling_table(scores_of(rows), "bert", reference="family")
    for threshold in (0.8, 0.7):
        eq = equilibrium(table, threshold=threshold)
        assert {"max_speed_x_efficiency", "efficiency_threshold"} <= set(eq.unpicked)
        assert eq.label_of("efficiency_threshold") == f"E' >= {threshold:g} x best"
        shown = equilibrium_json(eq)
        unpicked = shown["unpicked"]
        assert {k: u["why"] for k, u in unpicked.items()} == eq.unpicked
        assert {"max_speed_x_efficiency", "efficiency_threshold"} <= set(unpicked)
        assert all(shown[k] is None for k in unpicked)  # each a pick's key, that pick none
        assert unpicked["efficiency_threshold"]["criterion"] == f"E' >= {threshold:g} x best"
        assert unpicked["max_speed_x_efficiency"]["criterion"] == "speed x efficiency"
        assert "several references" in unpicked["efficiency_threshold"]["why"]


def test_a_pick_across_hardware_carries_its_caution_in_python_too() -> None:
    """A walk: the README's `equilibrium(scaling_table(..., reference="family"))` gave a
    knee where the frontier changes from RTX A5000 to H100 with nothing said; the CLI
    said it only in its sentence. Each pick now carries its caution."""
    from gpuscale import load_round
    from gpuscale.analysis.frontier import fastest_per_count

    table = scaling_table(load_round("v4.1").scores, "bert", reference="family")
    knee = equilibrium(table).knee
    assert knee is not None
    upto = fastest_per_count(table)
    families = set(upto[upto["accelerators"] <= knee.accelerators]["accelerator_family"])
    assert len(families) > 1  # the data: the frontier crosses hardware up to the knee
    assert knee.caution and all(f in knee.caution for f in families)
    one = scaling_table(scores(ladder()), "bert")  # one family: nothing to caution
    assert [p.caution for p in equilibrium(one).picks] == ["", "", ""]


def test_every_pick_across_generations_carries_the_caution() -> None:
    """v0.7 MiniGo: against a V100 reference the all-systems knee picked 16 x A100 (E'
    1.82) with no caution (its frontier up to 16 is A100 alone), while the E' threshold's
    pick of the same system carried the 'hardware generations' one. Every pick whose
    family is not its reference's carries it: each criterion's and the fastest."""
    from gpuscale.analysis.crossing import system_crossing
    from gpuscale.analysis.frontier import fastest_per_count

    times = {8: 300.0, 16: 160.0, 32: 90.0, 64: 60.0, 128: 48.0, 256: 42.0}
    rows = [("v8", "V100", 8, 600.0)] + [(f"a{n}", "A100", n, t) for n, t in times.items()]
    table = scaling_table(scores(rows), "bert")
    assert set(table["reference_system_id"]) == {"v8"}  # the premise: one V100 reference
    picks = equilibrium(table)
    assert picks.knee is not None and picks.knee.accelerator_family == "A100"
    frontier = fastest_per_count(table)
    upto = frontier[frontier["accelerators"] <= picks.knee.accelerators]
    assert set(upto["accelerator_family"]) == {"A100"}  # no bend across hardware
    assert len(picks.picks) == 3
    for pick in picks.picks:
        assert "hardware generations" in pick.caution, (pick.criterion, pick.caution)
    fastest = table.loc[[table["time_to_train_min"].idxmin()]]
    assert "hardware generations" in system_crossing(table, fastest)
    reference = table[table["system_id"] == "v8"]
    assert system_crossing(table, reference) == ""


def test_a_knee_set_by_another_family_past_it_carries_the_caution() -> None:
    """v5.0 Llama 3.1 405B: the fastest systems are GB200 up to 2,048 accelerators, then
    H100 at 2,432, 2,560 and 8,192. GB200 alone has no knee; over all systems Kneedle
    bends at 2,048, where the hardware changes past it: the pick says so."""
    from gpuscale import load_round
    from gpuscale.analysis.frontier import fastest_per_count

    table = scaling_table(load_round("v5.0").scores, "llama31_405b")
    knee = equilibrium(table).knee
    assert knee is not None and (knee.accelerators, knee.accelerator_family) == (2048, "GB200")
    frontier = fastest_per_count(table)
    upto = frontier[frontier["accelerators"] <= 2048]
    past = frontier[frontier["accelerators"] > 2048]
    assert set(upto["accelerator_family"]) == {"GB200"}  # the premise: one family up to it
    assert set(past["accelerator_family"]) == {"GB200", "H100-SXM5-80GB"}
    gb200 = table[table["accelerator_family"] == "GB200"]
    assert equilibrium(gb200, scope="GB200").knee is None  # no bend within the family
    assert knee.caution == (
        "the fastest systems are GB200 up to 2,048 accelerators and H100-SXM5-80GB and "
        "GB200 past it, so this bend is where the hardware changes"
    )


def test_how_a_typed_scope_was_read_is_in_the_json_as_in_python() -> None:
    """``equilibrium(table, scope="H100")`` reads the scope as H100-SXM5-80GB and says so
    in ``.notes``; the JSON of that equilibrium left the notes out (nor did its repr say
    them): they are its ``notes``, and analyze -f json's equilibria carry the key too."""
    import json

    from typer.testing import CliRunner

    from gpuscale.analysis.document import equilibrium_json
    from gpuscale.cli import app

    rows = [("a8", "H100-SXM5-80GB", 8, 20.0), ("a64", "H100-SXM5-80GB", 64, 4.0)]
    eq = equilibrium(scaling_table(scores(rows), "bert"), scope="H100")
    assert eq.scope == "H100-SXM5-80GB"
    assert eq.notes == ["'H100' read as the accelerator family H100-SXM5-80GB"]
    assert equilibrium_json(eq)["notes"] == eq.notes
    run = CliRunner().invoke(app, ["analyze", "--round", "v4.1", "-b", "bert", "-f", "json"])
    assert run.exit_code == 0, run.output
    (document,) = json.loads(run.stdout)["rounds"]
    shown = [document["equilibrium"], *document["equilibrium_by_family"]]
    assert all(e["notes"] == [] for e in shown)  # scopes named whole: nothing to say
