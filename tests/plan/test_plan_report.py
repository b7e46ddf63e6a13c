"""The report's plan section: a table and a figure per study workload, names escaped."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscale.report.plan_section import COUNTS, NotPlanned, PlanData, plan_data, plan_section
from gpuscale.report.svg import FigureFiles
from gpuscale.report.text_table import cells_text

from .test_plan_model import two_families


def test_section_has_a_table_and_a_figure_per_planned_workload(tmp_path: Path) -> None:
    scores = two_families(0.05)
    scores.loc[0, "system_name"] = "<script>alert(1)</script>"
    data = plan_data(scores, ["bert", "resnet"])
    assert [type(d) for d in data] == [PlanData]  # resnet is no study workload here
    section = plan_section(data, FigureFiles(tmp_path, png=True))
    assert section is not None and section.anchor == "plan"
    caption, _columns, rows = section.tables[0]
    assert caption == "BERT on X1" and len(rows) == len(COUNTS)
    assert [r["devices"] for r in rows] == [f"{n:,}" for n in COUNTS]
    assert {p.name for p in tmp_path.iterdir()} == {"plan_bert.svg", "plan_bert.png"}
    svg = section.figures[0][1]
    assert "<script>alert" not in svg and "&lt;script&gt;" in svg  # tooltip escaped
    assert any("measured before (class i)" in f for f in section.findings)


def test_a_workload_that_cannot_be_planned_is_said_so(tmp_path: Path) -> None:
    scores = two_families(0.05).assign(division="open")  # the plan uses the closed division
    data = plan_data(scores, ["bert"])
    section = plan_section(data, FigureFiles(tmp_path))
    assert section is not None and not section.tables and not section.figures
    assert section.findings[0].startswith("BERT: no plan (no closed-division MLPerf result")


def test_the_section_says_its_data_and_the_command_that_agrees(v41, tmp_path: Path) -> None:
    """The report plans from the rounds it loaded; the command it names plans from the same
    and gives the same minutes (bare `gpuscale plan` uses every bundled round)."""
    import shlex

    from typer.testing import CliRunner

    from gpuscale.cli import app

    data = plan_data(v41.scores, ["llama2_70b_lora"])
    section = plan_section(data, FigureFiles(tmp_path), rounds=["v4.1"])
    assert section is not None
    assert section.findings[0].startswith("Planned from the results of v4.1 loaded in this report")
    # each plan's words give its command (the intro named the first plan's only)
    said = next(f for f in section.findings if f.startswith("Llama2 70B LoRA on "))
    command = shlex.split(said.split("`")[1])
    assert command[:3] == ["gpuscale", "plan", "--round"]
    result = CliRunner().invoke(app, [*command[1:], "-f", "csv"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()  # the plan's notes go to stderr
    header = lines[0].split(",")
    minutes = [float(line.split(",")[header.index("time_to_train_min")]) for line in lines[1:]]
    _caption, _columns, rows = section.tables[0]
    assert [r["minutes"] for r in rows] == _as_the_terminal(minutes)


def test_a_study_workload_with_no_scored_result_is_said_not_raised(tmp_path: Path) -> None:
    """A raw v1.1 in the report: BERT's results there have no official score, so the plan
    fits hold no BERT; the report's plan section raised (a traceback) instead of saying so."""
    import pandas as pd

    bert = two_families(0.05)
    resnet = bert.assign(benchmark="resnet", workload="resnet")
    scores = pd.concat([bert.assign(time_to_train_min=float("nan")), resnet])
    data = plan_data(scores, ["bert"])
    assert len(data) == 1 and isinstance(data[0], str)
    assert data[0].startswith("BERT: no plan (")
    # loaded, without a score: said so, not "not in the rounds loaded"
    count = int((scores["workload"] == "bert").sum())
    assert f"its {count} results here are closed division without a score" in data[0]
    # a page for command-line users: the option and the round to give, never Python's call
    from gpuscale.mlperf.bundled import bundled_workloads

    newest = [r for r, held in bundled_workloads().items() if "bert" in held][-1]
    assert "--workload bert: " in data[0] and f"(--round {newest})" in data[0]
    assert "scores=" not in data[0] and "load_round(" not in data[0]


def test_a_workload_not_planned_names_counts_the_plan_times_or_says_why_none() -> None:
    """A report of raw v1.1 named `gpuscale plan ... -w minigo` for MiniGo, whose results
    have no score (that command is refused), and DLRM's counts 64 and 112, which only
    unscored results ran (the command gave them no time)."""
    import pandas as pd

    import gpuscale

    bert = two_families(0.05)
    resnet = bert.assign(benchmark="resnet", workload="resnet")
    resnet.loc[resnet["accelerators"] >= 64, "time_to_train_min"] = float("nan")
    maskrcnn = bert.assign(benchmark="maskrcnn", workload="maskrcnn", time_to_train_min=None)
    scores = pd.concat([bert, resnet, maskrcnn], ignore_index=True)
    _bert, named, refused = plan_data(scores, ["bert", "resnet", "maskrcnn"])
    assert isinstance(named, NotPlanned) and (named.family, named.counts) == ("X1", (8, 16, 32))
    table = gpuscale.plan(
        workload="resnet", accelerator=named.family, devices=list(named.counts), scores=scores
    )
    assert table["time_to_train_min"].notna().all() and (table["flags"] == "").all()
    count = int((scores["workload"] == "maskrcnn").sum())
    assert isinstance(refused, str) and refused.startswith("Mask R-CNN: no plan (--workload ")
    assert f"its {count} results here are closed division without a score" in refused


