"""What a plan may say at a count, held against the measured results themselves: no time
where no system of the workload ran so few devices, so few samples per device or so far
beyond; super-linear throughput and far extrapolations flagged; the sentences true of
the data (user walk: 156,164 min for a 405B model on one H100, efficiency 1.35 shown
plainly, "the family's own results at these counts" where the family had none)."""

from __future__ import annotations

import json
import math
import re

import pandas as pd
import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.mlperf.bundled import load_round
from gpuscale.planning import plan
from gpuscale.planning.cache import default_fits
from gpuscale.planning.limits import (
    Reach,
    batch_below,
    batch_below_flag,
    batch_beyond,
    batch_flag,
    global_batch_beyond,
    reach,
    refusals,
)
from gpuscale.planning.predict import (
    fewest_per_device,
    floor_per_device,
    minutes_at_batch,
    plannable,
    predict_point,
)
from gpuscale.planning.request import PlanRequest
from gpuscale.planning.result import plan_result
from gpuscale.planning.systems import timed
from gpuscale.quantities import format_minutes, number
from gpuscale.tables.workloads import round_key
from tests.plan.test_plan_consistency import check_superlinear
from tests.plan.test_plan_model import OLD, _scores

POWERS = [2**k for k in range(17)]  # 1 to 65,536 devices


@pytest.fixture(scope="module")
def measured(bundled) -> pd.DataFrame:
    """The closed-division results with a time: what the plan is fitted on."""
    scores = bundled.scores
    return scores[(scores["division"] == "closed") & scores["time_to_train_min"].notna()]


@pytest.fixture(scope="module")
def sweep(measured) -> list[tuple[str, str, pd.DataFrame]]:
    """(workload, family, plan at 1 to 65,536 devices) for the three families that ran
    each workload most, and one that never ran it."""
    out = []
    for workload, runs in measured.groupby("workload"):
        families = runs["accelerator_family"].value_counts().index[:3].tolist()
        for family in [*families, "RTX 4090"]:
            try:
                out.append(
                    (workload, family, plan(workload=workload, accelerator=family, devices=POWERS))
                )
            except ValueError:  # nothing links the family to the workload
                continue
    assert len(out) >= 30
    return out


def _count(text: str) -> int:
    """A count as the sentences write it (``1,024``)."""
    return int(text.replace(",", ""))


def _no_time(row) -> bool:
    return all(
        math.isnan(row[c])
        for c in ("time_to_train_min", "time_to_train_min_low", "time_to_train_min_high")
    )


def test_no_time_below_the_smallest_count_any_system_ran(sweep, measured) -> None:
    """Every planned count under the fewest devices any system (any family, any round)
    ran the workload on has no time, says why, and is picked by nothing."""
    below = 0
    for workload, _, table in sweep:
        smallest = measured.loc[measured["workload"] == workload, "accelerators"].min()
        for _, row in table[table["accelerators"] < smallest].iterrows():
            below += 1
            assert _no_time(row) and math.isnan(row["throughput_efficiency"])
            assert f"on fewer than {smallest:,} accelerators" in row["flags"]
            assert not row["pareto"] and row["stops_paying"] == ""
        inside = table[(table["accelerators"] >= smallest) & (table["accelerators"] <= 1024)]
        inside = inside[inside["global_batch"] >= inside["accelerators"]]
        assert inside["time_to_train_min"].notna().all(), workload
    assert below >= 12  # every workload's 1 device at least


def test_gpt3_on_eight_24gb_cards_has_no_time(measured) -> None:
    table = plan(workload="gpt3", accelerator="RTX 4090", devices=[8])
    assert measured.loc[measured["workload"] == "gpt3", "accelerators"].min() > 8
    assert _no_time(table.iloc[0])
    assert any("No time at 8 accelerators" in n for n in table.attrs["notes"])


