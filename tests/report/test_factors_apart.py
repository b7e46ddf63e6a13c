""" "Why not more" names the factor of E' that falls most at the next count first: where the
two round alike at two decimals, both are written to the decimals that tell them apart, so
the one said to decide reads as the smaller (v4.1 RetinaNet: convergence 0.8655 against
throughput 0.8679, once written x0.87 and x0.87)."""

from __future__ import annotations

import re

from gpuscale.analysis import AnalysisOptions
from gpuscale.analysis.analyze import analyze
from gpuscale.mlperf.load import load_round
from gpuscale.report.page import recommendation_rows
from gpuscale.report.recommend import recommend


def test_the_deciding_factor_reads_smaller_than_the_other() -> None:
    (result,) = analyze(load_round("v4.1"), ["retinanet"], AnalysisOptions(n_boot=100))
    rec = recommend(result)
    ratios = {"throughput": rec.throughput_ratio, "convergence": rec.convergence_ratio}
    assert f"{ratios['throughput']:.2f}" == f"{ratios['convergence']:.2f}"  # alike at two
    why = recommendation_rows([rec])[0]["Why not more"]
    said = dict(re.findall(r"(throughput|convergence) x(\d\.\d+)", why))
    assert set(said) == set(ratios) and said[rec.decides] < said[other(rec.decides)], why
    for name, text in said.items():  # each the value, to the decimals written
        assert float(text) == round(ratios[name], len(text) - 2)


def other(name: str) -> str:
    return "throughput" if name == "convergence" else "convergence"
