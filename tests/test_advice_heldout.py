"""``benchmarks/advice_heldout.py``: the advice judged per link class on published tables
split before any fit (issue 73, items 6-7). Its core on a handful of rows, a planted
impossible row caught, the results file of the tables as committed, and docs/heldout.md
quoting that file."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import ModuleType

import pytest

from gpuscale.advice.model.network import StepTerms

from .builders import benchmark_script

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "advice_heldout.json"
BEGIN, END = "<!-- advice_heldout.json: begin -->\n", "<!-- advice_heldout.json: end -->"
GOALS_BEGIN = "<!-- advice_heldout.json goals: begin -->\n"
GOALS_END = "<!-- advice_heldout.json goals: end -->"


def _script() -> ModuleType:
    return benchmark_script("advice_heldout")


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return _script()


def _handful(script: ModuleType) -> list:
    """The first unflagged row of each class and split: 8 rows (every class has
    development rows)."""
    rows = script.read_rows()
    picked = {}
    for row in rows:
        key = (row.link_class, row.split)
        if not row.flagged and key not in picked:
            picked[key] = row
    return list(picked.values())


def test_the_core_advises_each_row_and_sets_every_baseline(script: ModuleType) -> None:
    rows = _handful(script)
    assert {r.link_class for r in rows} == set(script.CLASSES)
    assert {r.split for r in rows} == {"development", "held-out"}
    serial = script.evaluate(rows)
    for row in rows:
        assert row.low <= row.predicted <= row.high, row
        # a ratio at a fixed per-device batch: more than the base count, at most linear
        assert 1 < row.predicted <= row.linear + 1e-9, row
        assert row.high <= row.linear + 1e-9
        assert row.amdahl is not None and 1 < row.amdahl <= row.linear  # a dev row per class
    # each class's serial fraction comes from its own development row alone
    for cls in script.CLASSES:
        (dev,) = [r for r in rows if r.link_class == cls and r.split == "development"]
        assert serial[cls] is not None and 0 <= serial[cls] <= 1
        assert dev.amdahl == pytest.approx(dev.published, rel=1e-3)  # one row: fitted exactly
    result = script.report(rows, serial)
    for cls in script.CLASSES:
        held = result["classes"][cls]["held_out"]
        assert held["rows"] == 1
        assert set(held) >= {"median_abs_error", "coverage", "median_width", "baselines"}
        assert set(held["baselines"]) == {"linear", "another_rows_ratio", "amdahl_dev_fit"}
        assert held["coverage"] in (0.0, 1.0)
        assert set(result["classes"][cls]["goals_met"]) == {
            "enough_rows",
            "median_abs_error",
            "beats_linear",
            "coverage",
        }
        assert result["classes"][cls]["goals_met"]["enough_rows"] is False  # 1 row < 15


def test_a_planted_impossible_row_is_flagged_and_kept_out(script: ModuleType) -> None:
    rows = _handful(script)
    planted = copy.copy(next(r for r in rows if r.split == "held-out"))
    planted.flagged = ""
    planted.throughput_n = 3 * planted.linear * planted.throughput_base  # 3x linear
    script.check(planted)
    assert "not possible at a fixed per-device batch" in planted.flagged
    rows.append(planted)
    serial = script.evaluate(rows)
    assert planted.predicted is None and planted.borrowed is None and planted.amdahl is None
    result = script.report(rows, serial)
    assert result["classes"][planted.link_class]["held_out"]["rows"] == 1  # not 2
    assert [f["model"] for f in result["flagged"]] == [planted.model]


def test_a_row_the_advice_refuses_is_listed_and_kept_out(script: ModuleType) -> None:
    rows = _handful(script)
    planted = copy.copy(next(r for r in rows if r.split == "held-out" and r.n_base == 1))
    planted.params = 1e12  # no count up to the row's N holds a 1T-parameter model
    rows.append(planted)
    serial = script.evaluate(rows)
    assert "holds" in planted.refused and planted.predicted is None
    result = script.report(rows, serial)
    assert result["classes"][planted.link_class]["held_out"]["rows"] == 1  # not 2
    assert [(f["model"], f["n_gpus"]) for f in result["refused"]] == [
        (planted.model, planted.n_gpus)
    ]


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("link_class", "nvlnik", "link class 'nvlnik' is none of"),
        ("split", "heldout", "split 'heldout' is none of"),
        ("nodes", 2, "2 node(s) in class"),
    ],
)
def test_a_mistyped_row_is_refused_with_its_name(
    script: ModuleType, field: str, value: object, said: str
) -> None:
    row = copy.copy(next(r for r in script.read_rows() if r.link_class == "nvlink"))
    setattr(row, field, value)
    with pytest.raises(ValueError, match=said.replace("(", r"\(").replace(")", r"\)")) as err:
        script.check(row)
    assert row.model in str(err.value)


def test_the_results_file_counts_the_committed_tables(script: ModuleType) -> None:
    """Every class's and split's row count in the results file is the tables' (read, not
    advised), and so are the flagged rows and the sources."""
    results = json.loads(RESULTS.read_text())
    rows = script.read_rows()
    # a row the advice refuses (no count holds the model) is listed, and kept out
    refused = {(f["source"], f["model"], f["device"], f["n_gpus"]) for f in results["refused"]}
    kept = [
        r for r in rows if not r.flagged and (r.source, r.model, r.device, r.n_gpus) not in refused
    ]
    assert len(kept) + len(refused) == sum(not r.flagged for r in rows)
    for cls in script.CLASSES:
        for split, key in (("development", "development"), ("held-out", "held_out")):
            count = sum(r.link_class == cls and r.split == split for r in kept)
            assert results["classes"][cls][key]["rows"] == count, (cls, split)
    assert len(results["flagged"]) == sum(bool(r.flagged) for r in rows)
    assert len(results["rows"]) == len(rows)
    assert set(results["sources"]) == {r.source for r in rows}
    # at least 15 held-out rows in each class (issue 73's floor for a coverage figure)
    for cls in script.CLASSES:
        assert results["classes"][cls]["held_out"]["rows"] >= 15, cls
    # the kept-back NVIDIA rows (every DeepLearningExamples row but ResNet-50) are not read
    assert not [r for r in rows if r.source == "nvidia_dle_pytorch" and "ResNet-50" not in r.model]


def test_the_docs_page_quotes_the_results_file(script: ModuleType) -> None:
    results = json.loads(RESULTS.read_text())
    doc = (ROOT / "docs" / "heldout.md").read_text()
    assert doc.split(BEGIN)[1].split(END)[0] == script.markdown(results)
    assert doc.split(GOALS_BEGIN)[1].split(GOALS_END)[0] == script.goals_markdown(results)
    assert results["command"] in doc


def test_llama_13b_on_two_a100_is_refused_and_kept_out(script: ModuleType) -> None:
    """Llama-2-13B under FSDP on 2 A100 80GB: no count up to 2 holds it (16 bytes a
    parameter), so the advice names the count that would, and the row is kept out."""
    (row,) = [
        r
        for r in script.read_rows()
        if r.model.startswith("Llama-2-13b") and r.device == "A100 SXM4 80GB" and r.n_gpus == 2
    ]
    assert not row.flagged
    script.evaluate([row])
    assert row.refused.startswith("no count searched")
    assert row.predicted is None and row.low is None


def test_a_rows_stack_is_read_off_its_device_alone(script: ModuleType) -> None:
    """The declared stack class (benchmarks/fit_step_terms.py): legacy for a device before
    Volta, which on these tables is the 2017 TensorFlow 1.x sources; every held-out row is
    of today's stacks."""
    rows = script.read_rows()
    legacy = [r for r in rows if r.stack == "legacy"]
    assert {r.source for r in legacy} == {"tensorflow_benchmarks_2017", "cscs_distributed_tf_2017"}
    assert all(r.published_on.startswith("2017") for r in legacy)
    assert not [r for r in rows if r.split == "held-out" and r.stack != "modern"]
    assert not [r for r in rows if r.stack == "modern" and r.published_on.startswith("2017")]


