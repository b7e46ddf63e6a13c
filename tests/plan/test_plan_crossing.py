"""Like with like includes hardware generation and software stack: a plan whose count
borrows another family's scaling (the measured pair its faster-than-linear cell cites) or
its level (a family that never ran the workload) says when that comparison crosses
either, from what to what, as fields of its rows (a walk: BERT on A100 at 4 cited
H100-PCIe's 2 -> 8 of v3.0 with no word that it was Hopper and another submitter's
software; that pair, of two submitters, now supports nothing: tests/plan/test_plan_linear);
and says what its "picked by" picked over."""

from __future__ import annotations

import json
import math
import re

from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.hardware.accelerators import generation
from gpuscale.hardware.catalogue import devices
from gpuscale.hardware.cited import data_rows
from gpuscale.planning.cache import default_fits
from gpuscale.planning.crossing import CROSSING_COLUMNS
from gpuscale.planning.request import PlanRequest
from gpuscale.planning.result import plan_result

from ..golden import Golden

runner = CliRunner()
VIEW = "plan/cli_notes"


def _rows(workload: str, family: str, devices_asked: str) -> list[dict]:
    request = PlanRequest(workload=workload, accelerator=family, devices=devices_asked)
    return plan_result(request, default_fits()).rows


def _submitters(workload: str, family: str) -> list[str]:
    own = default_fits()["workloads"][workload]["families"].get(family) or {"systems": []}
    return sorted({str(s[1]) for s in own["systems"]})


def test_a_family_s_generation_is_its_product_s_architecture() -> None:
    assert {generation(f) for f in ("A100-SXM4-40GB", "A100-SXM4-80GB", "A10G")} == {"Ampere"}
    assert {generation(f) for f in ("H100-PCIe-80GB", "H200-NVL-141GB")} == {"Hopper"}
    assert generation("B200") == generation("GB200") == "Blackwell"
    assert generation("MI325X") == generation("MI300X") == "CDNA 3"
    # a product of no named architecture is its own generation; an unknown name its own
    assert (generation("TPU-v5p"), generation("Gaudi2")) == ("TPU-v5p", "Gaudi2")
    assert generation("FooBar9000") == "FooBar9000"


def test_the_products_architecture_agrees_with_the_device_catalogue() -> None:
    # two tables name an architecture: where both have the product, they agree
    products = {r["product"]: r["architecture"] for r in data_rows("accelerator_products.csv")}
    both = [d for d in devices() if d.product in products]
    assert len(both) >= 20
    assert all(products[d.product] == d.architecture for d in both), [
        (d.product, d.architecture, products[d.product])
        for d in both
        if products[d.product] != d.architecture
    ]


def test_a_faster_than_linear_count_says_the_generation_and_stack_its_support_crosses(
    golden: Golden,
) -> None:
    """BERT on RTX 4090 at 32 rests on A100-SXM4-40GB's 16 -> 32 (v3.0, Dell's own pair):
    Ada Lovelace to Ampere, the RTX 4090's submitters' software to Dell's; BERT on
    A100-SXM4-80GB at 32, on the same pair, is Dell's too: another part of the same
    generation and stack, nothing crossed."""
    first, row = _rows("bert", "RTX 4090", "16,32")
    pair = row["beyond_linear_verdict"]["supported"][0]
    assert pair["family"] == "A100-SXM4-40GB" and pair["round"] == "v3.0"
    assert pair["one_submitter"] and pair["low"][1] == pair["high"][1] == "Dell"
    own = _submitters("bert", "RTX 4090")
    assert own and "Dell" not in own
    assert {c: row[c] for c in CROSSING_COLUMNS} == {
        "crosses": "hardware generation, software stack",
        "crosses_generation_from": "Ada Lovelace",
        "crosses_generation_to": "Ampere",
        "crosses_software_from": ", ".join(own),
        "crosses_software_to": "Dell",
    }
    assert all(first[c] == "" for c in CROSSING_COLUMNS)  # no comparison borrowed
    _, same = _rows("bert", "A100-SXM4-80GB", "16,32")
    pair = same["beyond_linear_verdict"]["supported"][0]
    assert pair["family"] == "A100-SXM4-40GB" and {pair["low"][1], pair["high"][1]} == {"Dell"}
    assert all(same[c] == "" for c in CROSSING_COLUMNS)
    # every view: JSON's fields, the answer's line under the table
    asked = ["plan", "-w", "bert", "-a", "RTX 4090", "-n", "16,32"]
    rows = json.loads(runner.invoke(app, [*asked, "-f", "json"]).stdout)["rows"]
    assert rows[1]["crosses_generation_to"] == "Ampere"
    assert rows[1]["crosses_software_to"] == "Dell"
    csv = runner.invoke(app, [*asked, "-f", "csv"]).stdout.splitlines()[0].split(",")
    assert set(CROSSING_COLUMNS) <= set(csv)
    said = " ".join(runner.invoke(app, asked).stdout.split())
    (line,) = re.findall(r"32: more than linear, .*?(?= picks | How each count)", said)
    golden.check(VIEW, "BERT on 16 and 32 RTX 4090: the support crosses", line)