def test_a_study_workloads_plan_is_of_the_family_its_scored_results_favour() -> None:
    """The answer table reads scored results; the plan chose its family over every
    result, so counts only unscored results ran (all bundled rounds: H100's Llama2 at
    56, 10 of its result files absent) made it plan H100 where scored results have
    GB200 run the most counts."""
    import pandas as pd

    from .test_plan_model import OLD, _scores

    scores = two_families(0.05)  # X1 at six counts, Y2 at two
    unscored = _scores(
        [(OLD, "bert", "Y2", n, float("nan"), 32 * n) for n in (32, 64, 128, 512, 1024)]
    )
    both = pd.concat([scores, unscored], ignore_index=True)
    (planned,) = plan_data(both, ["bert"])
    assert isinstance(planned, PlanData) and planned.family == "X1"
    assert planned.table["time_to_train_min"].notna().any()


def test_the_reports_throughput_sentences_name_the_largest_factor_first(v41, tmp_path) -> None:
    """The report's plans (v4.1, the study's workloads) say the same sentence as the plan:
    its BERT read "0.37 of 8's ... each halving ... costs 5%" with the per-device batch
    first, beside x0.443 from the shared shape."""
    from .test_plan_consistency import _largest_named_first

    data = plan_data(v41.scores, ["bert", "llama2_70b_lora", "retinanet", "stable_diffusion"])
    section = plan_section(data, FigureFiles(tmp_path), rounds=["v4.1"])
    assert section is not None
    said = [s for f in section.findings for s in f.split(". ") if "Throughput per device" in s]
    assert len(said) == len(data)
    for sentence in said:
        assert _largest_named_first(sentence)


def test_a_report_of_a_raw_round_names_a_command_that_reads_that_path(tmp_path: Path) -> None:
    """A report read from a raw round's path named `gpuscale plan --round ROUND`: a round by
    name (bundled, or fetched), not the data the report read. Each plan's command now gives
    the report's data arguments, so it plans from the same results."""
    import shlex

    from gpuscale.tables.round_requests import RoundSelection

    archive = Path("some folder") / "my copy.tar.xz"
    selection = RoundSelection(paths=(archive,), round_names=("v5.0",))
    sources = selection.data_arguments()
    assert sources == (str(archive.resolve()), "--round", "v5.0")
    assert RoundSelection(round_names=("v4.1",)).data_arguments() == ()  # rounds by name
    scores = two_families(0.05)
    section = plan_section(
        plan_data(scores, ["bert"]), FigureFiles(tmp_path), rounds=["v4.1"], sources=sources
    )
    assert section is not None
    said = next(f for f in section.findings if f.startswith("BERT on "))
    command = shlex.split(said.split("`")[1])
    assert command[: 2 + len(sources)] == ["gpuscale", "plan", *sources]
    assert command.count("--round") == 1  # the round the user gave, none added by name


@pytest.mark.shared
def test_the_command_of_a_raw_rounds_plan_gives_its_minutes(shared_archive, tmp_path) -> None:
    """The command beside a plan of a raw round (a copy under a path with spaces, whose name
    says no round) plans from that path and gives the report's minutes."""
    import shlex
    import shutil

    from typer.testing import CliRunner

    from gpuscale.cli import app
    from gpuscale.mlperf import read_round
    from gpuscale.tables.round_requests import RoundSelection

    folder = tmp_path / "my rounds"
    folder.mkdir()
    copy = folder / "copy of a round.tar.xz"
    shutil.copyfile(shared_archive("v4.1"), copy)
    sources = RoundSelection(paths=(copy,)).data_arguments()
    data = plan_data(read_round(copy).scores, ["llama2_70b_lora"])
    section = plan_section(data, FigureFiles(tmp_path), rounds=["v4.1"], sources=sources)
    assert section is not None
    said = next(f for f in section.findings if f.startswith("Llama2 70B LoRA on "))
    command = shlex.split(said.split("`")[1])
    assert command[2] == str(copy) and "--round" not in command
    result = CliRunner().invoke(app, [*command[1:], "-f", "csv"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    header = lines[0].split(",")
    minutes = [float(line.split(",")[header.index("time_to_train_min")]) for line in lines[1:]]
    _caption, _columns, rows = section.tables[0]
    assert [r["minutes"] for r in rows] == _as_the_terminal(minutes)


def _as_the_terminal(minutes: list[float | None]) -> list[str]:
    """The command's minutes as its terminal table writes them (the report's table
    writes its numbers by the same rule: 4 significant figures, zeros kept)."""
    return [row[0] for row in cells_text([[m] for m in minutes], [None], ["time_to_train_min"])]
