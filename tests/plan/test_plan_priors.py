"""The plan's prior interval widths are data, fitted on development forecasts that no
accuracy figure judges (``benchmarks/plan_priors.py``: v1.1 from v0.7, v3.0 from both),
and scaled to the class (i) width at hand where that rests on enough forecasts."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpuscale.planning.calibrate import EVIDENCE_CASES, class_prior, intervals
from gpuscale.planning.predict import CLASSES, DEFAULT_INTERVALS, PRIORS_FILE

ROOT = Path(__file__).resolve().parents[2]
STORED = json.loads((ROOT / "src" / "gpuscale" / "data" / PRIORS_FILE).read_text())


def test_the_plan_reads_the_stored_priors() -> None:
    assert {k: DEFAULT_INTERVALS[k] for k in (*CLASSES, "widen")} == {
        k: STORED[k] for k in (*CLASSES, "widen")
    }
    assert STORED["rounds"] == ["v0.7", "v1.1", "v3.0"]  # none of them judged forward
    assert all(STORED[f"cases_{k}"] >= 10 for k in CLASSES)  # no prior from a handful


def test_a_prior_scales_with_the_class_i_width_at_hand() -> None:
    few = {"i": 0.05, "cases_i": EVIDENCE_CASES - 1}
    many = {"i": 0.05, "cases_i": EVIDENCE_CASES}
    assert class_prior("iii", few) == DEFAULT_INTERVALS["iii"]
    ratio = DEFAULT_INTERVALS["iii"] / DEFAULT_INTERVALS["i"]
    assert class_prior("iii", many) == pytest.approx(0.05 * ratio)
    assert class_prior("i", many) == DEFAULT_INTERVALS["i"]


def test_no_forecast_of_a_class_gives_its_prior() -> None:
    cases = pd.DataFrame(
        {
            "count_class": ["i"] * 3,
            "log_error": [0.01, -0.02, 0.03],
            "octaves_outside": [0.0] * 3,
            "evidence": [{"pairs": 5}] * 3,
            "evidence_factor": [1.0] * 3,
        }
    )
    found = intervals(cases)
    assert found["cases_iii"] == 0 and found["iii"] == pytest.approx(DEFAULT_INTERVALS["iii"])
    assert found["i"] < DEFAULT_INTERVALS["i"]  # three small errors pull it in
    assert np.isfinite(found["ii_out"])


def _priors_module():
    spec = importlib.util.spec_from_file_location("plan_priors", ROOT / "benchmarks/plan_priors.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_between_and_beyond_are_set_against_class_i_in_the_same_cell() -> None:
    """A cell (round, workload, family) counts where it holds forecasts of class (i) and of
    between or beyond: the ratio of their median errors (beyond: divided by its widening
    for the octaves outside, 1.25 at one octave); a cell of one kind alone is left out."""
    rows = [  # (workload, class, octaves outside, log error)
        ("bert", "i", 0.0, 0.1),
        ("bert", "i", 0.0, -0.3),  # median |error| 0.2
        ("bert", "ii_in", 0.0, 0.4),
        ("bert", "ii_out", 1.0, -0.5),  # 0.5 / 1.25 = 0.4
        ("resnet", "ii_in", 0.0, 0.9),  # no class (i) forecast in its cell
        ("rnnt", "i", 0.0, 0.05),  # no between or beyond in its cell
    ]
    planned = pd.DataFrame(
        [
            {"round": "v3.0", "workload": w, "family": "A100", "count_class": k}
            | {"octaves_outside": o, "log_error": e}
            for w, k, o, e in rows
        ]
    )
    (cell,) = _priors_module().cells(planned, widen=0.25)
    assert cell["cell"] == ["v3.0", "bert", "A100"] and cell["cases"] == 2
    assert cell["ratio"] == pytest.approx(2.0)


def test_the_stored_between_and_beyond_priors_are_class_i_times_the_cells_median() -> None:
    ratios = [c["ratio"] for c in STORED["cells"]]
    assert STORED["factor"] == pytest.approx(float(np.median(ratios)))
    for kind in ("ii_in", "ii_out"):
        assert STORED[kind] == pytest.approx(STORED["i"] * STORED["factor"])
        assert STORED[f"cases_{kind}"] == sum(c["cases"] for c in STORED["cells"])


@pytest.mark.shared
@pytest.mark.slow
def test_the_stored_priors_are_what_the_development_rounds_give(shared_archive) -> None:
    shared_archive("v0.7")  # skip without the raw rounds
    module = _priors_module()
    found = module.priors(module.development_systems(shared_archive("v0.7").parent))
    for key in CLASSES:
        assert found[key] == pytest.approx(STORED[key], rel=1e-9)
        assert found[f"cases_{key}"] == STORED[f"cases_{key}"]


def test_the_plan_page_quotes_the_stored_priors() -> None:
    page = " ".join((ROOT / "docs" / "plan.md").read_text().split())
    widths = ", ".join(f"{STORED[k]:.2f}" for k in CLASSES[:3]) + f" and {STORED['iii']:.2f}"
    assert f"widths {widths} in log" in page
    cases = [STORED[f"cases_{k}"] for k in CLASSES]
    assert f"{cases[0]}, {cases[1]} (between and beyond together" in page
    assert f"{cases[2]} and {cases[3]} forecasts" in page
    cells = len(STORED["cells"])
    assert f"class (i)'s width times {STORED['factor']:.2f}, the median over the {cells}" in page
