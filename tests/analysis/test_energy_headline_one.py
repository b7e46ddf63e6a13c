"""The energy headline's result among its workload's: "the least of its 3 results", and
with one result "its only result", never "the least of its 1 results"."""

from __future__ import annotations

import pandas as pd

from gpuscale.analysis.energy_per_result import energy_headline
from gpuscale.report.text_table import cell_text


def _rows(kj: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "workload": ["bert"] * len(kj),
            "energy_kj": kj,
            "energy_per_sample_j": [0.5] * len(kj),
            "system_name": [f"sys{i}" for i in range(len(kj))],
            "submitter": ["Acme"] * len(kj),
            "accelerators": [8] * len(kj),
            "accelerator_family": ["H100-SXM5-80GB"] * len(kj),
            "round": ["v4.0"] * len(kj),
            "power_scope": ["DC"] * len(kj),
        }
    )


def test_one_result_is_its_only_result() -> None:
    (line,) = energy_headline(_rows([1790.0]))
    assert line.endswith("its only result") and "1 results" not in line


def test_several_results_name_the_least_of_them() -> None:
    (line,) = energy_headline(_rows([2000.0, 1790.0, 2500.0]))
    assert "1,790 kJ" in line and line.endswith("the least of its 3 results")
    assert "sys1" in line


def test_among_benchmarks_the_headline_says_why_its_benchmark_not_the_least_of_all() -> None:
    """BERT's three results against one of RetinaNet's that takes less: the headline is
    BERT's least (the most counted benchmark), said as such, not the least of the table."""
    frame = pd.concat(
        [_rows([2000.0, 1790.0, 2500.0]), _rows([500.0]).assign(workload="retinanet")]
    )
    (line,) = energy_headline(frame)
    head, rest = line.split(": ", 1)
    assert "BERT" in head and "most results" in head  # why BERT, where RetinaNet takes less
    assert rest.split(" kJ")[0] == "1,790" and "500 kJ" not in line
    assert "sys1" in rest and "1 other benchmark" in rest


def test_the_headline_says_the_energy_as_the_table_shows_it() -> None:
    """16,384.3 kJ is the table's 16,380 (four significant figures): the headline above it
    says the same figure, not 16,384 (one number read as two)."""
    (line,) = energy_headline(_rows([16_384.3, 20_000.0]))
    assert cell_text(16_384.3, None) == "16,380"
    assert f" {cell_text(16_384.3, None)} kJ" in line and "16,384" not in line


def test_the_least_among_other_hardware_or_power_scopes_says_so() -> None:
    """Like with like: the least of results on one family at one power scope is said
    bare; among two families, or AC beside DC, the crossing is said with its counts."""
    same = energy_headline(_rows([2000.0, 1790.0]))[0]
    assert "not like with like" not in same
    frame = _rows([2000.0, 1790.0, 2500.0])
    frame.loc[2, "accelerator_family"] = "B200"
    frame.loc[1, "power_scope"] = "AC"
    (line,) = energy_headline(frame)
    assert "across 2 accelerator families and power scopes AC and DC: not like with like" in line


def test_a_benchmark_tied_for_most_results_is_said_as_the_first_of_them() -> None:
    """Four benchmarks with one result each: the one said is the first of the tied, never
    "the benchmark with the most results"."""
    frame = pd.concat([_rows([1790.0]).assign(workload=w) for w in ("bert", "gpt3")])
    (line,) = energy_headline(frame)
    assert "the first of 2 benchmarks with 1 result each" in line
    assert "the benchmark with the most results" not in line
    most = pd.concat([_rows([1790.0, 2000.0]), _rows([1.0]).assign(workload="gpt3")])
    assert "the benchmark with the most results here" in energy_headline(most)[0]