def test_a_row_is_advised_with_its_stacks_terms(
    script: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    row = next(r for r in script.read_rows() if r.stack == "legacy" and r.n_gpus == 8)
    spread = {"legacy": 0.15, "modern": 0.0}
    monkeypatch.setattr(script, "of_stack", lambda stack: StepTerms(rank_spread=spread[stack]))
    waited = script.predictions(row)
    spread["legacy"] = 0.0
    bare = script.predictions(row)
    assert waited.loc[8, "wait_ms"] > bare.loc[8, "wait_ms"]
    assert waited.loc[8, "speedup"] < bare.loc[8, "speedup"]
    # an ablation's terms stand instead of the stack's
    ablated = script.predictions(row, StepTerms(rank_spread=0.15))
    assert ablated.loc[8, "speedup"] == pytest.approx(waited.loc[8, "speedup"])


def test_split_development_advises_no_held_out_row(
    script: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``--split development`` (how a change to the step model is judged while it is
    developed) advises, writes and prints the development rows alone."""
    handful = _handful(script)
    advised: list[str] = []
    monkeypatch.setattr(script, "read_rows", lambda: [copy.copy(r) for r in handful])
    real = script.advise_row

    def advise_row(row, terms=None) -> None:
        advised.append(row.split)
        real(row, terms)

    monkeypatch.setattr(script, "advise_row", advise_row)
    out = tmp_path / "dev.json"
    assert script.main(["--split", "development", "--out", str(out)]) == 0
    assert advised == ["development"] * len(script.CLASSES)
    results = json.loads(out.read_text())
    assert {r["split"] for r in results["rows"]} == {"development"}
    for cls in script.CLASSES:
        assert results["classes"][cls]["held_out"] == {"rows": 0}
        assert results["classes"][cls]["development"]["rows"] == 1
    with pytest.raises(SystemExit):  # the page quotes both splits
        script.main(["--split", "development", "--docs", str(tmp_path / "page.md")])


def test_the_pages_range_of_vectorlms_p2p_errors_is_the_files() -> None:
    """docs/heldout.md explains the P2P class without Lambda's tables by VectorLM's A40
    and T4 rows, giving the range of their errors: the file's held-out rows, rounded."""
    rows = [
        r
        for r in json.loads(RESULTS.read_text())["rows"]
        if r["source"] == "vectorlm_2024"
        and r["link_class"] == "pcie_p2p"
        and r["split"] == "held-out"
        and r["error"] is not None
    ]
    errors = sorted(round(100 * r["error"]) for r in rows)
    assert {r["device"] for r in rows} == {"A40", "T4"}
    doc = " ".join((ROOT / "docs" / "heldout.md").read_text().split())
    assert f"VectorLM's A40 and T4 {errors[0]}-{errors[-1]}%: published far below linear" in doc
