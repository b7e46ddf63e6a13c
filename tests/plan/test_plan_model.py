"""The plan's model on synthetic scores tables where the truth is known."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import gpuscale
from gpuscale.planning import PlanError, PlanRequest, parse_devices, plan
from gpuscale.tables import SCORES_COLUMNS
from gpuscale.tables.plan import NEAREST_KEYS, PLAN_SCHEMA

# Rounds no ruleset knows: no RCPs, so time itself is modelled (convergence 1).
OLD, NEW = "v9.0", "v9.1"


def _scores(rows: list[tuple]) -> pd.DataFrame:
    """A scores table: (round, workload, family, devices, minutes, batch) per system."""
    return pd.DataFrame(
        [
            {
                "round": r,
                "first_round": r,
                "same_runs_as": "",
                "org": "Acme",
                "submitter": "Acme",
                "system_id": f"{f}_{n}_{r}_{k}",
                "system_name": f"{n}x{f}",
                "division": "closed",
                "accelerator_family": f,
                "accelerators": n,
                "benchmark": w,
                "workload": w,
                "time_to_train_min": t,
                "global_batch_size": b,
                "samples_to_converge": math.nan,
            }
            for k, (r, w, f, n, t, b) in enumerate(rows)
        ]
    )


def amdahl_minutes(n: float, serial: float, t8: float = 100.0) -> float:
    """Time on n devices when 8 devices take t8 and ``serial`` of that does not scale."""
    return t8 * (serial + (1 - serial) * 8 / n)


def two_families(serial: float = 0.05, ratio: float = 0.5) -> pd.DataFrame:
    """X1 measured at 8-256 on bert (three systems at each count, +-1%); Y2, ``ratio``
    times X1's time, only at 8 and 16."""
    rows = []
    for n in (8, 16, 32, 64, 128, 256):
        for wiggle in (0.99, 1.0, 1.01):
            rows.append((OLD, "bert", "X1", n, amdahl_minutes(n, serial) * wiggle, 32 * n))
    for n in (8, 16):
        rows.append((OLD, "bert", "Y2", n, ratio * amdahl_minutes(n, serial), 32 * n))
    return _scores(rows)


def test_a_family_measured_at_two_counts_takes_the_shared_shape_beyond_them() -> None:
    """Y2 never ran 64 or 256: its plan there follows X1's (Amdahl) shape at Y2's level,
    not ideal scaling from its own two points (59% too fast at 256). The shared shape is
    smoothed (its second differences are penalised), hence a few percent."""
    table = plan(workload="bert", accelerator="Y2", devices=[8, 64, 256], scores=two_families())
    truth = np.array([0.5 * amdahl_minutes(n, 0.05) for n in (8, 64, 256)])
    error = np.abs(table["time_to_train_min"].to_numpy() / truth - 1)
    assert error.max() < 0.05, error
    assert list(table["count_class"]) == ["i", "ii_out", "ii_out"]
    assert list(table["extrapolated"]) == [False, True, True]
    width = (table["time_to_train_min_high"] / table["time_to_train_min_low"]).to_numpy()
    assert width[2] > width[1] > width[0]  # wider the further beyond the counts it ran


def test_a_workload_run_at_one_count_scales_ideally_beyond_it() -> None:
    """Nothing measures the shape: ideal scaling (time halves per doubling), finite."""
    scores = _scores([(OLD, "bert", "X1", 8, 40.0, 256)])
    table = plan(workload="bert", accelerator="X1", devices=[8, 16, 64], scores=scores)
    assert table["time_to_train_min"].tolist() == pytest.approx([40.0, 20.0, 5.0], rel=0.01)
    assert list(table["count_class"]) == ["i", "ii_out", "ii_out"]


def test_between_two_counts_is_class_ii_inside() -> None:
    scores = two_families()
    scores = scores[~((scores.accelerator_family == "X1") & (scores.accelerators == 32))]
    table = plan(workload="bert", accelerator="X1", devices=[16, 32, 64], scores=scores)
    assert list(table["count_class"]) == ["i", "ii_in", "i"]
    assert table["time_to_train_min"].iloc[1] == pytest.approx(amdahl_minutes(32, 0.05), rel=0.03)


def test_one_newer_result_moves_the_level_less_than_half_its_way() -> None:
    """Three v9.0 results at 8 take 100 min; one v9.1 result at 64 is 9% faster than
    v9.0's law: the v9.1 level at 8 moves towards it, but by less than half (one result
    against two results' worth of "no change"; the shape takes a part too), where the old
    plan moved every count by the newest round's full level."""
    rows = [(OLD, "bert", "X1", n, amdahl_minutes(n, 0.05), 32 * n) for n in (8, 8, 8, 16, 64)]
    rows.append((NEW, "bert", "X1", 64, 0.91 * amdahl_minutes(64, 0.05), 32 * 64))
    table = plan(workload="bert", accelerator="X1", devices=[8], scores=_scores(rows))
    moved = table["time_to_train_min"].iloc[0] / 100.0 - 1
    assert -0.045 < moved < -0.005, moved


