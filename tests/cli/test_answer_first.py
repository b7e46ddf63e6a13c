"""``analyze`` and ``plan`` answer first: on a 100-column terminal the default
output is the table that answers and a few lines, within its word budget (analyze 250
words per workload, plan 150; stderr counted) and no line wider than the terminal;
``--explain`` prints what the default
leaves out, and ``-f json`` still carries all of it."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app

from .test_width_every_command import terminal

WIDTH = 100
BERT = ["analyze", "--round", "v4.1", "-b", "bert"]
PLAN = ["plan", "-w", "llama2_70b_lora", "-a", "H100-SXM5-80GB", "-n", "16,64,256"]


def _run(args: list[str], width: int = WIDTH) -> str:
    """stdout and stderr of the command on a terminal ``width`` columns wide (what rich
    takes for one: notes fold there, where a log keeps each sentence whole)."""
    result = CliRunner().invoke(app, args, env=terminal(width))
    assert result.exit_code == 0, result.output
    return result.output


def _document(args: list[str]) -> dict:
    """The command's ``-f json`` document: its stdout (notes go to stderr)."""
    result = CliRunner().invoke(app, [*args, "-f", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _words(text: str) -> int:
    """Visible words: the table's box-drawing characters are no words."""
    return len(re.sub("[\u2500-\u257f]", " ", text).split())


@pytest.mark.parametrize(
    ("args", "workloads", "budget"),
    [(BERT, 1, 250), (["analyze", "--round", "v4.1"], 7, 250), (PLAN, 1, 150)],
    ids=["analyze -b bert", "analyze every workload", "plan"],
)
def test_the_answer_keeps_its_word_budget(args: list[str], workloads: int, budget: int) -> None:
    text = _run(args)
    assert _words(text) <= budget * workloads, text
    if args[0] == "analyze":  # one answer per workload
        assert text.count("the accelerators each criterion picks") == workloads


@pytest.mark.parametrize("width", [WIDTH, 80, 60])
@pytest.mark.parametrize("args", [BERT, PLAN], ids=["analyze", "plan"])
def test_no_line_is_wider_than_the_terminal(args: list[str], width: int) -> None:
    """Narrower than 100 columns the answer drops its least needed columns first, and
    says that --explain or -f csv has them (not --columns: that is the full table's)."""
    text = _run(args, width)
    assert [line for line in text.splitlines() if len(line) > width] == []
    if width < WIDTH:
        assert "--explain or -f csv)" in text and "--columns" not in text


def test_analyze_explain_says_what_the_answer_leaves_out() -> None:
    """Every system, each family's picks and the study compared: --explain's, not the
    answer's; JSON carries each system, the study's findings, its Table I and every
    caution the answer numbers."""
    answer, explained = _run(BERT), _run([*BERT, "--explain"])
    document = _document(BERT)["rounds"][0]
    for said in ("Compared with the study", "within A100-PCIe-80GB", "tinybox red"):
        assert said not in answer and said in explained
    assert len(document["systems"]) == 29
    assert len(document["study"]) == 4 and document["study_table_i"].startswith("BERT:")
    criteria = ("knee", "max_speed_x_efficiency", "efficiency_threshold")
    picks = [document["equilibrium"][c] for c in criteria]
    cautions = [p["caution"] for p in picks if p and p.get("caution")]
    flat = " ".join(answer.split())  # the answer's footnotes, unwrapped
    assert cautions and all(caution in flat for caution in cautions)


def test_analyze_explain_says_each_pick_once() -> None:
    """Under --explain each pick of the answer's table (the family that ran the most
    counts, and over all systems) is said once, in that table: the lines under the
    systems' table say the other families' picks, the agreement and the clusters only."""
    explained = _run([*BERT, "--explain"], width=400)
    said = [x.strip() for x in explained.splitlines() if x.startswith("  ") and x.strip()]
    document = _document(BERT)["rounds"][0]
    family = document["answer_family"]
    picks = [p for p in document["equilibrium"].values() if isinstance(p, dict) and p]
    assert len(picks) == 3  # knee, speed x efficiency, E' threshold: each a system
    assert [x for x in said if x.startswith(("over all systems", f"within {family}"))] == []
    picked = [x for x in said for p in picks if f"{p['system_name']} (" in x]
    assert [x for x in picked if not x.startswith("clusters: ")] == []  # its stability
    within = [x.split(":")[0] for x in said if x.startswith("within ")]
    assert "within A100-PCIe-80GB" in within  # a family the answer does not show
    assert explained.count("the accelerators each criterion picks") == 1


def test_plan_explain_says_every_note_and_json_carries_them() -> None:
    answer, explained = _run(PLAN), _run([*PLAN, "--explain"])
    document = json.loads(CliRunner().invoke(app, [*PLAN, "-f", "json"]).stdout)
    assert len(document["notes"]) > 3
    # a terminal folds each note: compared with the lines joined
    explained_flat, answer_flat = " ".join(explained.split()), " ".join(answer.split())
    for note in document["notes"]:
        flat = " ".join(note.split())
        assert flat in explained_flat and flat not in answer_flat
    assert "lean on" in explained and "lean on" not in answer
    assert len(document["rows"]) == 3 and "nearest" in document["rows"][0]


def test_a_criterion_that_picks_nothing_says_none_where_the_count_is() -> None:
    """At COLUMNS=60 the knee's row is not blank: its "none" is in the count's column,
    never dropped, not only in the system column the width drops."""
    from gpuscale import load_round
    from gpuscale.analysis import AnalysisOptions
    from gpuscale.analysis.analyze import analyze
    from gpuscale.analysis.terminal import answer_view

    options = AnalysisOptions(reference="family")
    result = analyze(load_round("v4.1"), ["bert"], options)[0]
    view = answer_view(result, options)
    frame = view.frame
    none = frame[frame["system"] == ""]
    assert len(none) and set(none["accelerators"]) == {"none"}
    assert "accelerators" not in view.drop_order
    picked = frame[frame["system"] != ""]
    assert all(isinstance(n, int) for n in picked["accelerators"])


def test_plan_says_a_count_planned_faster_than_linear(golden) -> None:
    """BERT on A100 at 8, 16, 32: 32 is planned more than 2x as fast as 16 on 2x the
    devices and picked, measured so (unflagged): the default view says it in one line,
    the ``beyond_linear`` cell -f json carries (it said nothing of it, the docs said a
    sentence did)."""
    args = ["plan", "-w", "bert", "-a", "A100", "--devices", "8,16,32"]
    rows = json.loads(CliRunner().invoke(app, [*args, "-f", "json"]).stdout)["rows"]
    beyond = {r["accelerators"]: r["beyond_linear"] for r in rows if r["beyond_linear"]}
    assert list(beyond) == [32]  # the premise: 32 alone, planned faster than linear
    (row,) = [r for r in rows if r["accelerators"] == 32]
    assert row["stops_paying"] and not row["flags"]  # picked, and no flag says it
    flat = " ".join(_run(args).split())  # the lines under the table, unwrapped
    assert flat.count("more than linear") == 1 and beyond[32] in flat
    said = flat[flat.index("32: more than linear") : flat.index(beyond[32]) + len(beyond[32])]
    golden.check("plan/answer", "bert on A100 8,16,32: more than linear", said)


def test_analyze_explain_shows_each_systems_interval_the_answer_points_to() -> None:
    """The answer ends "Each system's speedup, E', interval and cluster ...: --explain";
    --explain's table had no interval at any width. Its `95% interval` column is the
    time's 95% interval of -f json, at 3 significant digits with their trailing zeros
    (4.90-5.46, as every interval the package prints), beside each system's time."""
    explained = _run([*BERT, "--explain"], width=200)
    systems = _document(BERT)["rounds"][0]["systems"]
    lines = explained.splitlines()
    # the systems' table, under the answer's (which --explain says first)
    start = next(
        i for i, line in enumerate(lines) if "95% interval" in line and "submitter" in line
    )
    header = lines[start]
    cells = [line.split("│") for line in lines[start:] if line.startswith("│")]
    at = [c.strip() for c in header.split("┃")].index("95% interval")
    shown = [c[at].strip() for c in cells if c[at].strip()]

    def figures(value: float) -> str:  # 3 significant, zeros kept: 4.90, 5.00, 298
        return f"{value:#.3g}".rstrip(".")

    expected = [
        f"{figures(s['time_to_train_min_ci_low'])}-{figures(s['time_to_train_min_ci_high'])}"
        for s in systems
        if s["time_to_train_min_ci_low"] is not None
    ]
    assert len(expected) > 20 and sorted(shown) == sorted(expected)


def test_analyze_explain_says_the_answer_first() -> None:
    """--explain adds below the answer: each workload's answer table (the count each
    criterion picks) opens it, the same as the default view's, every system's table under."""
    answer, explained = _run(BERT), _run([*BERT, "--explain"])
    title = "v4.1 BERT: the accelerators each criterion picks"
    assert explained.index(title) < explained.index("v4.1 bert: reference")
    table = answer[answer.index(title) : answer.index("\u2514")]  # to the table's last border
    assert table in explained


def test_one_system_is_said_as_one_count_and_one_system(golden) -> None:
    """A benchmark with a single result: the title counts one system (not "1 systems")
    and its one accelerator count (not "6-6"); every criterion that picks, picks it."""
    import dataclasses

    from gpuscale import load_round
    from gpuscale.analysis import AnalysisOptions
    from gpuscale.analysis.analyze import analyze
    from gpuscale.analysis.terminal import answer_view

    tables = load_round("v5.0")
    scores = tables.scores
    one = scores[(scores["workload"] == "bert") & (scores["system_id"] == "tinybox_green")]
    assert len(one) == 1
    options = AnalysisOptions(reference="family")
    result = analyze(dataclasses.replace(tables, scores=one), ["bert"], options)[0]
    view = answer_view(result, options)
    picked = view.frame[view.frame["system"] != ""]
    assert set(picked["accelerators"]) == {int(one["accelerators"].iloc[0])}
    golden.check("analyze/answer_title", "one system", view.title)
