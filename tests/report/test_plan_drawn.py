"""The report's plan section says what ``gpuscale plan`` says: its figure draws the plan's
own times and intervals (a walk: Stable Diffusion's line read 2.08 min at 512 where the
plan says 1.887, its band left out the Eos_n64 result the plan's interval was widened to
hold, and Llama2's line was drawn in 5 pieces with 128 and 512 in the gaps), its table
shows the plan's flags and no "nan", its sentences name the counts of the table beside
them, and each plan gives its own command."""

from __future__ import annotations

import io
import math
import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from gpuscale import load_round
from gpuscale.analysis import AnalysisOptions, analyze
from gpuscale.cli import app
from gpuscale.planning import plan
from gpuscale.report.plan_bases import bases_sentence
from gpuscale.report.plan_section import COUNTS, SHOWN, PlanData, plan_data, plan_section
from gpuscale.report.svg import FigureFiles
from gpuscale.report.text_table import cells_text
from gpuscale.tables import STUDY_WORKLOADS, display_name

MISSING = {"nan", "NaN", "None", "inf", "-inf", "<NA>", "-"}


@pytest.fixture(scope="module")
def v41_plans(v41) -> list[PlanData]:
    return [p for p in plan_data(v41.scores, list(STUDY_WORKLOADS)) if isinstance(p, PlanData)]


@pytest.fixture(scope="module")
def v30():
    return load_round("v3.0")


def _drawn(item: PlanData):
    """The plan figure's line (x, y) and its band's polygon vertices, read from the
    figure's own data (not its pixels)."""
    from matplotlib.collections import PolyCollection

    from gpuscale.report.plan_section import _plan_chart

    ax = _plan_chart(item).figure.axes[0]
    line = next(
        ln for ln in ax.get_lines() if str(ln.get_label()) == "plan" or ln.get_gid() == "plan-line"
    )
    band = next(c for c in ax.collections if isinstance(c, PolyCollection))
    vertices = np.vstack([p.vertices for p in band.get_paths()])
    x, y = (np.asarray(v, float) for v in line.get_data())
    return x, y, vertices


def test_the_plan_figure_draws_the_plans_times_and_intervals(v41, v41_plans) -> None:
    """At every count of the report's table and every count the family ran, the figure's
    line is at the time ``gpuscale.plan`` gives there (the API the CLI prints) and its band
    spans the plan's interval there; the line is one piece over the counts it draws."""
    assert {p.workload for p in v41_plans} == set(STUDY_WORKLOADS)
    for item in v41_plans:
        x, y, vertices = _drawn(item)
        assert not np.isnan(y).any(), item.workload  # one piece, no gap
        counts = sorted({*COUNTS, *item.systems["accelerators"].astype(int)})
        asked = plan(
            workload=item.workload, accelerator=item.family, devices=counts, scores=v41.scores
        )
        timed = asked[asked["time_to_train_min"].notna()]
        assert len(timed) >= len(set(item.systems["accelerators"]))
        for r in timed.itertuples(index=False):
            n = int(r.accelerators)
            at = np.flatnonzero(x == n)
            assert at.size == 1, (item.workload, n, "not drawn")
            assert math.isclose(y[at[0]], r.time_to_train_min, rel_tol=1e-9), (item.workload, n)
            ends = vertices[vertices[:, 0] == n][:, 1]
            for end in (r.time_to_train_min_low, r.time_to_train_min_high):
                assert np.isclose(ends, end, rtol=1e-9).any(), (item.workload, n, end)
        # the table beside the figure is the same plan's
        table = item.table.set_index("accelerators")["time_to_train_min"]
        for n, t in table.dropna().items():
            assert math.isclose(y[np.flatnonzero(x == n)[0]], t, rel_tol=1e-9)


def test_stable_diffusions_band_holds_the_result_the_plan_widened_for(v41_plans) -> None:
    """The walk's case: at 512 the plan's interval (1.706-2.044) holds Eos_n64's 1.706 min,
    so the figure's band there reaches down to that measured point."""
    item = next(p for p in v41_plans if p.workload == "stable_diffusion")
    eos = item.systems[item.systems["accelerators"] == 512]["time_to_train_min"].min()
    _x, _y, vertices = _drawn(item)
    assert vertices[vertices[:, 0] == 512][:, 1].min() <= eos


def _cells(section) -> list[tuple[dict[str, str], str]]:
    return [(row, caption) for caption, _c, rows in section.tables for row in rows]