def test_less_than_one_sample_per_device_has_no_time_where_none_ran_so_few() -> None:
    """X1 ran global batches of 64 on 8-64 devices (one sample or more each): at 128 the
    plan holds the batch at 64, half a sample per device, which no system ran."""
    rows = [(OLD, "bert", "X1", n, 800.0 / n, 64) for n in (8, 16, 32, 64) for _ in range(2)]
    scores = _scores(rows)
    table = plan(workload="bert", accelerator="X1", devices=[8, 64, 128], scores=scores)
    fewest = (scores["global_batch_size"] / scores["accelerators"]).min()
    assert fewest >= 1
    assert table.apply(_no_time, axis=1).any()
    for _, row in table.iterrows():
        assert ("less than one sample per accelerator" in row["flags"]) == _no_time(row)
        if _no_time(row):  # no time, no batch it assumed: blank
            assert pd.isna(row["global_batch"]) and pd.isna(row["batch_per_accelerator"])
        else:
            assert row["global_batch"] >= row["accelerators"]


def test_no_unflagged_row_is_super_linear(sweep, measured) -> None:
    """Throughput per device above the project's super-linear threshold of a smaller
    count the family ran, where the per-device batch cannot explain it, is flagged, with
    the reason, and kept out of the picks; a rise the per-device batch explains is not
    (``check_superlinear``: the flag is a property of the count, not of the smallest
    count asked)."""
    flagged = 0
    for workload, _, table in sweep:
        runs = measured[measured["workload"] == workload]
        family = table.attrs["model"]["family"]
        own = runs[runs["accelerator_family"] == family]
        ran = set((own if len(own) else runs)["accelerators"].dropna())
        flagged += check_superlinear(table.to_dict("records"), {int(n) for n in ran})
        for _, row in table[table["flags"].str.contains("super-linear")].iterrows():
            assert not row["pareto"] and row["stops_paying"] == ""
    assert flagged  # the bundled data hold some (DLRM on H100 PCIe from 4 to 8)


def test_far_beyond_the_data_is_said_and_too_far_has_no_time(sweep, measured) -> None:
    """Beyond one octave past the largest count any system ran: flagged as far beyond the
    data; beyond three: no time (docs/plan.md)."""
    far = 0
    for workload, _, table in sweep:
        largest = measured.loc[measured["workload"] == workload, "accelerators"].max()
        said = " ".join(table.attrs["notes"])
        for _, row in table.iterrows():
            octaves = math.log2(row["accelerators"] / largest)
            if octaves > 3:
                assert _no_time(row) and "octaves beyond the largest count" in row["flags"]
            elif octaves > 1 and not _no_time(row):
                far += 1
                assert "far beyond the data" in row["flags"]
                assert f"{row['accelerators']:,}" in said.split("far beyond the data at ")[1]
            elif octaves <= 1:
                assert "beyond the largest count" not in row["flags"]
    assert far


def _said(batch: float) -> str:
    """A per-device batch as a flag says it: whole samples in full (1,056, not 1,060)."""
    whole = round(batch)
    return f"{whole:,}" if math.isclose(batch, whole, rel_tol=1e-9) else number(batch)


def _over(
    table: pd.DataFrame, column: str, most: float, flag: str, below: bool = False
) -> list[pd.Series]:
    """The timed rows of ``table`` whose ``column`` is above ``most`` (``below``: below
    it; beyond float rounding), each flagged ``flag`` and kept out of the picks; every
    other row, refused ones too, is checked not to carry the flag."""
    assert all(flag not in f for f in table.loc[table["time_to_train_min"].isna(), "flags"])
    over = []
    for _, row in table[table["time_to_train_min"].notna()].iterrows():
        bound = most * (1 - 1e-9 if below else 1 + 1e-9)
        above = row[column] < bound if below else row[column] > bound
        assert (flag in row["flags"]) == above, (column, row["accelerators"], row["flags"])
        if above:
            assert not row["pareto"] and row["stops_paying"] == ""
            over.append(row)
    return over


