"""The plan always says which counts it picks and by what, or, where it picks none, why
(``model["no_pick"]``, with the counts it is about) and the ``-n`` that lets it pick.
BERT on A100 at 2 and 4 printed its table and 4's "more than linear" flag, and nothing
of a pick: 2, the one count left unflagged, had nothing to compare it with, unsaid."""

from __future__ import annotations

import json
import math
import re

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.planning.cache import default_fits
from gpuscale.planning.request import PlanRequest
from gpuscale.planning.result import plan_result
from gpuscale.planning.terminal import no_pick_line, plan_answer
from gpuscale.planning.words import plan_records

from ..golden import Golden

runner = CliRunner()
VIEW = "plan/answer"
# a terminal 80 columns wide: the answer drops its "picked by" column first
NARROW = {"COLUMNS": "80", "TTY_COMPATIBLE": "1", "NO_COLOR": "1"}
# (workload, accelerator, counts asked): why none is picked, the counts without a flag,
# flagged (with a time) and without a time
NO_PICK = {
    ("bert", "A100", "8"): ("one_count", [8], [], []),
    ("bert", "A100", "2,4"): ("one_count", [2], [4], []),
    ("resnet", "H100", "1,2"): ("one_count", [2], [], [1]),
    ("bert", "A100", "1024,2048"): ("all_flagged", [], [1024, 2048], []),
    ("resnet", "H100", "1"): ("no_time", [], [], [1]),
}
PICK_LINE = re.compile(r"^(picks |no pick: )")


def _plan(workload: str, accelerator: str, devices: str | list[int]):
    request = PlanRequest(workload=workload, accelerator=accelerator, devices=devices)
    return plan_result(request, default_fits())


def _counts(text: str) -> list[int]:
    """``1,024 and 2,048`` -> [1024, 2048]."""
    return [int(c.replace(",", "")) for c in re.findall(r"\d[\d,]*\d|\d", text)]


@pytest.mark.parametrize(("asked", "expected"), NO_PICK.items(), ids=lambda v: str(v))
def test_no_pick_is_a_record_of_why_and_the_counts_that_let_it_pick(asked, expected) -> None:
    result = _plan(*asked)
    no_pick = result.model["no_pick"]
    assert result.model["picks"] == {} and not any(r["stops_paying"] for r in result.rows)
    assert [no_pick[k] for k in ("why", "unflagged", "flagged", "untimed")] == list(expected)
    rows = {int(r["accelerators"]): r for r in result.rows}
    for count in no_pick["flagged"]:  # the premise: a time, and a flag keeping it out
        assert rows[count]["flags"] and math.isfinite(rows[count]["time_to_train_min"])
    for count in no_pick["untimed"]:
        assert math.isnan(rows[count]["time_to_train_min"])
    # the counts it gives are those asked and more, and a plan of them picks
    assert set(rows) < set(no_pick["more"])
    again = _plan(asked[0], asked[1], no_pick["more"])
    assert again.model["no_pick"] is None and again.model["picks"]["picked"]


@pytest.mark.parametrize(("asked", "expected"), NO_PICK.items(), ids=lambda v: str(v))
def test_the_answer_says_why_none_is_picked_in_one_line(asked, expected, golden: Golden) -> None:
    workload, accelerator, devices = asked
    done = runner.invoke(app, ["plan", "-w", workload, "-a", accelerator, "-n", devices])
    assert done.exit_code == (1 if expected[0] == "no_time" else 0), done.output
    (line,) = re.findall(r"no pick: .*? lets it pick\.", " ".join(done.stdout.split()))
    why, then = line.removeprefix("no pick: ").split("; -n ")
    document = runner.invoke(
        app, ["plan", "-w", workload, "-a", accelerator, "-n", devices, "-f", "json"]
    ).stdout
    no_pick = json.loads(document)["model"]["no_pick"]
    assert no_pick == _plan(*asked).model["no_pick"]  # -f json carries the record
    # the line names the counts it is about, and the -n the record gives
    assert _counts(why) == no_pick["unflagged"] + no_pick["flagged"] + no_pick["untimed"]
    assert [int(c) for c in then.split()[0].split(",")] == no_pick["more"]  # -n's commas
    golden.check(VIEW, f"no pick: {workload} on {accelerator} at {devices}", line)