def test_the_report_plan_table_shows_the_plans_flags_and_no_nan(v30, tmp_path: Path) -> None:
    """v3.0: BERT's 8 is flagged super-linear (kept out of the picks: 64 is marked E' >=
    0.8 x best though 8 runs faster per device) and RetinaNet's 1,024 has no time; the
    report's table showed neither flag, and wrote "nan" and "-" in 1,024's cells."""
    data = [p for p in plan_data(v30.scores, ["bert", "retinanet"]) if isinstance(p, PlanData)]
    section = plan_section(data, FigureFiles(tmp_path), rounds=["v3.0"])
    assert section is not None and len(section.tables) == 2
    for item, (_caption, columns, rows) in zip(data, section.tables, strict=True):
        assert SHOWN["flags"] in columns
        assert [r[SHOWN["flags"]] for r in rows] == list(item.table["flags"])
        for row, flag in zip(rows, item.table["flags"], strict=True):
            assert not set(row.values()) & MISSING, row
            if flag.startswith("no time"):  # no time: no minutes, no interval, no rate
                assert row[SHOWN["time_to_train_min"]] == row[SHOWN["interval"]] == ""
    flags = [r[SHOWN["flags"]] for r, _ in _cells(section)]
    assert any(f.startswith("super-linear") for f in flags)
    assert any(f.startswith("no time") for f in flags)


def test_no_report_table_renders_a_missing_value(v30, tmp_path: Path) -> None:
    """The whole page of v3.0's report (its plan, answer, workload and energy tables):
    no cell reads nan, None or inf."""
    from gpuscale.report.html import build_report

    html = build_report(
        v30, ["bert", "retinanet"], tmp_path, AnalysisOptions(n_boot=100), workers=1
    ).read_text()
    cells = re.findall(r"<td[^>]*>(.*?)</td>", html, flags=re.S)
    assert len(cells) > 100
    bad = [c for c in cells if c.strip() in MISSING - {"-"} or re.search(r"\bnan\b", c)]
    assert not bad, bad[:5]


def test_the_bases_sentence_names_the_counts_of_the_table_beside_it(v30) -> None:
    """v3.0 BERT: the sentence read "(16, 64, 256 and 1,024: best at 16) ... at 8 the plan
    asks no such count" beside a table with an 8-device row (flagged super-linear). Each
    count it says the plan does not ask is absent from the table, each flagged count of the
    table it names is said flagged, and the counts of its E' are the table's unflagged."""
    data = [p for p in plan_data(v30.scores, ["bert", "retinanet"]) if isinstance(p, PlanData)]
    results = analyze(v30, ["bert", "retinanet"], AnalysisOptions(n_boot=100))
    checked = 0
    for item in data:
        result = next(r for r in results if r.workload == item.workload)
        said = bases_sentence(item, result)
        if not said:
            continue
        checked += 1
        table = item.table
        counts = {int(n) for n in table["accelerators"]}
        flagged = {int(n) for n, f in zip(table["accelerators"], table["flags"], strict=True) if f}
        unflagged = sorted(counts - flagged)
        for n in re.findall(r"at ([\d,]+) the plan asks no such count", said):
            assert int(n.replace(",", "")) not in counts, said
        for n in flagged:
            for mention in re.findall(rf"at {n:,} ([^;]*)", said):
                assert "flagged" in mention, mention
        listed = re.search(r"counts it plans without a flag \(([^:]+):", said)
        assert listed is not None, said
        assert listed.group(1) == number_list(unflagged)
        for n in flagged:
            assert f"{n:,} (" in said.split("flagged, kept out")[0], said
    assert checked == 2


def number_list(counts: list[int]) -> str:
    from gpuscale.quantities import joined

    return joined(f"{n:,}" for n in counts)


def test_each_plan_says_its_own_command_and_it_gives_the_tables_minutes(
    v41, v41_plans, tmp_path: Path
) -> None:
    """The section's intro quoted only BERT's command beside four plans: each plan's words,
    its table's caption and its figure's caption give its own, and that command prints the
    table's minutes."""
    section = plan_section(v41_plans, FigureFiles(tmp_path, every=True), rounds=["v4.1"])
    assert section is not None and len(section.commands) == len(v41_plans) == 4
    assert "-w " not in section.findings[0]  # the intro names no one workload's command
    for item, command, (_caption, _cols, rows), figure in zip(
        v41_plans, section.commands, section.tables, section.figures, strict=True
    ):
        name = f"{display_name(item.workload)} on {item.family}"
        words = next(f for f in section.findings if f.startswith(f"{name}: "))
        assert f"`{command}`" in words and f"`{command}`" in figure[0]
        argv = shlex.split(command)
        assert argv[:2] == ["gpuscale", "plan"] and ["-w", item.workload] == argv[4:6]
        result = CliRunner().invoke(app, [*argv[1:], "-f", "csv"])
        assert result.exit_code == 0, result.output
        lines = result.stdout.strip().splitlines()
        header = lines[0].split(",")
        minutes = [line.split(",")[header.index("time_to_train_min")] for line in lines[1:]]
        shown = _as_the_terminal([float(m) if m else None for m in minutes])
        assert [r[SHOWN["time_to_train_min"]] for r in rows] == shown