def test_a_per_device_batch_beyond_any_result_is_flagged(sweep, measured) -> None:
    """A walk: `plan -w bert -a H100 -n 2,4` assumed 479 samples per device at 2, where no
    BERT result ran over 256, and the fit credited it throughput per device, said nowhere.
    A row planned above the most samples per device any result of the workload ran is
    flagged, naming its batch, that most and the newest round that ran it, and kept out
    of the picks; no other row is."""
    flagged = set()
    for workload, family, table in sweep:
        runs = measured[measured["workload"] == workload]
        per = runs["global_batch_size"] / runs["accelerators"]
        most = per.max()
        newest = max(runs.loc[per >= most * (1 - 1e-9), "round"], key=round_key)
        for row in _over(table, "batch_per_accelerator", most, "batch beyond the data"):
            flagged.add((workload, family, int(row["accelerators"])))
            flags = row["flags"]
            assert f"{number(row['batch_per_accelerator'])} samples per accelerator " in flags
            assert f"(at most {number(most)}: " in flags and f" in {newest}" in flags
    assert ("bert", "H100-SXM5-80GB", 2) in flagged


def test_a_per_device_batch_below_any_result_is_flagged(sweep, bundled) -> None:
    """A walk: `plan -w bert -a A100-SXM4-80GB -n 512,1024` planned 1,024 at 3 samples per
    device, where no BERT result ran under 4, unflagged and picked by "speed x
    efficiency" (Stable Diffusion at 1 per device on 2,048, none under 2; DLRM, R-GAT,
    RNN-T likewise). A timed row planned below the fewest samples per device any result of
    the workload ran is flagged, naming that fewest and the newest round that ran it, and
    kept out of the picks; no other row is, and a row with no time keeps its refusal
    alone."""
    flagged, once = set(), timed(bundled.scores)  # a result republished counted once
    for workload, _, table in sweep:
        runs = once[once["workload"] == workload]
        per = runs["global_batch_size"] / runs["accelerators"]
        fewest = per.min()
        newest = max(runs.loc[per <= fewest * (1 + 1e-9), "round"], key=round_key)
        for row in _over(table, "batch_per_accelerator", fewest, "batch below", below=True):
            flagged.add((workload, int(row["accelerators"])))
            assert f"(at least {_said(fewest)}: " in row["flags"]
            assert f" in {newest}" in row["flags"]
    wanted = {("dlrm_dcnv2", 256), ("rgat", 1024), ("rnnt", 1024), ("stable_diffusion", 2048)}
    assert wanted <= flagged
    table = plan(workload="bert", accelerator="A100-SXM4-80GB", devices=[512, 1024])
    assert list(table["batch_per_accelerator"]) == [6, 3]
    assert _over(table, "batch_per_accelerator", 4, "batch below the data", below=True)
    assert list(table["stops_paying"]) == ["", ""]  # 1,024 was picked: speed x efficiency


def test_the_batch_below_record_names_the_fewest_and_who_ran_it() -> None:
    """The row's record carries the numbers the flag says: BERT on 1,024 A100s at 3 a
    device against 4 (H100 in v3.1, two results), Stable Diffusion on 2,048 H100s at 1
    against 2 (TPU v5p in v4.1, four), DLRM at 528 against 1,056, R-GAT at 256 against
    512; none at a per-device batch some result ran (BERT on 512 A100s, 6 a device; 4 a
    device, the fewest itself) nor on a refused row (BERT on 8,200 H100s)."""
    fits = default_fits()
    cases = [
        ("bert", "A100-SXM4-80GB", 1024, 3, 4, ("H100-SXM5-80GB", "v3.1", 2)),
        ("stable_diffusion", "H100", 2048, 1, 2, ("TPU-v5p", "v4.1", 4)),
        ("dlrm_dcnv2", "H100", 256, 528, 1056, ("H100-SXM5-80GB", "v4.1", 4)),
        ("rgat", "H100", 1024, 256, 512, ("H100-SXM5-80GB", "v4.1", 2)),
    ]
    for workload, family, n, per, least, by in cases:
        request = PlanRequest(workload=workload, accelerator=family, devices=str(n))
        (row,) = plan_result(request, fits).rows
        below = row["batch_below"]
        assert below["batch_per_accelerator"] == pytest.approx(per)
        assert below["least_per_accelerator"] == pytest.approx(least)
        assert below["least_per_accelerator"] == fewest_per_device(fits["workloads"][workload])
        assert (below["family"], below["round"], below["results"]) == by
        assert row["flags"].count("batch below the data") == 1
    for n in (512,):
        point = predict_point(fits, "bert", "A100-SXM4-80GB", n)
        below = batch_below(fits, "bert", "A100-SXM4-80GB", point)
        assert point["global_batch"] / n == 6 and below is None
    point = predict_point(fits, "bert", "A100-SXM4-80GB", 1024)
    at_fewest = dict(point, global_batch=4 * 1024)  # the fewest, float rounding aside
    assert batch_below(fits, "bert", "A100-SXM4-80GB", at_fewest) is None
    request = PlanRequest(workload="bert", accelerator="RTX 4090", devices="65536")
    (row,) = plan_result(request, fits).rows  # 0.86 a device: refused, that reason alone
    assert row["assumed_batch"] / 65536 < 1 and row["flags"].startswith("no time: ")
    assert row["batch_below"] is None and "batch below" not in row["flags"]