def test_a_borrowed_level_says_the_generation_and_stack_it_crosses(golden: Golden) -> None:
    """Unet3d on MI325X (never run): its level comes from the families that ran it, none
    CDNA 3, so it crosses hardware generation; GigaComputing and Supermicro, MI325X's
    submitters, ran unet3d on other parts, so not software stack. BERT on TPU-v5p: both,
    from Google's software to BERT's submitters."""
    fits = default_fits()
    ran = fits["workloads"]["unet3d"]["families"]
    generations = sorted({generation(f) for f in ran})
    assert "CDNA 3" not in generations
    for row in _rows("unet3d", "MI325X", "8,64"):
        assert row["count_class"] == "iii"
        assert (row["crosses"], row["crosses_generation_from"]) == ("hardware generation", "CDNA 3")
        assert row["crosses_generation_to"] == ", ".join(generations)
        assert row["crosses_software_from"] == row["crosses_software_to"] == ""
    bert = {str(s[1]) for f in fits["workloads"]["bert"]["families"].values() for s in f["systems"]}
    (row,) = _rows("bert", "TPU-v5p", "64")
    assert row["crosses"] == "hardware generation, software stack"
    assert row["crosses_software_from"] == "Google" and "Google" not in bert
    assert row["crosses_software_to"] == ", ".join(sorted(bert))
    said = runner.invoke(app, ["plan", "-w", "unet3d", "-a", "MI325X", "-n", "8,64"]).stdout
    (line,) = re.findall(r"MI325X never ran unet3d: .*?(?= How each count)", " ".join(said.split()))
    golden.check(VIEW, "unet3d on MI325X: the level crosses", line)


def test_picked_by_says_what_it_picked_over(golden: Golden) -> None:
    """BERT on H100 at 8 to 256: E' >= 0.8 x best picks 32 over the plan's times against
    8; ``gpuscale analyze --round v4.1 -b bert`` picks 8 within H100 over v4.1's measured
    systems (its counts 4, 8, 16, 48, 64, 3,472; E' against its reference, Fujitsu's at
    4, the best a faster system there), so the plan names the counts, the reference and
    the best E' it picked against, and says analyze picks otherwise."""
    result = plan_result(
        PlanRequest(workload="bert", accelerator="H100", devices="8-256"), default_fits()
    )
    picks = result.model["picks"]
    times = {int(r["accelerators"]): r["time_to_train_min"] for r in result.rows}
    assert picks["among"] == [8, 16, 32, 64, 128, 256] and picks["reference"] == 8
    e = {n: times[8] * 8 / (times[n] * n) for n in times}  # E' against the plan at 8
    assert picks["best"] == max(e, key=e.get)
    assert math.isclose(picks["best_normalized_efficiency"], max(e.values()))
    floor = 0.8 * max(e.values())
    last = max(n for n in e if e[n] >= floor)
    (picked,) = [r for r in result.rows if "E' >= 0.8 x best" in r["stops_paying"]]
    assert int(picked["accelerators"]) == last == 32
    # the record of the picks: each count with the criteria the rows' column gives it
    assert picks["picked"] == [
        {"accelerators": int(r["accelerators"]), "by": r["stops_paying"].split(", ")}
        for r in result.rows
        if r["stops_paying"]
    ]
    said = " ".join(runner.invoke(app, ["plan", "-w", "bert", "-a", "H100"]).stdout.split())
    (line,) = re.findall(r"picks .*?count\.", said)
    assert "at the 6 counts asked without a flag (8 to 256)" in line
    golden.check(VIEW, "BERT on H100 at 8 to 256: what picked by picked over", line)
    one = plan_result(PlanRequest(workload="bert", accelerator="H100", devices="8"), default_fits())
    assert one.model["picks"] == {}  # one count: nothing picked over
    assert (one.model["no_pick"]["why"], one.model["no_pick"]["unflagged"]) == ("one_count", [8])


def test_analyze_says_the_best_e_prime_its_threshold_is_against(golden: Golden) -> None:
    """`analyze --round v4.1 -b bert` picks 8 within H100 where the plan picks 32: its
    E' is against Fujitsu's 4 x H100 (10.55 min), and its best E' is Dell's faster 4
    (10.19 min, 1.035), so the floor is 0.828 and 16 (Lambda's, 0.802) falls below it.
    The line under its table names that best, the largest ``family_normalized_efficiency``
    of the family's systems its CSV carries."""
    import io

    import pandas as pd

    asked = ["analyze", "--round", "v4.1", "-b", "bert"]
    rows = pd.read_csv(io.StringIO(runner.invoke(app, [*asked, "-f", "csv"]).stdout))
    h100 = rows[(rows["accelerator_family"] == "H100-SXM5-80GB") & rows["outlier"].isna()]
    best = h100.loc[h100["family_normalized_efficiency"].idxmax()]
    assert (best["submitter"], int(best["accelerators"])) == ("Dell", 4)
    fastest = h100.groupby("accelerators")["family_normalized_efficiency"].max()
    kept = fastest[fastest >= 0.8 * best["family_normalized_efficiency"]]
    picked = h100[h100["family_picks"].fillna("").str.contains("E' >= 0.8 x best")]
    assert int(picked["accelerators"].iloc[0]) == int(kept.index.max()) == 8
    assert 0.8 * best["family_normalized_efficiency"] > fastest[16]
    said = " ".join(runner.invoke(app, asked).stdout.split())
    (line,) = re.findall(r"within H100-SXM5-80GB, against its own: .*? at 4\)", said)
    assert f"best E' {best['family_normalized_efficiency']:.3f} (Dell/" in line
    golden.check(VIEW, "analyze v4.1 BERT: the best E' within H100", line)