def _plan_tables_html(section: object) -> str:
    """The page's plan tables as the report's template renders ``section``."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("gpuscale", "report/templates"),
        autoescape=select_autoescape(default=True),
    )
    return env.get_template("plan_tables.html").render(extra=section)


def test_the_table_caption_on_the_page_gives_each_plans_command(tmp_path: Path) -> None:
    """The page's table captions: each plan's command (they all read `gpuscale plan`)."""
    tables = load_round("v4.1")
    data = plan_data(tables.scores, ["bert", "retinanet"])
    section = plan_section(data, FigureFiles(tmp_path), rounds=["v4.1"])
    assert section is not None
    html = _plan_tables_html(section)
    captions = re.findall(r"<caption>(.*?)</caption>", html, flags=re.S)
    assert len(captions) == 2
    for caption, command in zip(captions, section.commands, strict=True):
        assert f"<code>{command}</code>" in caption
    assert pd.Series(section.commands).str.contains("-w bert").sum() == 1


def test_a_workload_the_report_does_not_plan_is_said_with_its_command(v41, tmp_path) -> None:
    """The report plans the study's workloads; another asked (v4.1's GPT-3) is
    said with the command that plans it, on its family that ran the most counts at the counts that
    family ran, never dropped without a word; the command times each of them."""
    from gpuscale.report.plan_section import NotPlanned

    workload = "gpt3"
    assert workload not in STUDY_WORKLOADS
    data = plan_data(v41.scores, [workload])
    rows = v41.scores[v41.scores["workload"] == workload]
    family = rows["accelerator_family"].mode()[0]
    ran = sorted(set(rows.loc[rows["accelerator_family"] == family, "accelerators"].astype(int)))
    assert data == [NotPlanned(workload, family, tuple(ran))]  # at the counts it ran
    section = plan_section(data, FigureFiles(tmp_path), rounds=["v4.1"])
    assert section is not None and not section.tables
    said = re.search(r"`(gpuscale plan [^`]+)`", " ".join(section.findings))
    assert said and f"-w {workload}" in said[1] and "--round v4.1" in said[1]
    run = CliRunner().invoke(app, [*shlex.split(said[1])[1:], "-f", "csv"])
    assert run.exit_code == 0, run.output
    planned = pd.read_csv(io.StringIO(run.stdout))
    assert planned["accelerators"].tolist() == ran and planned["time_to_train_min"].notna().all()


def test_the_plan_table_names_its_hours_as_the_report_and_the_cli_do(tmp_path: Path) -> None:
    """The report's other tables and figures and `gpuscale plan` say accelerator-hours; the
    plan table's heading said device-hours, a second word for the same quantity."""
    data = plan_data(load_round("v4.1").scores, ["bert"])
    section = plan_section(data, FigureFiles(tmp_path), rounds=["v4.1"])
    assert section is not None
    html = _plan_tables_html(section)
    headings = [
        re.sub(r"<[^>]+>", "", h).strip()
        for h in re.findall(r"<th[^>]*>(.*?)</th>", html, flags=re.S)
    ]
    assert "accelerator-hours" in headings
    assert "device-hours" not in html
    cli = ["plan", "--round", "v4.1", "-w", "bert", "--accelerator", "H100"]
    run = CliRunner().invoke(app, cli, terminal_width=300)
    assert run.exit_code == 0 and "accelerator hours" in run.output


def _as_the_terminal(minutes: list[float | None]) -> list[str]:
    """The command's minutes as its terminal table writes them (the report's table
    writes its numbers by the same rule: 4 significant figures, zeros kept)."""
    return [row[0] for row in cells_text([[m] for m in minutes], [None], ["time_to_train_min"])]


def _terminal_column(output: str, heading: str) -> list[str]:
    """A column of a terminal table (rich's box drawing, one line a row) as written."""
    lines = [line for line in output.splitlines() if line.startswith(("┃", "│"))]
    head = [cell.strip() for cell in lines[0].strip("┃").split("┃")]
    at = head.index(heading)
    return [line.strip("│").split("│")[at].strip() for line in lines[1:]]


def test_the_report_plan_tables_interval_is_written_as_the_terminals(tmp_path: Path) -> None:
    """v4.1 BERT on H100 at 8: the page wrote 4.04-7.50 (3 significant figures) beside
    minutes 5.508 where `gpuscale plan` writes 4.043-7.504; each interval cell of the page's
    table reads as the command's terminal table writes it."""
    data = plan_data(load_round("v4.1").scores, ["bert"])
    section = plan_section(data, FigureFiles(tmp_path), rounds=["v4.1"])
    assert section is not None
    html = _plan_tables_html(section)
    header = [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", html)]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", html, flags=re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S) for row in rows]
    shown = [[re.sub(r"<[^>]+>", "", c).strip() for c in row] for row in cells if row]
    page = [row[header.index(SHOWN["interval"])] for row in shown]
    (command,) = section.commands
    run = CliRunner().invoke(app, shlex.split(command)[1:], terminal_width=300)
    assert run.exit_code == 0, run.output
    assert page == _terminal_column(run.output, "80% interval")
    assert page[0] == "4.043-7.504"