def test_a_batch_below_the_data_gives_the_plan_at_the_nearest_count_that_keeps_it() -> None:
    """A walk: `plan -w bert -a A100-SXM4-80GB -n 1024` flagged 3 samples per device below
    BERT's fewest, 4, and said no alternative. The record's ``instead`` is the plan at the
    largest smaller count whose own batch keeps 4 a device within the data: every count
    between it and 1,024 plans fewer (checked count by count, not by the search's grid),
    and its time is the plan's there; Stable Diffusion on 2,048 H100s, 1 a device
    against 2, falls back to 1,024, as the counts between plan a global batch above the
    most any result ran."""
    fits = default_fits()
    cases = [
        ("bert", "A100-SXM4-80GB", 1024, 976, 3904),
        ("stable_diffusion", "H100-SXM5-80GB", 2048, 1024, 2048),
        ("rgat", "H100-SXM5-80GB", 1024, 512, 262144),
    ]
    for workload, family, n, m, batch in cases:
        request = PlanRequest(workload=workload, accelerator=family, devices=str(n))
        (row,) = plan_result(request, fits).rows
        instead = row["batch_below"]["instead"]
        assert (instead["accelerators"], instead["global_batch"]) == (m, batch)
        at = predict_point(fits, workload, family, m)
        assert instead["time_to_train_min"] == at["time_to_train_min"]
        least = fewest_per_device(fits["workloads"][workload])
        assert instead["batch_per_accelerator"] >= least
        data = reach(fits["workloads"][workload])
        for k in range(m + 1, n):
            p = predict_point(fits, workload, family, k)
            kept = p["global_batch"] / k >= least * (1 - 1e-9)
            assert not kept or global_batch_beyond(fits, workload, p, data), (workload, k)
        said = f"on {m:,} accelerators, the nearest smaller count that keeps it"
        assert said in row["flags"]
        assert format_minutes(at["time_to_train_min"]) in row["flags"]
    # none smaller keeps it: said so, no number
    point = predict_point(fits, "bert", "A100-SXM4-80GB", 2)
    thin = dict(point, global_batch=2)  # 1 a device on 2, BERT's smallest count any ran
    below = batch_below(fits, "bert", "A100-SXM4-80GB", thin)
    assert below is not None and below["instead"] is None
    assert "no smaller count with a time keeps" in batch_below_flag(below, "bert")


def test_a_whole_per_device_batch_is_said_in_full_by_every_reason() -> None:
    """DLRM's fewest, 1,056 a device, is 1,056.0000000000007 as a quotient: the flags
    said "1,060"; a batch a float's rounding from whole is said whole, in full, by the
    refusal and both per-device flags (a fractional one keeps its digits: 0.188)."""
    data = Reach("dlrm_dcnv2", 4, 128, 1056.0000000000007)
    (why,) = refusals(4, 2.0, data)
    assert "ran fewer than 1,056 samples per accelerator" in why
    beyond = {"batch_per_accelerator": 6912.000000000001, "most_per_accelerator": 5120.0}
    beyond |= {"family": "H100", "round": "v4.1", "results": 1, "global_batch": 20480}
    said = batch_flag(beyond | {"time_to_train_min": 3.0}, "dlrm_dcnv2")
    assert "6,912 samples per accelerator assumed" in said and "(at most 5,120: " in said
    (why,) = refusals(4, 0.5, Reach("llama31_405b", 4, 128, 0.1875))
    assert "fewer than 0.188 samples" in why


