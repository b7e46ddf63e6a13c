"""Every number of the worked examples of ``docs/analysis.md`` and ``docs/study.md`` is read
from the bundled data.

The worked examples sit between ``<!-- worked-example -->`` and ``<!-- /worked-example -->``.
This test recomputes, from the bundled rounds, every phrase that carries a number there
(the tool's own sentences: why efficiency falls, the answers and their cautions, the study
compared, Table I, energy against scale, the trends example; and E' ranges and reference
systems computed here from the scaling tables), removes each from the page, and fails if a
single digit is left: a number the data does not give, or one that drifted."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import pandas as pd
import pytest

from gpuscale.tables import display_name

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "docs" / "analysis.md", ROOT / "docs" / "study.md"]
FAMILY = "H100-SXM5-80GB"
# (workload, reference rule, accelerator counts) whose E' range the page quotes as
# "LOW-HIGH at N-M" within FAMILY; and (workload, rule, family) quoted as "FAMILY: E' ...".
RANGES = {
    ("bert", "family"): [(4,), (8,), (16,), (48, 64), (3472,)],
    ("llama2_70b_lora", "family"): [(4, 8), (16,), (32,), (1024,)],
    ("retinanet", "family"): [(4, 8), (32, 64), (2528,)],
    ("retinanet", "study"): [(4, 8)],
    ("stable_diffusion", "family"): [(8,), (16,), (32, 64), (512,), (1024,)],
}
SPANS = {
    ("bert", "study"): [FAMILY, "B200"],
    ("llama2_70b_lora", "study"): ["B200", "H200-SXM5-141GB"],
    ("llama2_70b_lora", "family"): ["B200", "H200-SXM5-141GB"],
}
# What may stay: round names, the paper's arXiv number, the criterion's name, workload
# names and accelerator names (letters then digits: H100, B200, H100-SXM).
ALLOWED = re.compile(
    r"v\d+\.\d+|arXiv 2509\.03263|E' >= 0\.8 x best|Llama2 70B LoRA|\b[A-Z]+\d+[\w-]*"
)


def span(values: pd.Series) -> str:
    low, high = f"{values.min():.2f}", f"{values.max():.2f}"
    return low if low == high else f"{low}-{high}"


@lru_cache(maxsize=1)
def results() -> dict[tuple[str, str], object]:
    from gpuscale import load_round
    from gpuscale.analysis import AnalysisOptions, analyze
    from gpuscale.tables import STUDY_WORKLOADS

    tables = load_round("v4.1")
    out = {}
    for rule in ("study", "family"):
        options = AnalysisOptions(reference=rule, n_boot=100)
        for result in analyze(tables, list(STUDY_WORKLOADS), options):
            out[result.workload, rule] = result
    return out


def reference_phrases() -> list[str]:
    phrases = []
    for result in results().values():
        for ref in result.references:
            phrases.append(
                f"{ref.submitter}/{ref.system_id} ({ref.accelerators} x "
                f"{ref.accelerator_family}, {ref.time_to_train_min:.2f} min)"
            )
    return phrases


def range_phrases() -> list[str]:
    phrases = []
    for (workload, rule), quoted in RANGES.items():
        table = results()[workload, rule].table
        table = table[table["accelerator_family"] == FAMILY]
        for counts in quoted:
            values = table.loc[table["accelerators"].isin(counts), "normalized_efficiency"]
            where = f"{counts[0]:,}-{counts[-1]:,}" if len(counts) > 1 else f"{counts[0]:,}"
            phrases.append(f"{span(values)} at {where}")
    for (workload, rule), families in SPANS.items():
        table = results()[workload, rule].table
        for family in families:
            values = table.loc[table["accelerator_family"] == family, "normalized_efficiency"]
            phrases.append(f"{family}: E' {span(values)}")
    return phrases


def tool_sentences() -> list[str]:
    from gpuscale import load_round
    from gpuscale.analysis.analyze import study_statements
    from gpuscale.analysis.answers import answers
    from gpuscale.analysis.energy_per_result import energy_scale_sentences, energy_table
    from gpuscale.analysis.study_table import table_i_statements
    from gpuscale.report.findings import why_efficiency_falls

    from .test_readme import answer_sentence

    study = [results()[w, r] for w, r in results() if r == "study"]
    out = [why_efficiency_falls(r.table, FAMILY) for r in study]
    for result in study:
        frame = answers(result)
        out += [answer_sentence(frame, scope) for scope in frame["scope"].unique()]
        out += [
            f"{display_name(row.workload)} {row.criterion}: {row.note}"
            for row in frame.itertuples()
            if row.note
        ]
    out += [s.text for s in study_statements(study)]
    out += table_i_statements(load_round("v4.1").scores)
    out += energy_scale_sentences(energy_table(load_round("v4.0")))
    return [s for s in out if s]


def worked_examples() -> str:
    found = []
    for page in PAGES:
        text = page.read_text()
        blocks = re.findall(r"<!-- worked-example -->(.*?)<!-- /worked-example -->", text, re.S)
        assert blocks, f"docs/{page.name} has no worked-example block"
        found += blocks
    return " ".join(" ".join(block.split()) for block in found)


def test_every_number_of_the_worked_examples_comes_from_the_data() -> None:
    text = worked_examples()
    phrases = sorted(
        {*tool_sentences(), *range_phrases(), *reference_phrases()}, key=len, reverse=True
    )
    for phrase in phrases:
        text = text.replace(" ".join(phrase.split()), " ")
    left = ALLOWED.sub(" ", text)
    stray = sorted({m.group(0) for m in re.finditer(r"[^\s]*\d[^\s]*", left)})
    assert stray == [], f"numbers in the worked examples the data does not give: {stray}"


def test_the_check_finds_a_number_that_drifted(monkeypatch, tmp_path: Path) -> None:
    """The page with one E' range changed by 0.01 fails the check."""
    text = "\n".join(page.read_text() for page in PAGES)
    phrase = next(p for p in range_phrases() if p in " ".join(text.split()))
    low = phrase.split(" ", 1)[0].split("-")[0]
    drifted = f"{float(low) + 0.01:.2f}"
    page = tmp_path / "analysis.md"
    page.write_text(" ".join(text.split()).replace(phrase, phrase.replace(low, drifted, 1)))
    monkeypatch.setattr(__import__(__name__, fromlist=["PAGES"]), "PAGES", [page])
    with pytest.raises(AssertionError, match="worked examples"):
        test_every_number_of_the_worked_examples_comes_from_the_data()