def test_an_outlier_does_not_move_the_other_counts() -> None:
    """A submission at four times the others' time (a slower software stack) at 16."""
    clean = two_families()
    odd = _scores([(OLD, "bert", "X1", 16, 4 * amdahl_minutes(16, 0.05), 512)])
    with_odd = pd.concat([clean, odd], ignore_index=True)
    counts = [8, 32, 64, 256]
    base = plan(workload="bert", accelerator="X1", devices=counts, scores=clean)[
        "time_to_train_min"
    ]
    moved = plan(workload="bert", accelerator="X1", devices=counts, scores=with_odd)[
        "time_to_train_min"
    ]
    assert np.abs(moved.to_numpy() / base.to_numpy() - 1).max() < 0.01


def test_the_batch_follows_the_workloads_steps_between_far_apart_counts() -> None:
    """X1 (like Llama2) keeps a global batch of 8 up to 64 devices, then 8 x N / 64; Y2 ran
    8 and 512 only: at 16 and 32 it is assumed to keep 8 too, not a straight line in
    log between 8 and 64."""
    rows = [(OLD, "llama", "X1", n, 800.0 / n, max(8, n // 8)) for n in (8, 16, 32, 64, 512)]
    rows += [(OLD, "llama", "Y2", n, 400.0 / n, max(8, n // 8)) for n in (8, 512)]
    table = plan(workload="llama", accelerator="Y2", devices=[16, 32, 512], scores=_scores(rows))
    assert list(table["global_batch"]) == [8, 8, 64]
    assert table["batch_per_accelerator"].tolist() == pytest.approx([0.5, 0.25, 0.125])


def test_a_family_that_never_ran_the_workload_borrows_its_speed_elsewhere() -> None:
    """Y2 is 1.5x slower than X1 on resnet; on bert (never run by Y2) it is planned at
    1.5x X1's bert time, class iii, with the widest interval."""
    rows = [
        (OLD, w, "X1", n, f * 800.0 / n, 32 * n)
        for w, f in (("bert", 1), ("resnet", 3))
        for n in (8, 16, 32)
    ]
    rows += [(OLD, "resnet", "Y2", n, 1.5 * 3 * 800.0 / n, 32 * n) for n in (8, 16)]
    scores = _scores(rows)
    own = plan(workload="bert", accelerator="X1", devices=[16], scores=scores)
    borrowed = plan(workload="bert", accelerator="Y2", devices=[16], scores=scores)
    assert borrowed["time_to_train_min"].iloc[0] == pytest.approx(
        1.5 * own["time_to_train_min"].iloc[0], rel=0.02
    )
    assert borrowed["count_class"].iloc[0] == "iii" and bool(borrowed["extrapolated"].iloc[0])
    ratio = borrowed["time_to_train_min_high"] / borrowed["time_to_train_min_low"]
    assert ratio.iloc[0] > (own["time_to_train_min_high"] / own["time_to_train_min_low"]).iloc[0]
    assert any("no Y2 system ran bert" in note for note in borrowed.attrs["notes"])


def test_refuses_when_nothing_links_the_family_to_the_workload() -> None:
    rows = [(OLD, "bert", "X1", n, 800.0 / n, 32 * n) for n in (8, 16)]
    rows += [(OLD, "resnet", "Y2", 8, 50.0, 256)]
    with pytest.raises(PlanError, match=r"no Y2 system ran bert.*nothing supports a plan"):
        plan(workload="bert", accelerator="Y2", devices=[8], scores=_scores(rows))


def test_copies_count_once() -> None:
    """A result republished in a later round, and one repeated under a second system name
    in its round (``same_runs_as``), are fitted once."""
    table = two_families()
    copy = table[table["round"] == OLD].assign(round=NEW, first_round=OLD, time_to_train_min=1.0)
    twin = table.iloc[:1].assign(system_id="twin", same_runs_as="Acme/X1_8", time_to_train_min=1.0)
    planned = plan(
        workload="bert", accelerator="X1", devices=[8], scores=pd.concat([table, copy, twin])
    )
    assert planned.attrs["model"]["systems"] == 18
    assert planned["time_to_train_min"].iloc[0] == pytest.approx(100.0, rel=0.02)


def test_a_system_without_an_accelerator_count_is_left_out() -> None:
    """The scores' nullable count (``Int64``; a CPU-only system has none) is read, the
    system without one left out: it was a ValueError on the bundled rounds."""
    table = two_families()
    cpu = table.iloc[:1].assign(system_id="cpu", accelerator_family="CPU only")
    scores = pd.concat([table, cpu], ignore_index=True)
    scores["accelerators"] = scores["accelerators"].astype("Int64")
    scores.loc[len(table), "accelerators"] = pd.NA
    planned = plan(workload="bert", accelerator="X1", devices=[8], scores=scores)
    assert planned.attrs["model"]["systems"] == 18
    assert planned["time_to_train_min"].iloc[0] == pytest.approx(100.0, rel=0.02)


def test_cost_energy_and_equilibrium_columns() -> None:
    table = plan(
        workload="bert",
        accelerator="X1",
        devices=[8, 16, 32, 64, 128],
        price_per_device_hour=2.0,
        power_w=500,
        scores=two_families(serial=0.1),
    )
    assert table["cost"].to_numpy() == pytest.approx(2.0 * table["accelerator_hours"].to_numpy())
    assert table["energy_kwh"].to_numpy() == pytest.approx(0.5 * table["accelerator_hours"])
    # device-hours grow with N under Amdahl: every count is on the Pareto front, and the
    # speed x efficiency and threshold criteria each pick one count
    assert table["pareto"].all()
    picked = ", ".join(table["stops_paying"])
    assert "speed x efficiency" in picked and "E' >= 0.8 x best" in picked
    assert table["throughput_efficiency"].iloc[0] == pytest.approx(1.0)
    assert (np.diff(table["throughput_efficiency"]) < 0).all()


def test_devices_parsing_and_request_round_trip() -> None:
    assert parse_devices("8,16, 64") == (8, 16, 64)
    assert parse_devices("8-64") == (8, 16, 32, 64)
    assert parse_devices("8-32:8") == (8, 16, 24, 32)
    for bad in ("", "8,x", "64-8", "0-4:0"):
        with pytest.raises(ValueError):
            parse_devices(bad)
    request = PlanRequest(workload="bert", accelerator="H100", devices="8-32", power_w=700.0)
    assert request.devices == (8, 16, 32)
    assert gpuscale.plan is plan and gpuscale.PlanRequest is PlanRequest  # the public API
    assert PlanRequest.from_json(request.to_json()) == request
    with pytest.raises(ValueError, match="unknown plan request field"):
        PlanRequest.from_json('{"workload": "bert", "accelerator": "H100", "gpus": 8}')
    with pytest.raises(ValueError, match="price_per_device_hour"):
        PlanRequest(workload="bert", accelerator="H100", price_per_device_hour=-1.0)
    with pytest.raises(ValueError, match=r"invalid devices \[0, 8\]: counts must be from 1"):
        PlanRequest(workload="bert", accelerator="H100", devices=[0, 8])


def test_the_table_is_its_schema_and_names_facts_as_the_scores_do() -> None:
    """Columns and dtypes as ``PLAN_SCHEMA`` says; the count and the time carry the names
    (and units) of the scores table, so a plan lines up with the measured results."""
    table = plan(workload="bert", accelerator="X1", devices=[8, 64], scores=two_families(0.1))
    assert {c: str(d) for c, d in table.dtypes.items()} == PLAN_SCHEMA
    shared = set(PLAN_SCHEMA) & set(SCORES_COLUMNS)
    assert {"accelerators", "time_to_train_min"} <= shared
    assert set(NEAREST_KEYS) & set(SCORES_COLUMNS) >= {"accelerators", "time_to_train_min"}


@pytest.mark.parametrize(
    ("text", "bad"),
    [
        ("-5", "-5"),
        ("8,-5", "-5"),
        ("- 3", "- 3"),
        ("0", "0"),
        ("8,0", "0"),
        ("2000000", "2000000"),
    ],
)
def test_a_count_out_of_range_is_said_with_the_count_not_unreadable(text: str, bad: str) -> None:
    """`-n 0` and `-n -1` are refused alike: the range and the count that is outside it."""
    with pytest.raises(ValueError, match=f"^counts must be from 1 to 1,000,000 \\(not {bad}\\)$"):
        parse_devices(text)


@pytest.mark.parametrize(("devices", "bad"), [([0], "0"), ([8, 2_000_000], "2,000,000")])
def test_counts_given_as_numbers_out_of_range_name_the_count(devices: list, bad: str) -> None:
    with pytest.raises(ValueError, match=f"counts must be from 1 to 1,000,000 \\(not {bad}\\)"):
        PlanRequest(workload="bert", accelerator="H100", devices=devices)