def test_a_global_batch_beyond_any_result_is_flagged(sweep, measured) -> None:
    """A walk: `plan -w llama2_70b_lora -a A100-SXM4-80GB -n 256,1024` assumed 256 and
    1,024 samples a step (A100's one submission ran 8 times the workload's typical batch,
    a ratio carried to every count), where no result ran over 128 and the convergence
    references stop at 128: 65.1 min on 1,024, unflagged and picked, where at 128 the plan
    gives 10.3. A row planned above the largest global batch any result of the workload
    ran is flagged, naming its batch and that largest, and kept out of the picks; no
    other row is."""
    flagged = set()
    sweeps = [*sweep, ("llama2_70b_lora", "A100-SXM4-80GB", None)]
    for workload, family, table in sweeps:
        if table is None:
            table = plan(workload=workload, accelerator=family, devices=[64, 256, 1024])
        most = measured.loc[measured["workload"] == workload, "global_batch_size"].max()
        for row in _over(table, "global_batch", most, "global batch above the data"):
            flagged.add((workload, family, int(row["accelerators"])))
            assert f"{row['global_batch']:,} samples a step assumed" in row["flags"]
            assert f"(at most {most:,.0f}: " in row["flags"]
    assert {("llama2_70b_lora", "A100-SXM4-80GB", n) for n in (256, 1024)} <= flagged
    assert ("llama2_70b_lora", "A100-SXM4-80GB", 64) not in flagged  # its own batch, 64


def test_a_global_batch_flag_quotes_no_time_at_fewer_samples_per_device_than_ran() -> None:
    """Llama2 LoRA ran 128 samples a step at most and 0.125 per device at least (1,024
    H100s): on 2,048 and 4,096 H100s no batch within 128 gives a device 0.125 samples, so
    the flag says so and quotes no time (it quoted 0.706 and 0.351 min at batch 128, 1/16
    and 1/32 of a sample per device, against the row's own 1.244 min at 256); on 1,024 the
    largest batch is 0.125 per device, runnable, and its time is quoted."""
    fits = default_fits()
    least = floor_per_device(fits["workloads"]["llama2_70b_lora"])
    assert least == pytest.approx(0.125)
    table = plan(workload="llama2_70b_lora", accelerator="H100", devices=[1024, 2048, 4096])
    for _, row in table.iterrows():
        point = predict_point(fits, "llama2_70b_lora", "H100-SXM5-80GB", int(row["accelerators"]))
        above = global_batch_beyond(fits, "llama2_70b_lora", point)
        if above is None:
            continue
        n = int(row["accelerators"])
        if above["global_batch"] is None:
            assert n in (2048, 4096) and math.isnan(above["time_to_train_min"])
            assert "0.125 samples or more, the fewest any result ran" in row["flags"]
            assert "the plan gives" not in row["flags"].split("global batch above")[1]
        else:
            assert above["global_batch"] / n >= least * (1 - 1e-9)
    flagged = table.set_index("accelerators")["flags"]
    assert all("global batch above the data" in flagged[n] for n in (2048, 4096))


def test_a_global_batch_flag_quotes_a_time_only_at_a_per_device_batch_that_ran(
    sweep, measured
) -> None:
    """`plan -w bert -a H100 -n 8200` quoted "at a global batch of 8,200, the plan gives
    0.0537 min", half the row's own 0.1016 min, at 1 sample per device where no BERT
    result ran under 4 (a 6.9 ms step against the 18.3 ms of the fastest result, 3,472
    H100s): the refusal's floor of one sample per device stood for the fewest that ran.
    Now a time is quoted only at a per-device batch some result of the workload ran."""
    fits = default_fits()
    checked = 0
    for workload, family, table in sweep:
        runs = measured[measured["workload"] == workload]
        fewest = (runs["global_batch_size"] / runs["accelerators"]).min()
        for n in table["accelerators"]:
            point = predict_point(fits, workload, family, int(n))
            above = global_batch_beyond(fits, workload, point)
            if above is None or above["global_batch"] is None:
                continue
            assert above["global_batch"] / int(n) >= fewest * (1 - 1e-9), (workload, family, n)
            checked += 1
    assert checked
    table = plan(workload="bert", accelerator="H100", devices=[4096, 8200])
    for flags in table["flags"]:
        said = flags.split("global batch above the data")[1]
        assert "the plan gives" not in said
        assert "each accelerator 4 samples or more, the fewest any result ran" in said