def test_the_answer_names_each_count_picked_where_its_column_is_dropped() -> None:
    """Llama2 70B LoRA on H100 at 16, 64, 256 on 80 columns: "picked by" is not shown,
    for width; the line under the table names 64 and 256 with the criteria picking each."""
    args = ["plan", "-w", "llama2_70b_lora", "-a", "H100-SXM5-80GB", "-n", "16,64,256"]
    done = runner.invoke(app, args, env=NARROW)
    assert done.exit_code == 0, done.output
    flat = " ".join(done.stdout.split())
    assert re.search(r"not shown, for width: picked by", flat)  # the premise
    named = re.search(r"picks (.*?), over the plan's times", flat).group(1)
    said = dict(re.findall(r"(\d[\d,]*) \(([^)]*)\)", named))
    picks = _plan("llama2_70b_lora", "H100-SXM5-80GB", "16,64,256").model["picks"]
    assert said == {f"{p['accelerators']:,}": ", ".join(p["by"]) for p in picks["picked"]}
    assert list(said) == ["64", "256"]


# counts of each kind: a single count, several, some flagged, beyond any submission, none
# with a time, a family that never ran the workload
SWEEP = [
    ("bert", "A100", "8"),
    ("bert", "A100", "2,4"),
    ("bert", "A100", "4,8,16,32"),
    ("bert", "H100", "8-256"),
    ("bert", "A100", "4096,8192"),
    ("bert", "H100", "100000"),
    ("resnet", "H100", "1,2"),
    ("llama2_70b_lora", "L4", "4"),
    ("unet3d", "MI325X", "8,64"),
    ("dlrm", "H100-PCIe-80GB", "4,8,16"),
]


@pytest.mark.parametrize("asked", SWEEP, ids=lambda v: str(v))
def test_every_plan_says_a_pick_or_why_none_in_both_views(asked) -> None:
    result = _plan(*asked)
    picked = [int(r["accelerators"]) for r in result.rows if r["stops_paying"]]
    assert bool(picked) == (result.model["no_pick"] is None)
    _, said, _ = plan_answer(result)
    _, explained, _ = plan_records(result, terminal=True)
    for lines in (said, explained):
        (line,) = [x for x in lines if PICK_LINE.match(x)]
        assert line.startswith("picks ") == bool(picked)


def test_where_no_count_added_lets_it_pick_the_line_says_so(golden: Golden) -> None:
    """A record whose search found no counts (``more`` empty: none of the bundled plans
    tried has one) gives no ``-n``, and says what was tried."""
    no_pick = _plan("bert", "A100", "8").model["no_pick"] | {"more": []}
    (line,) = no_pick_line(no_pick)
    assert "-n" not in line.split() and _counts(line.split(";")[0]) == [8]
    golden.check(VIEW, "no pick: no count added lets it pick", line)


@pytest.mark.parametrize("asked", [("bert", "A100", "8"), ("bert", "A100", "8,16")], ids=str)
def test_every_format_of_the_command_says_the_pick_or_why_none(asked) -> None:
    """The table (with and without --explain) says the pick line on stdout, -f csv on
    stderr beside the rows (stdout stays the CSV), -f json in ``model``: the same pick."""
    workload, accelerator, counts = asked
    args = ["plan", "-w", workload, "-a", accelerator, "-n", counts]
    document = json.loads(runner.invoke(app, [*args, "-f", "json"]).stdout)["model"]
    picks = [p["accelerators"] for p in document["picks"].get("picked", [])]
    for extra, stream in (([], "stdout"), (["--explain"], "stdout"), (["-f", "csv"], "stderr")):
        run = runner.invoke(app, [*args, *extra], env={"COLUMNS": "400"})
        assert run.exit_code == 0, run.output
        lines = [x for x in getattr(run, stream).splitlines() if PICK_LINE.match(x)]
        assert len(lines) == 1, (extra, getattr(run, stream))
        said = lines[0]
        assert said.startswith("picks ") == bool(picks)
        if picks:  # the counts it names before the comma (less each's criteria): the document's
            named = re.sub(r"\([^)]*\)", "", said.split(", over")[0])
            assert sorted(_counts(named)) == sorted(picks)
        else:
            assert document["no_pick"]["unflagged"] == _counts(said.split(":")[1])
    csv_out = runner.invoke(app, [*args, "-f", "csv"]).stdout
    assert not any(PICK_LINE.match(x) for x in csv_out.splitlines())
