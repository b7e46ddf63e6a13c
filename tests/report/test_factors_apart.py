""" "Why not more" names the factor of E' that falls most at the next count first; where
the two read alike at the digits shown, neither is named the winner: both limit it (v4.1
RetinaNet: convergence 0.8655 against throughput 0.8679 once read "convergence x0.866 at
32 (throughput x0.868)", a winner on a 0.002 difference)."""

from __future__ import annotations

from dataclasses import replace

from gpuscale.analysis import AnalysisOptions
from gpuscale.analysis.analyze import analyze
from gpuscale.mlperf.load import load_round
from gpuscale.report.page import recommendation_rows
from gpuscale.report.recommend import recommend


def test_factors_alike_at_the_digits_shown_both_limit_it() -> None:
    (result,) = analyze(load_round("v4.1"), ["retinanet"], AnalysisOptions(n_boot=100))
    rec = recommend(result)
    assert f"{rec.throughput_ratio:.2f}" == f"{rec.convergence_ratio:.2f}" == "0.87"
    assert rec.throughput_ratio != rec.convergence_ratio
    why = recommendation_rows([rec])[0]["Why not more"]
    assert why.startswith(
        f"both limit it: throughput and convergence each x0.87 at {rec.next_accelerators:,}"
    ), why
    # two that differ at the digits shown: the one that falls most first, the other after
    apart = replace(rec, throughput_ratio=0.82, convergence_ratio=0.95, decides="throughput")
    said = recommendation_rows([apart])[0]["Why not more"]
    assert said.startswith(f"throughput x0.82 at {rec.next_accelerators:,} (convergence x0.95)")