def test_the_time_at_the_most_any_result_ran_is_the_plans_at_that_batch() -> None:
    """The flag's time is the plan's own at a global batch of the most per device times
    the count: at a point's own batch the same function gives the point's time, for every
    plannable family of every workload from 1 to 1,024 devices; BERT's 448 a device on 2
    H100s is held against 256 (v4.0, three results), a global batch of 512."""
    fits = default_fits()
    families = sorted({f for w in fits["workloads"].values() for f in w["families"]})
    checked = 0
    for workload in fits["workloads"]:
        for family in (f for f in families if plannable(fits, workload, f)):
            for n in (1, 2, 3, 8, 64, 1024):
                point = predict_point(fits, workload, family, n)
                again = minutes_at_batch(fits, workload, point, point["global_batch"])
                assert math.isclose(again, point["time_to_train_min"], rel_tol=1e-12)
                checked += 1
    assert checked > 500
    point = predict_point(fits, "bert", "H100-SXM5-80GB", 2)
    beyond = batch_beyond(fits, "bert", point)
    assert beyond is not None and point["global_batch"] == 896
    assert beyond["batch_per_accelerator"] == 448 and beyond["most_per_accelerator"] == 256
    assert (beyond["family"], beyond["round"], beyond["results"]) == ("H100-PCIe-80GB", "v4.0", 3)
    assert beyond["global_batch"] == 512
    # within what was run: no record (4 is a count H100 ran, at its own batch)
    assert batch_beyond(fits, "bert", predict_point(fits, "bert", "H100-SXM5-80GB", 4)) is None


def test_the_rise_sentence_names_only_counts_that_were_run(sweep, measured) -> None:
    """Where throughput per device rises with no larger per-device batch, the sentence
    says a family's own results only at counts it ran between the two, and the shared
    shape's results only at counts some family ran."""
    checked = 0
    for workload, _, table in sweep:
        runs = measured[measured["workload"] == workload]
        family = table.attrs["model"]["family"]
        named = next((n for n in table.attrs["notes"] if "with no larger per-device" in n), "")
        if not named:
            continue
        checked += 1
        low, high = (_count(v) for v in re.findall(r"rises from ([\d,]+) to ([\d,]+)", named)[0])
        reason = named.split("with no larger per-device batch: ")[1]
        own = set(runs.loc[runs["accelerator_family"] == family, "accelerators"])
        if "own results at" in reason:
            counts = re.findall(r"own results at (.+?) ran", reason)[0]
            assert all(low <= _count(c) <= high and _count(c) in own for c in counts.split(", "))
        if "newest results at" in reason:
            counts = re.findall(r"newest results at (.+?) sit", reason)[0]
            # the counts the anchor rests on: ran by the family, at or around the two
            assert all(_count(c) in own for c in counts.split(", "))
        assert "at these counts" not in reason or own & set(range(low, high + 1))
        if "fitted on the results of" in reason:
            counts = reason.split(" at ")[-1].rstrip(".")
            assert all(_count(c) in set(runs["accelerators"]) for c in counts.split(", "))
    assert checked


