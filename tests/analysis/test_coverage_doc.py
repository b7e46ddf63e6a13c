"""The interval coverage the README, docs/analysis.md and docs/coverage.md quote is the
output file's (``benchmarks/results/interval_coverage.json``, written by ``python
benchmarks/interval_coverage.py``): every case's row, and the ranges per law family
(issue 57: docs/analysis.md once quoted the goal, 92-97%, as if it were the measurement;
issue 59: the laws are the issue's, continuous and whole-epoch, 5 and 10 runs)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULT = json.loads((ROOT / "benchmarks" / "results" / "interval_coverage.json").read_text())
DOC = (ROOT / "docs" / "coverage.md").read_text()
BLOCK = DOC.split("<!-- interval-coverage:begin")[1].split("<!-- interval-coverage:end")[0]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _span(values: list[float]) -> str:
    return f"{_pct(min(values))}-{_pct(max(values))}"


def groups() -> dict[str, list[dict]]:
    """The cases by law family: continuous, whole epochs with pace noise, without."""
    cases = RESULT["cases"]
    epochs = [c for c in cases if c["family"] == "epochs"]
    return {
        "continuous": [c for c in cases if c["family"] == "continuous"],
        "epochs with pace noise": [c for c in epochs if c["pace noise"] > 0],
        "epochs without": [c for c in epochs if c["pace noise"] == 0],
    }


def test_the_file_is_the_default_run_of_every_law_with_5_and_10_runs() -> None:
    cases = RESULT["cases"]
    assert {(c["trials"], c["boot"]) for c in cases} == {(600, 600)}
    laws = {c["law"] for c in cases}
    assert len(cases) == 2 * len(laws) == 30
    assert {c["runs"] for c in cases} == {5, 10}
    assert RESULT["met"] == all(c["met"] for c in cases)
    assert all(c["zero width"] == 0 for c in cases)  # never a zero-width time interval


def _benchmark(name: str = "interval_coverage"):
    """A script of benchmarks/ (``interval_laws``: the laws it reads, beside it)."""
    folder = str(ROOT / "benchmarks")
    if folder not in sys.path:  # the script imports its sibling, as when it is run
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_docs_table_is_the_output_files() -> None:
    bench = _benchmark()
    rows = [line for line in BLOCK.splitlines() if line.startswith("|")]
    assert "\n".join(rows) == bench.markdown(RESULT)
    assert len(rows) == len(RESULT["cases"]) + 2  # a header and its rule


def test_the_exact_law_of_the_olympic_score_and_of_a_ratio() -> None:
    """3 or 4 epochs, P(4) = 0.1, 5 runs: the olympic score is 3 with 0, 1 runs at 4
    (0.9^5 + 0.5 x 0.9^4 = 0.91854), 10/3 with 2 (10 x 0.01 x 0.729), 11/3 with 3
    (10 x 0.001 x 0.81), 4 with 4 or 5. Two results' speedup is the truth when their
    scores agree: the sum of the squares, 0.849096; a symmetric fixed-width interval
    covers either that (or 85.0%) or 98.4%, nothing in 92-97%."""
    laws = _benchmark("interval_laws")
    atoms, probs = laws.olympic_law((3, 4), (0.9, 0.1), 5)
    assert np.allclose(atoms, [3, 10 / 3, 11 / 3, 4])
    assert np.allclose(probs, [0.91854, 0.0729, 0.0081, 0.00046])
    bounds = laws.exact_bounds(("epochs", (3, 4), (0.9, 0.1)), 0.0, 5)
    assert bounds["S same"] == pytest.approx(0.849096, abs=1e-6)
    assert bounds["S attainable"] == pytest.approx(0.9842, abs=1e-4)
    assert bounds["S exact law"] == pytest.approx(0.9842, abs=1e-4)
    assert laws.exact_bounds(("normal", 0.02), 0.0, 5) is None  # continuous: any
    assert laws.exact_bounds(("epochs", (3, 4), (0.7, 0.3)), 0.01, 5) is None  # pace noise


def test_a_law_estimated_from_the_runs_over_covers_the_speedup_where_one_count_holds_most() -> None:
    """3 or 4 epochs, P(4) = 0.1, 5 runs: an interval from the law the pool shows and one
    from the law of the other systems' runs alone both cover the speedup above 97% (a
    width that varies with the data does not bring it into 92-97%); at P(4) = 0.5 the law
    without the pair does cover 92-97%. Three counts or a pace noise: not computed."""
    laws = _benchmark("interval_laws")
    rng = np.random.default_rng(0)
    low = laws.estimated_law_bounds(("epochs", (3, 4), (0.9, 0.1)), 0.0, 5, rng)
    assert set(low) == {"S pool law", "S without the pair"}
    assert min(low.values()) > 0.97
    even = laws.estimated_law_bounds(("epochs", (3, 4), (0.5, 0.5)), 0.0, 5, rng)
    assert 0.92 <= even["S without the pair"] <= 0.97
    three = ("epochs", (3, 4, 5), (0.1, 0.5, 0.4))
    assert laws.estimated_law_bounds(three, 0.0, 5, rng) is None
    assert laws.estimated_law_bounds(("epochs", (3, 4), (0.7, 0.3)), 0.01, 5, rng) is None


def test_speed_md_quotes_the_estimated_laws_coverage_from_the_file() -> None:
    """The ranges docs/coverage.md (and docs/analysis.md) give for the speedup's intervals
    from an estimated law: the law without the pair where the case is met, both laws where
    it is not."""
    cases = [c for c in RESULT["cases"] if "S pool law" in c]
    met = [c["S without the pair"] for c in cases if c["met"]]
    missed = [c[k] for c in cases if not c["met"] for k in ("S pool law", "S without the pair")]
    assert met and missed
    assert f"the law without the pair covers {_span(met).replace('%-', '-')}" in _flat(DOC)
    assert f"both cover {_span(missed).replace('%-', '-')}" in _flat(DOC)
    analysis = _flat((ROOT / "docs" / "analysis.md").read_text())
    assert f"estimated from the runs ({_span(missed).replace('%-', '-')})" in analysis


def test_cases_not_met_are_either_within_a_fixed_widths_reach_or_marked() -> None:
    bench = _benchmark()
    for case in RESULT["cases"]:
        exact = case["family"] == "epochs" and case["pace noise"] == 0
        assert ("T attainable" in case) == exact, case["law"]
        assert 0.0 < case.get("S same", 0.5) <= case.get("S attainable", 1.0) + 1e-6
    said = sum(not c["met"] and not bench.in_reach(c) for c in RESULT["cases"])
    assert f"{said} out of reach of a fixed width and of an estimated law" in _flat(DOC)
    counts = {name: law[1] for name, (_, law, _) in bench.LAWS.items() if law[0] == "epochs"}
    two = [c for c in RESULT["cases"] if "T attainable" in c and len(counts[c["law"]]) == 2]
    assert two and all("S pool law" in c and "S without the pair" in c for c in two)


def test_readme_analysis_md_and_speed_md_quote_the_ranges_per_family() -> None:
    readme = _flat((ROOT / "README.md").read_text())
    analysis = _flat((ROOT / "docs" / "analysis.md").read_text())
    for name, cases in groups().items():
        assert cases, name
        t = _span([c["T"] for c in cases])
        s = _span([c[w] for c in cases for w in ("S", "E'")])
        said = f"{name}: T {t}, speedup and E' {s}"
        for where, text in (("README", readme), ("analysis", analysis), ("speed", BLOCK)):
            assert said in _flat(text), (where, said)
    said = f"600 trials per case, 600 resamples, {RESULT['seconds']} s"
    assert said in _flat(DOC)
    met = f"met in {sum(c['met'] for c in RESULT['cases'])} of {len(RESULT['cases'])} cases"
    for where, text in (("README", readme), ("analysis", analysis), ("speed", DOC)):
        assert met in _flat(text).lower(), (where, met)


def test_the_method_set_beside_a_fixed_width_is_the_files_coverage() -> None:
    """docs/coverage.md sets the method's coverage of T beside what a fixed width reaches
    (3/4 epochs, p 0.5, 5 runs): both are that case's in the file, so a rerun that moves
    the method's figure fails here."""
    (case,) = [c for c in RESULT["cases"] if c["law"] == "3/4 epochs, p 0.5" and c["runs"] == 5]
    reach = f"{100 * case['T attainable']:.0f}%"
    said = f"3/4 epochs, p 0.5, 5 runs: a fixed width covers 81.3% or {reach} of T, the method"
    assert f"{said} {_pct(case['T'])})" in _flat(DOC)
