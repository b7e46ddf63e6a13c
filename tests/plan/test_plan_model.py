"""The plan's model on synthetic scores tables where the true law is known."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import gpuscale
from gpuscale.planning import PlanError, PlanRequest, parse_devices, plan
from gpuscale.planning.model import choose_law

# Rounds no ruleset knows: no RCPs, so time itself is modelled (E = 1).
OLD, NEW = "v9.0", "v9.1"


def _scores(rows: list[tuple]) -> pd.DataFrame:
    """A scores table: (round, workload, family, devices, minutes, batch) per system."""
    return pd.DataFrame(
        [
            {
                "round": r,
                "first_round": r,
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


def amdahl_table(serial: float, newer: float = 0.8, noise: float = 0.01) -> pd.DataFrame:
    """Systems of one family on bert in two rounds, times from Amdahl (the newer round
    ``newer`` times the older one's), with a deterministic +-noise pattern."""
    rows = []
    for k, n in enumerate((8, 16, 32, 64, 128)):
        wiggle = 1 + noise * (-1) ** k
        rows.append((OLD, "bert", "X1", n, amdahl_minutes(n, serial) * wiggle, 32 * n))
    for k, n in enumerate((8, 32, 128)):
        wiggle = 1 - noise * (-1) ** k
        rows.append((NEW, "bert", "X1", n, newer * amdahl_minutes(n, serial) * wiggle, 32 * n))
    return _scores(rows)


def test_recovers_amdahl_serial_fraction_and_the_newest_level() -> None:
    serial = 0.04
    table = plan(workload="bert", accelerator="X1", devices="8-512", scores=amdahl_table(serial))
    facts = table.attrs["model"]
    assert facts["law"] == "amdahl"
    assert abs((1 - facts["params"][0]) - serial) <= 0.01
    truth = np.array([0.8 * amdahl_minutes(n, serial) for n in table["devices"]])
    error = np.abs(table["minutes"].to_numpy() / truth - 1)
    assert error.max() < 0.03, error  # including 256 and 512, beyond the measured 128
    assert list(table["extrapolated"]) == [False] * 5 + [True] * 2
    # an extrapolation's interval is wider (relative) than an interpolation's
    width = table["minutes_high"] / table["minutes_low"]
    assert width.iloc[-1] > width.iloc[-2] > width.iloc[3]
    assert (table["minutes_low"] < table["minutes"]).all()
    assert (table["minutes"] < table["minutes_high"]).all()
    assert any("amdahl" in note and "v9.1" in note for note in table.attrs["notes"])


def test_ideal_scaling_is_chosen_when_times_halve() -> None:
    rows = [(OLD, "bert", "X1", n, 800.0 / n, 32 * n) for n in (8, 16, 32, 64)]
    table = plan(workload="bert", accelerator="X1", devices=[8, 256], scores=_scores(rows))
    assert table.attrs["model"]["law"] in ("ideal", "power")
    assert table["minutes"].iloc[1] == pytest.approx(800.0 / 256, rel=0.02)


def test_out_of_sample_choice_finds_the_amdahl_shape() -> None:
    """USL with no coherency term is Amdahl (serial fraction = contention): either law
    may win by a hair, but the shape chosen must be Amdahl's with the true fraction."""
    n = np.array([8, 16, 32, 64, 128, 256], float)
    t = np.array([amdahl_minutes(x, 0.1) for x in n]) * (1 + 0.02 * np.sin(n))
    choice = choose_law(n, np.log(t), [OLD] * len(n))
    assert set(choice.scores) == {"ideal", "power", "amdahl", "usl"}
    assert min(choice.scores["amdahl"], choice.scores["usl"]) < choice.scores["power"] / 3
    fitted = choice.fitted
    if fitted.law == "usl":
        serial, coherency = fitted.params
        assert coherency < 1e-5
    else:
        assert fitted.law == "amdahl"
        serial = 1 - fitted.params[0]
    assert serial == pytest.approx(0.1, abs=0.01)


def test_republished_copies_count_once() -> None:
    table = amdahl_table(0.04)
    copy = table[table["round"] == OLD].assign(round=NEW, first_round=OLD, time_to_train_min=1.0)
    planned = plan(workload="bert", accelerator="X1", devices=[8], scores=pd.concat([table, copy]))
    assert planned.attrs["model"]["systems"] == len(table)
    assert planned["minutes"].iloc[0] == pytest.approx(80.0, rel=0.03)


def test_batch_follows_the_submissions() -> None:
    scores = amdahl_table(0.04)
    table = plan(workload="bert", accelerator="X1", devices=[8, 64, 1024], scores=scores)
    assert table["global_batch"].to_numpy() == pytest.approx([256, 2048, 32768], rel=0.01)


def test_another_workloads_ratio_is_borrowed_with_a_wider_interval() -> None:
    rows = [
        (OLD, w, "X1", n, f * 800.0 / n, 32 * n)
        for w, f in (("bert", 1), ("resnet", 3))
        for n in (8, 16, 32)
    ]
    rows += [(OLD, "resnet", "Y2", n, 1.5 * 3 * 800.0 / n, 32 * n) for n in (8, 16)]
    scores = _scores(rows)
    own = plan(workload="bert", accelerator="X1", devices=[16], scores=scores)
    borrowed = plan(workload="bert", accelerator="Y2", devices=[16], scores=scores)
    assert borrowed["minutes"].iloc[0] == pytest.approx(1.5 * own["minutes"].iloc[0], rel=0.02)
    assert bool(borrowed["extrapolated"].iloc[0])
    ratio = borrowed["minutes_high"] / borrowed["minutes_low"]
    assert ratio.iloc[0] > (own["minutes_high"] / own["minutes_low"]).iloc[0]
    assert any("No Y2 system ran bert" in note for note in borrowed.attrs["notes"])


def test_refuses_when_nothing_supports_an_answer() -> None:
    rows = [(OLD, "bert", "X1", n, 800.0 / n, 32 * n) for n in (8, 16)]
    rows += [(OLD, "resnet", "Y2", 8, 50.0, 256)]
    with pytest.raises(PlanError, match=r"no Y2 system ran bert.*nothing supports a plan"):
        plan(workload="bert", accelerator="Y2", devices=[8], scores=_scores(rows))


def test_cost_energy_and_equilibrium_columns() -> None:
    table = plan(
        workload="bert",
        accelerator="X1",
        devices=[8, 16, 32, 64, 128],
        price_per_device_hour=2.0,
        power_w=500,
        scores=amdahl_table(0.1),
    )
    assert table["cost"].to_numpy() == pytest.approx(2.0 * table["device_hours"].to_numpy())
    assert table["energy_kwh"].to_numpy() == pytest.approx(0.5 * table["device_hours"])
    # device-hours grow with N under Amdahl, so every count is on the Pareto front, and
    # the speed x efficiency and threshold criteria each pick one count
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
    with pytest.raises(ValueError, match="device counts"):
        PlanRequest(workload="bert", accelerator="H100", devices=[0, 8])