def test_the_cli_says_what_the_library_says() -> None:
    """``gpuscale plan -f json`` is ``gpuscale.plan``: the same flags, no time where the
    library has none."""
    asked = ["-w", "llama31_405b", "-a", "H100", "-n", "1,2,256,512"]
    result = CliRunner().invoke(app, ["plan", *asked, "-f", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    table = plan(workload="llama31_405b", accelerator="H100", devices=[1, 2, 256, 512])
    assert [r["flags"] for r in rows] == table["flags"].tolist()
    for r, minutes in zip(rows, table["time_to_train_min"], strict=True):
        assert (r["time_to_train_min"] is None) == math.isnan(minutes)


def test_a_count_without_a_time_leans_on_nothing() -> None:
    """After the rule above, the terminal still said "1 accelerator leans on: ... Eos-dfw
    (512 devices)" of a count with no time."""
    asked = ["plan", "-w", "llama31_405b", "-a", "H100", "-n", "1,256,512", "--explain"]
    result = CliRunner().invoke(app, asked)
    assert result.exit_code == 0, result.output
    leaning = re.findall(r"^([\d,]+) accelerators? leans? on:", result.stdout, re.M)
    timed = plan(workload="llama31_405b", accelerator="H100", devices=[1, 256, 512])
    has_time = timed[timed["time_to_train_min"].notna()]["accelerators"].tolist()
    assert has_time and [_count(n) for n in leaning] == has_time


def test_counts_of_the_same_flags_are_said_in_one_line() -> None:
    """The terminal's answer said a refusal once per count (`plan -w llama31_405b -a H100`,
    the default counts: four 3-line sentences alike for 8 to 64) where --explain groups
    them: now one line per flags, naming its counts, each flagged count in one line."""
    counts = [8, 16, 32, 64, 128, 256]
    asked = ["plan", "-w", "llama31_405b", "-a", "H100", "-n", ",".join(map(str, counts))]
    result = CliRunner().invoke(app, asked)
    assert result.exit_code == 0, result.output
    heads = re.findall(r"^([\d, and]+): no time: ", result.stdout, re.M)
    said = [[_count(c) for c in re.split(r", | and ", head)] for head in heads]
    table = plan(workload="llama31_405b", accelerator="H100", devices=counts)
    groups: dict[str, list[int]] = {}
    for n, flags in zip(table["accelerators"], table["flags"], strict=True):
        if flags:
            groups.setdefault(flags, []).append(int(n))
    assert said == list(groups.values()) == [[8, 16, 32, 64], [128]]


def test_one_count_may_be_given_as_a_number() -> None:
    """A walk: `gpuscale.plan(..., devices=8)` was a TypeError; `--devices 8` is one count."""
    one = plan(workload="bert", accelerator="H100", devices=8)
    assert one.equals(plan(workload="bert", accelerator="H100", devices="8"))
    with pytest.raises(TypeError, match="not True"):  # a flag is no count
        plan(workload="bert", accelerator="H100", devices=True)


@pytest.mark.parametrize("data", ["round", "offline", "path"])
def test_the_clis_data_options_point_python_at_scores(data: str) -> None:
    """A walk: `gpuscale.plan(..., round="v5.0")`, as `plan --round v5.0` reads, was "no
    keyword 'round'" with nothing to give instead; the round is passed as its scores."""
    with pytest.raises(TypeError, match=f"no keyword '{data}'") as refused:
        plan(workload="bert", accelerator="B200", devices=[8], **{data: "v5.0"})
    assert "scores=" in str(refused.value)
    v50 = plan(workload="bert", accelerator="B200", devices=[8], scores=load_round("v5.0").scores)
    assert v50.attrs["model"]["round"] == "v5.0" and v50["time_to_train_min"].iloc[0] > 0


def test_one_count_is_no_count_where_more_stops_paying() -> None:
    """A walk: `plan -w bert -a H100 -n 8` marked 8 as where every criterion stops paying,
    with nothing to compare it with."""
    one = plan(workload="bert", accelerator="H100", devices=[8])
    assert list(one["stops_paying"]) == [""]
    several = plan(workload="bert", accelerator="H100", devices=[8, 16, 64])
    assert (several["stops_paying"] != "").any()  # the criteria pick among counts


@pytest.mark.parametrize(
    ("workload", "accelerator"), [("bert", "H100"), ("resnet", "A100-PCIe-80GB")]
)
def test_below_the_data_no_time_never_says_a_model_that_fits_may_not(workload, accelerator):
    """`plan -w bert -a H100 -n 1` said "no time: ... so the model may not fit in fewer"
    beside its memory line "H100-SXM5-80GB's 80 GiB hold it from 1 device"."""
    table = plan(workload=workload, accelerator=accelerator, devices=[1])
    assert table.attrs["model"]["memory"]["fewest_devices"] == 1  # it fits one device
    flags = table["flags"].iloc[0]
    assert _no_time(table.iloc[0]) and "on fewer than 2 accelerators" in flags  # the premise
    assert "fit" not in flags, flags
