"""The CLI as a demanding user meets it: names resolved or refused with the valid ones,
tables that fit the terminal without splitting numbers, one document per machine format,
nothing changed silently, --version, help without value types on flags."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.names import UnknownNameError, resolve_choice, resolve_workloads

from .golden import Golden

runner = CliRunner()
VIEW = "cli/ux_refusals"
V41 = ["bert", "llama2_70b_lora", "ssd", "stable_diffusion", "dlrm_dcnv2", "gnn", "gpt3"]


@pytest.mark.parametrize(
    "typed, expected",
    [
        ("Llama2 70B LoRA", "llama2_70b_lora"),  # the report's own heading
        ("llama2", "llama2_70b_lora"),  # an unambiguous prefix
        ("llama2_70b", "llama2_70b_lora"),
        ("RetinaNet", "retinanet"),  # the workload name of the ssd folder
        ("BERT", "bert"),
    ],
)
def test_benchmark_names_people_type(typed: str, expected: str) -> None:
    assert resolve_workloads([typed], V41) == [expected]


def test_unknown_benchmark_lists_the_valid_ones_and_the_closest(golden: Golden) -> None:
    with pytest.raises(UnknownNameError, match=r"'bertt'.*'bert'") as refused:
        resolve_workloads(["bertt"], V41)
    assert all(name in str(refused.value) for name in ("gpt3", "retinanet"))  # the valid ones
    golden.check(VIEW, "a mistyped benchmark", str(refused.value))


@pytest.mark.parametrize("command", ["scores", "energy", "report", "analyze", "trends"])
def test_every_command_refuses_a_mistyped_benchmark(command: str, tmp_path) -> None:
    args = [command, "-b", "bertt"] + (
        ["--out", str(tmp_path / "r")] if command == "report" else []
    )
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "did you mean 'bert'" in result.output
    assert not (tmp_path / "r").exists()


def test_families_and_divisions_are_resolved_or_refused() -> None:
    assert resolve_choice("Closed", ["closed", "open"], "division") == "closed"
    result = runner.invoke(app, ["analyze", "-b", "bert", "--division", "closd"])
    assert result.exit_code == 2 and "closed" in result.output
    result = runner.invoke(app, ["analyze", "-b", "bert", "--family", "H10"])
    assert result.exit_code == 2
    assert "H100-SXM5-80GB" in result.output  # the valid families are listed
    ok = runner.invoke(app, ["analyze", "-b", "bert", "--family", "h100-sxm5-80gb", "-f", "json"])
    assert ok.exit_code == 0, ok.output


def test_clusters_asked_beyond_the_data_are_reported() -> None:
    result = runner.invoke(app, ["analyze", "-b", "llama2", "-k", "50", "-f", "json"])
    assert result.exit_code == 0
    assert re.search(r"-k 50 lowered to \d+", result.stderr)
    json.loads(result.stdout)  # the note went to stderr: stdout is still one document


def test_numbers_are_never_split_in_a_narrow_terminal(monkeypatch) -> None:
    import io

    import pandas as pd
    from rich.console import Console

    from gpuscale.quantities import number

    csv = runner.invoke(app, ["scores", "-b", "bert", "-f", "csv"]).stdout
    frame = pd.read_csv(io.StringIO(csv))
    expected = {
        number(v, digits=4) for c in ("time_to_train_min", "accelerators") for v in frame[c]
    }
    for width in (80, 100, 160):
        console = Console(width=width, soft_wrap=False, file=io.StringIO())
        monkeypatch.setattr("gpuscale.cli.output.out", console)  # show() prints the view
        result = runner.invoke(app, ["scores", "-b", "bert"])
        assert result.exit_code == 0
        text = console.file.getvalue()
        assert max(len(line) for line in text.splitlines()) <= width
        lines = text.splitlines()
        missing = [n for n in expected if not any(n in line for line in lines)]
        assert missing == [], (width, missing[:5])  # each number whole on one line


def test_piped_output_honours_columns() -> None:
    import subprocess
    import sys

    code = "from gpuscale.cli.output import out; print(out.width)"
    env = {"COLUMNS": "97", "PATH": "/usr/bin:/bin"}
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert found.stdout.strip() == "97"


def test_analyze_bench_and_rounds_is_one_json_document(tmp_path) -> None:
    from gpuscale.bench.results_file import append_result

    from .builders import bench_record

    path = tmp_path / "r.jsonl"
    for world, sps in ((1, 100.0), (2, 180.0)):
        append_result(path, bench_record("mlp-1m", 10**6, world, sps))
    result = runner.invoke(
        app, ["analyze", "--bench", str(path), "--round", "v4.1", "-b", "bert", "-f", "json"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {"bench", "rounds", "notes"}
    csv = runner.invoke(app, ["analyze", "--bench", str(path), "--round", "v4.1", "-f", "csv"])
    assert csv.exit_code == 2 and "one table" in csv.output


def test_empty_energy_writes_no_document() -> None:
    """No row: exit 2 with why, as trends and analyze do, and no document on stdout (a
    failed command's stdout is no result), as the table writes none."""
    result = runner.invoke(app, ["energy", "--round", "v3.0", "-b", "resnet", "-f", "json"])
    assert result.exit_code == 2 and result.stdout == ""
    assert "error: no power logs" in result.stderr


def test_version_and_flags_without_types() -> None:
    from gpuscale import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"gpuscale {__version__}"
    for command in ("analyze", "report", "bench"):
        assert "<bool>" not in runner.invoke(app, [command, "--help"]).stdout


def test_one_result_under_two_names_is_analysed_once() -> None:
    """Dell submitted the same 64-GPU run twice in v4.1 Llama2 (the same 10 runs, with and
    without power measurement): the analysis holds it once, under the plain name the
    study names."""
    result = runner.invoke(app, ["analyze", "-b", "llama2", "-f", "csv"])
    assert result.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    dell64 = [r["system_id"] for r in rows if r["org"] == "Dell" and r["accelerators"] == "64"]
    plain = "8xXE9680x8H100-SXM-80GB"  # the name without power measurement
    assert dell64 == [plain]


def test_a_collectives_file_given_as_bench_results_is_named(tmp_path, golden: Golden) -> None:
    path = tmp_path / "coll.jsonl"
    line = json.dumps({"schema": "gpuscale.collectives/2", "kind": "sweep", "sweep_id": "s"})
    path.write_text((line + "\n") * 70)
    result = runner.invoke(app, ["advise", "--bench", str(path)])
    assert result.exit_code == 2
    assert "--collectives" in result.output  # the option it belongs to
    golden.check(
        VIEW, "a collectives file as --bench", result.output, paths={str(tmp_path): "<tmp>"}
    )
    assert result.output.count("skipped") <= 1  # not 70 lines of it first


def test_analyze_prints_each_familys_equilibrium() -> None:
    """The README's per-family equilibrium, not only in the JSON: Llama2 LoRA's H100
    picks (E' threshold 32, speed x efficiency 128) are the answer's first rows (like
    with like leads), with and without ``--explain``, which says them there once (not again
    under the systems' table)."""
    for explain in ([], ["--explain"]):
        args = ["analyze", "-b", "llama2", *explain]
        result = runner.invoke(app, args, env={"COLUMNS": "400"})
        assert result.exit_code == 0
        lines = result.stdout.splitlines()
        start = next(i for i, x in enumerate(lines) if "H100-SXM5-80GB (most counts)" in x)
        own = lines[start : start + 4]  # fastest, knee, speed x efficiency, E' threshold
        assert " 128 " in next(x for x in own if "speed x efficiency" in x)
        assert " 32 " in next(x for x in own if "E' >= 0.8 x best" in x)
        assert not [x for x in lines if x.strip().startswith("within H100-SXM5-80GB")]


def test_user_text_is_printed_as_written(tmp_path) -> None:
    """An error a user's factory raised is their text: ":smile:" stays ":smile:" (rich
    would draw a face) and square brackets stay brackets."""
    from tests.builders import bench_record

    error = "make raised RuntimeError: :smile: [bold]x[/bold]"
    rows = [
        bench_record("m", 10**6, 1, 1000.0),
        bench_record("boom", 10**6, 1, 0.0, status="error", error=error),
    ]
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = CliRunner().invoke(app, ["analyze", "--bench", str(path)])
    assert result.exit_code == 0, result.output
    assert error in result.output


def test_a_benchmark_typed_where_a_path_goes_is_pointed_to_b(golden: Golden) -> None:
    result = CliRunner().invoke(app, ["analyze", "brt"])
    assert result.exit_code == 2
    assert "-b brt" in result.output  # the option to give it with
    golden.check(VIEW, "a benchmark where a path goes", result.output)
    result = CliRunner().invoke(app, ["analyze", "nowhere/v4.1.tar"])
    assert result.exit_code == 2 and "-b" not in result.output


def test_the_benchmark_hint_only_where_a_benchmark_is_taken_and_meant(golden: Golden) -> None:
    """`ingest nosuch` does not say "(a benchmark? give it with -b nosuch)": ingest has no
    -b, and nosuch is no benchmark's name."""
    for args in (["ingest", "brt"], ["ingest", "nosuch"], ["analyze", "nosuch"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2 and args[1] in result.output  # the path named
        assert "-b" not in result.output, (args, result.output)
        golden.check(VIEW, f"no such path: {' '.join(args)}", result.output)


def test_a_missing_collectives_file_is_named_as_the_bench_file_is(tmp_path, golden: Golden) -> None:
    """`advise --collectives nosuch.jsonl` said "[Errno 2] No such file or directory"."""
    missing = tmp_path / "nosuch.jsonl"
    args = ["advise", "--params", "7M", "--step-ms", "20", "--collectives", str(missing)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    said = result.output.strip()
    assert said.startswith(f"error: {missing}: ") and "collectives file" in said  # its kind
    assert "collectives --out" in said  # and what writes one
    golden.check(VIEW, "a missing collectives file", said, paths={str(tmp_path): "<tmp>"})


def test_a_missing_topology_file_is_named_as_the_other_files_are(tmp_path, golden: Golden) -> None:
    """`advise --topo nosuch.txt` and `topo --file nosuch.txt` said "No such file or
    directory", where a missing bench or collectives file is named by its kind."""
    missing = tmp_path / "nosuch.txt"
    said = set()
    for args in (
        ["advise", "--params", "7M", "--step-ms", "20", "--topo", str(missing)],
        ["topo", "--file", str(missing)],
    ):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert result.output.startswith(f"error: {missing}: "), result.output
        said.add(result.output.strip())
    (both,) = said  # the same words from both commands
    assert "topology file" in both  # its kind
    golden.check(VIEW, "a missing topology file", both, paths={str(tmp_path): "<tmp>"})


def test_duplicates_listed_both_show_what_tells_them_apart() -> None:
    """`scores --duplicates -f csv` names each twin in its `same_runs_as` column, as
    docs/tour.md says, not 19 identical rows."""
    import csv
    import io

    both = runner.invoke(app, ["scores", "--round", "v4.0", "--duplicates", "-f", "csv"])
    rows = list(csv.DictReader(io.StringIO(both.stdout)))
    assert both.exit_code == 0 and "same_runs_as" in rows[0]
    assert any(r["same_runs_as"] for r in rows)
    every = runner.invoke(app, ["scores", "--round", "v4.0", "-f", "csv"])
    listed = list(csv.DictReader(io.StringIO(every.stdout)))
    assert len(listed) > len(rows) and "same_runs_as" in listed[0]


def test_duplicates_of_a_round_without_twins_say_so(golden) -> None:
    """`scores --round v5.0 --duplicates`: the round lists no result under two names; the
    command says so on stderr (an empty table said nothing) and exits 2, as every table
    command with no row does, writing no document in any format."""
    from gpuscale import load_round

    scores = load_round("v5.0").scores
    assert not scores["same_runs_as"].fillna("").astype(str).any()  # no twin: the case
    table = runner.invoke(app, ["scores", "--round", "v5.0", "--duplicates"])
    assert table.exit_code == 2 and table.stdout == "" and "v5.0" in table.stderr
    golden.check(VIEW, "--duplicates of a round without twins", table.stderr.strip())
    document = runner.invoke(app, ["scores", "--round", "v5.0", "--duplicates", "-f", "json"])
    assert document.exit_code == 2 and document.stdout == ""


def test_a_reader_that_stops_early_loses_no_note_and_no_status(tmp_path) -> None:
    """``gpuscale plan ... | head -1``: once the reader had gone, the command ended with
    status 1 and the notes it prints after its table (on stderr) were lost; the rest of
    stdout is now dropped, the notes said, the status the command's own."""
    import subprocess
    import sys

    err = tmp_path / "err.txt"
    command = f"{sys.executable} -m gpuscale.cli plan -w bert -a H100 2>{err} | true"
    done = subprocess.run(
        ["bash", "-c", command + "; echo ${PIPESTATUS[0]}"], capture_output=True, text=True
    )
    said = err.read_text()
    assert done.stdout.strip() == "0", said
    whole = subprocess.run(
        [sys.executable, "-m", "gpuscale.cli", "plan", "-w", "bert", "-a", "H100"],
        capture_output=True,
        text=True,
    )
    assert said == whole.stderr  # every note, as a reader that reads all gets them
    assert "H100-SXM5-80GB" in said  # the family H100 is read as
    assert "Traceback" not in said and "Exception ignored" not in said


@pytest.mark.parametrize("asked", [["--help"], ["analyze", "--help"]])
def test_help_to_a_reader_that_stops_early_leaves_the_status_alone(asked: list[str]) -> None:
    """``gpuscale --help | head -1`` ended with status 1 and no word (typer's help console
    is rich's, whose closed pipe exits with 1) where ``gpuscale analyze ... | head -1``
    ended with its own, 0: help's reader gone is as any other's."""
    import subprocess
    import sys

    command = " ".join([sys.executable, "-m", "gpuscale.cli", *asked, "| true"])
    done = subprocess.run(
        ["bash", "-c", command + "; echo ${PIPESTATUS[0]}"], capture_output=True, text=True
    )
    assert done.stdout.strip() == "0" and done.stderr == "", done.stderr


def test_a_reader_of_both_streams_that_stops_early_leaves_the_status_alone() -> None:
    """``gpuscale plan ... -f csv 2>&1 | head -1``: a note written after the reader has
    gone does not end the command with status 1; stderr is dropped as stdout is, the
    status the command's own."""
    import subprocess
    import sys

    command = f"{sys.executable} -m gpuscale.cli plan -w bert -a H100 -f csv 2>&1 | true"
    done = subprocess.run(
        ["bash", "-c", command + "; echo ${PIPESTATUS[0]}"], capture_output=True, text=True
    )
    assert done.stdout.strip() == "0", done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
