"""Options written once: every request's fields are its command's options, named, typed
and helped from the field's metadata; commands import no other command's module."""

from __future__ import annotations

import ast
import errno
import json
import os
from dataclasses import fields
from pathlib import Path

import pytest
import typer

import gpuscale.cli
from gpuscale.advice.request import AdviceRequest
from gpuscale.bench.collectives_config import CheckRequest, CollectivesConfig
from gpuscale.bench.config import BenchConfig
from gpuscale.planning.request import PlanRequest
from gpuscale.report.request import ReportRequest
from gpuscale.tables.analysis_request import AnalysisOptions
from gpuscale.tables.request_text import request_of
from gpuscale.tables.requests import FieldError, help_for, option_name
from gpuscale.tables.round_requests import RoundSelection, ScoresOptions

from ..golden import Golden

ROUND_COMMANDS = ("scores", "analyze", "energy", "trends", "report", "dataset", "plan")
REQUESTS = [
    *((name, RoundSelection) for name in ROUND_COMMANDS),
    ("scores", ScoresOptions),
    ("advise", AdviceRequest),
    ("bench", BenchConfig),
    ("collectives", CollectivesConfig),
    ("plan", PlanRequest),
    ("analyze", AnalysisOptions),
    ("report", ReportRequest),
]
COMMANDS = ("advice", "bench", "energy_trends", "interconnect", "plan", "rounds")
VIEW = "cli/option_refusals"


@pytest.mark.parametrize(("name", "request_class"), REQUESTS)
def test_every_field_is_an_option_with_the_help_of_its_metadata(name, request_class) -> None:
    command = typer.main.get_command(gpuscale.cli.app).commands[name]  # type: ignore[attr-defined]
    by_option = {o: p for p in command.params for o in [*p.opts, *p.secondary_opts]}
    by_option |= {
        p.name.upper(): p for p in command.params if isinstance(p, typer.core.TyperArgument)
    }
    for f in (f for f in fields(request_class) if f.init):  # not a field resolved from them
        assert f.metadata.get("help"), f"{request_class.__name__}.{f.name} has no help"
        if name in ("dataset", "plan") and f.name == "benchmark":  # none; plan's is its own
            assert by_option.get("-b") is None or by_option["-b"].name != "benchmark"
            continue
        param = by_option[option_name(f)]
        assert param.name == f.name
        assert param.help == help_for(f.metadata, name)


def test_an_option_s_text_is_parsed_as_its_field_says() -> None:
    request = request_of(
        AdviceRequest, {"params": "7M", "step_ms": [12.0, 20.0], "batch": [8, 16], "topo": None}
    )
    assert request.params == 7_000_000
    assert request.step_points == ((8, 12.0), (16, 20.0))
    with pytest.raises(FieldError) as refused:
        request_of(AdviceRequest, {"params": "7 apples", "step_ms": [12.0]})
    assert refused.value.field == "params"
    config = request_of(CollectivesConfig, {"ops": "all_reduce,broadcast", "min_bytes": "1K"})
    assert config.ops == ("all_reduce", "broadcast") and config.min_bytes == 1024
    rounds = request_of(RoundSelection, {"paths": [Path("v4.1.tar")], "round_names": ["v5.0"]})
    assert rounds.paths == (Path("v4.1.tar"),) and rounds.round_names == ("v5.0",)
    assert rounds.asked and not request_of(RoundSelection, {"paths": None}).asked
    bench = request_of(BenchConfig, {"scaling": True, "nvml": True, "tf32": None})
    assert (bench.scaling, bench.nvml, bench.tf32) == ("strong", False, "default")


def test_no_command_module_imports_another_command_module() -> None:
    folder = Path(gpuscale.cli.__file__).parent
    for name in COMMANDS:
        tree = ast.parse((folder / f"{name}.py").read_text(encoding="utf-8"))
        imported = {
            node.module.rsplit(".", 1)[-1]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gpuscale.cli.")
        }
        assert not imported & (set(COMMANDS) - {name}), f"cli/{name}.py imports {imported}"


def test_world_sizes_refuses_text_as_the_nproc_field() -> None:
    from gpuscale.bench.runner import world_sizes

    assert world_sizes("4,1,2") == (1, 2, 4)
    for text in ("1,x", "0", "-1", "4,1,2,2"):
        with pytest.raises(FieldError) as refused:
            world_sizes(text)
        assert refused.value.field == "nproc"


def test_the_bench_loader_says_why_a_file_holds_no_bench_result(
    tmp_path: Path, golden: Golden
) -> None:
    from gpuscale.bench.results import ResultsError, load_bench

    sweeps = tmp_path / "collectives.jsonl"
    sweeps.write_text(json.dumps({"schema": "gpuscale.collectives/2"}) + "\n")
    with pytest.raises(ResultsError) as refused:
        load_bench(sweeps)
    assert "--collectives" in str(refused.value)  # the option the file belongs to
    paths = {str(tmp_path): "<tmp>"}
    golden.check(VIEW, "bench results: a collectives sweep", str(refused.value), paths=paths)
    other = tmp_path / "other.jsonl"
    other.write_text('{"hello": 1}\nnot json\n')
    with pytest.raises(ResultsError) as refused:
        load_bench(other)
    assert "2 line" in str(refused.value)  # both lines counted
    # the field it lacks, named in words, never as a Python None the file never held
    assert "'None'" not in str(refused.value) and "no 'schema' field" in str(refused.value)
    golden.check(VIEW, "bench results: no bench row", str(refused.value), paths=paths)
    for empty in ("null", '""'):  # a schema field without a value: said as empty
        other.write_text(f'{{"schema": {empty}}}\n')
        with pytest.raises(ResultsError) as refused:
            load_bench(other)
        assert "'None'" not in str(refused.value) and "empty 'schema'" in str(refused.value)


@pytest.mark.parametrize("kind", ["missing", "empty", "folder", "missing folder"])
def test_a_refused_results_file_says_how_to_make_one(
    tmp_path: Path, kind: str, golden: Golden
) -> None:
    """A results file missing, empty, or a folder: each refusal says what writes a results
    file, a way out; one whose folder is missing too names the folder to make first (the
    bench command alone is refused there)."""
    from gpuscale.bench.results import ResultsError, load_bench

    path = {
        "missing": tmp_path / "nosuch.jsonl",
        "folder": tmp_path,
        "missing folder": tmp_path / "no dir" / "r.jsonl",
    }.get(kind)
    if path is None:
        path = tmp_path / "empty.jsonl"
        path.write_text("")
    made = tmp_path / "results.jsonl" if kind == "folder" else path  # the file it wanted
    with pytest.raises(ResultsError) as refused:
        load_bench(path)
    said = str(refused.value)
    if kind == "missing folder":  # shell-quoted: the folder has a space
        assert f"mkdir -p '{made.parent}'`" in said and f"bench --out '{made}'`" in said
    else:
        assert f"bench --out {made}`" in said  # the command that writes it
    golden.check(VIEW, f"bench results: {kind}", said, paths={str(tmp_path): "<tmp>"})


def test_the_interconnect_check_refuses_an_unknown_preset_before_any_sweep(
    tmp_path: Path,
) -> None:
    out = tmp_path / "c.jsonl"
    with pytest.raises(FieldError) as caught:
        CheckRequest(out=out, interconnect="nvlink9")
    assert (caught.value.field, caught.value.value) == ("interconnect", "nvlink9")
    assert "'nvlink5'" in caught.value.rule  # the closest preset
    assert not out.exists()


def test_a_report_request_refuses_a_bad_basis_or_preset_when_made(golden: Golden) -> None:
    with pytest.raises(ValueError, match=r"convergence.basis"):
        ReportRequest(convergence_basis="guessed")
    with pytest.raises(ValueError):
        ReportRequest(advise=True, interconnect="no-such-link")
    # without --advise an advice option would be unused: refused, never ignored unsaid
    with pytest.raises(FieldError) as refused:
        ReportRequest(interconnect="nvlink4")
    assert refused.value.field == "interconnect"
    assert "advise=True" in str(refused.value) and "--advise" in refused.value.as_options()
    said = f"{refused.value}\n{refused.value.as_options()}"
    golden.check(VIEW, "report: an advice option without --advise", said)


def test_what_a_request_can_check_is_checked_when_it_is_made(golden: Golden) -> None:
    """Choices, the reference rule and link presets are refused when the request is made,
    before any round or file is read (a misspelt --division was refused after reading a
    whole archive, a misspelt --interconnect after a missing --bench), any case taken as
    every choice is, an abbreviation refused naming the choice (`--backend glo` is not
    gloo in silence)."""
    with pytest.raises(FieldError) as refused:
        AnalysisOptions(division="foo")
    assert (refused.value.field, refused.value.value) == ("division", "foo")
    assert "closed, open" in refused.value.rule  # the choices
    golden.check(VIEW, "analyze: a division that is none", str(refused.value))
    assert AnalysisOptions(division="CLOSED").division == "closed"
    assert AnalysisOptions(reference="FAMILY").reference == "family"
    # an abbreviation is no choice (`fam`, `gl`, `pcie4` were read as one): the one meant named
    for made, meant in (
        (lambda: AnalysisOptions(division="CLO"), "closed"),
        (lambda: AnalysisOptions(reference="fam"), "family"),
        (lambda: CollectivesConfig(backend="gl"), "gloo"),
    ):
        with pytest.raises(FieldError, match=meant):
            made()
    from gpuscale.hardware.links import get_preset

    with pytest.raises(KeyError, match="'pcie4-x16'"):  # the closest preset named
        get_preset("pcie4")
    assert AnalysisOptions(reference="Krai/7920T").reference == "Krai/7920T"
    with pytest.raises(FieldError) as refused:
        AnalysisOptions(reference="bogus")
    assert (refused.value.field, refused.value.value) == ("reference", "bogus")
    golden.check(VIEW, "analyze: a reference that is none", str(refused.value))
    from typer.testing import CliRunner

    for typed in ("v0.7", "4.1", "V5.0.0"):  # -r taken for the round's flag: the round meant
        with pytest.raises(FieldError) as refused:
            AnalysisOptions(reference=typed)
        assert f"round='{typed}'" in str(refused.value)
    result = CliRunner().invoke(gpuscale.cli.app, ["analyze", "-r", "v0.7", "-b", "bert"])
    assert result.exit_code == 2 and "--round v0.7" in result.output, result.output
    with pytest.raises(FieldError, match="'nvlink4'") as refused:  # the closest preset
        AdviceRequest(params=7e6, step_ms=2.0, batch=64, interconnect="nvlnk4")
    assert refused.value.field == "interconnect"
    with pytest.raises(FieldError, match="not a link preset"):
        CheckRequest(interconnect="nvlnk4")
    asked = ["advise", "--bench", "no-such.jsonl", "--interconnect", "nvlnk4"]
    result = CliRunner().invoke(gpuscale.cli.app, asked)
    assert result.exit_code == 2
    assert "nvlnk4" in result.output and "'nvlink4'" in result.output  # before the file
    golden.check(VIEW, "advise: a misspelt link before a missing file", result.output)


def test_a_missing_required_field_names_each_option_in_one_line(golden: Golden) -> None:
    """The request says what is missing (the CLI adds no check of its own): ``plan``
    alone lacks both names, and says so once, naming the options."""
    from typer.testing import CliRunner

    with pytest.raises(FieldError) as caught:
        PlanRequest(workload=" ", accelerator="H100")
    assert caught.value.field == "workload" and str(caught.value).startswith("workload: required")
    result = CliRunner().invoke(gpuscale.cli.app, ["plan"])
    said = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(said) == 1, result.output
    assert "--workload" in said[0] and "--accelerator" in said[0]
    assert said[0].count("required") == 2
    golden.check(VIEW, "plan: both names missing", said[0])


def test_the_command_line_parses_and_renders() -> None:
    """The CLI parses, builds a request, calls one library function and renders: what it
    computes or orchestrates belongs to the library, so the CLI stays small (under 1,200
    lines in all). Modules elsewhere end where their concept ends, under no cap."""
    package = Path(gpuscale.cli.__file__).parents[1]
    cli_lines = sum(len(p.read_text().splitlines()) for p in (package / "cli").glob("*.py"))
    assert cli_lines < 1_200


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["scores", ""], "error: PATHS: empty: give a value"),  # it read `.`
        (["ingest", ""], "error: PATHS: empty: give a value"),  # it read `.`
        (["report", "--out", ""], "error: --out: empty: give a value"),  # wrote into `.`
        (["bench", "--models", ""], "error: --models: empty: give a value"),  # the ladder
        (["scores", "-b", ""], "error: --benchmark: empty: give a value"),  # "ambiguous"
        (["scores", "--round", "4.1x"], "error: --round 4.1x: not a round name"),  # v4.1
    ],
)
def test_an_empty_or_malformed_value_is_refused_not_read_as_a_default(args, said) -> None:
    from typer.testing import CliRunner

    result = CliRunner().invoke(gpuscale.cli.app, args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(said), result.stderr


def test_every_output_folder_refuses_an_empty_value(golden: Golden) -> None:
    """`dataset --out ''` and `ingest --out ''` wrote into the current folder (and claimed
    it as their output): every command's --out is refused empty, found from the app."""
    import typer.main
    from typer.testing import CliRunner

    commands = typer.main.get_command(gpuscale.cli.app).commands
    with_out = [n for n, c in commands.items() if any("--out" in p.opts for p in c.params)]
    assert {"ingest", "dataset", "report", "bench", "collectives"} <= set(with_out)
    needs = {"ingest": ["nothing.tar.xz"]}  # its required argument; not read before the check
    said = set()
    for name in with_out:
        result = CliRunner().invoke(gpuscale.cli.app, [name, *needs.get(name, []), "--out", ""])
        assert result.exit_code == 2, (name, result.output)
        assert result.stderr.startswith("error: --out: "), (name, result.stderr)
        said.add(result.stderr)
    (one,) = said  # every command, the same refusal
    golden.check(VIEW, "an empty --out", one)


def _with_out() -> list[str]:
    import typer.main

    commands = typer.main.get_command(gpuscale.cli.app).commands
    return [n for n, c in commands.items() if any("--out" in p.opts for p in c.params)]


@pytest.mark.parametrize("where", ["Acme/out", "Acme/results/box/rep", ".", "Acme/x.jsonl"])
def test_every_output_refuses_a_raw_round_folder(
    tmp_path, monkeypatch, where: str, golden: Golden
) -> None:
    """`dataset --out ROUND/ds` and `report --out ROUND/Krai/results/rep` wrote into a raw
    round given as input (the report's folder read as a system next time): every
    command's --out, found from the app, is refused in a folder holding
    <org>/results/<system>/<benchmark>/ logs, the default --out too (run from inside
    one), before anything is read or run; beside the round it is written."""
    from typer.testing import CliRunner

    from tests.mlperf.logbuilder import RoundBuilder

    rb = RoundBuilder(name="my-copy").system("Acme", "box")
    root = rb.runs("Acme", "box", "bert", [10, 11, 12]).write_dir(tmp_path)
    monkeypatch.chdir(root)  # the default --out lands in the round
    with_out = _with_out()
    assert {"ingest", "dataset", "report", "bench", "collectives"} <= set(with_out)
    needs = {"ingest": ["nothing.tar.xz"]}  # its required argument; not read before the check
    said = set()
    for name in with_out:
        for out in ([] if name == "ingest" else [[]]) + [["--out", str(root / where)]]:
            result = CliRunner().invoke(gpuscale.cli.app, [name, *needs.get(name, []), *out])
            assert result.exit_code == 2, (name, out, result.output)
            assert result.stderr.startswith("error: --out "), (name, result.stderr)
            assert f" {root}" in result.stderr  # the round it lies in, named
            said.add(result.stderr.replace(str(tmp_path), "<tmp>"))  # the path whole
    golden.check(VIEW, f"--out in a raw round: {where}", "".join(sorted(said)))
    beside = CliRunner().invoke(
        gpuscale.cli.app, ["dataset", str(root), "--round", "v4.1", "--out", str(tmp_path / "ds")]
    )
    assert beside.exit_code == 0, beside.output
    assert (tmp_path / "ds" / "results.csv").exists()


def test_an_output_beside_a_folder_this_user_cannot_enter_is_written(tmp_path, unenterable) -> None:
    """Each --out's ancestors have their children looked at for a raw round, and a child
    the user may not enter (/root is one under /, for every user but root; another user's
    folder in /tmp or /home) ended every writing command in "error: Permission denied:
    /root/results". Such a folder is no round: the output is written, and a raw round
    holding one is still refused."""
    from typer.testing import CliRunner

    from gpuscale.sources.atomic import write_atomically
    from gpuscale.tables.out_paths import check_file_out, check_folder_out
    from gpuscale.tables.raw_rounds import raw_round_out
    from tests.mlperf.logbuilder import RoundBuilder

    root = RoundBuilder(name="r").system("Acme", "box").runs("Acme", "box", "bert", [10])
    root = root.write_dir(tmp_path)
    for folder in (tmp_path / "locked", root / "Locked"):  # beside the output; a round's org
        (folder / "results").mkdir(parents=True)
        unenterable(folder)
    check_folder_out("out", tmp_path / "rep", holds="files", default=Path("rep"))
    check_file_out("out", tmp_path / "r.jsonl", holds="rows", default=Path("r.jsonl"))
    assert write_atomically(tmp_path / "t", lambda tmp: (tmp / "a.csv").write_text("x"))
    ds = tmp_path / "ds"
    done = CliRunner().invoke(gpuscale.cli.app, ["dataset", "--round", "v5.0", "--out", ds])
    assert done.exit_code == 0, done.output
    assert (ds / "results.csv").is_file()
    assert f" {root} (" in (raw_round_out(root / "out") or "")  # the round, refused


def test_the_folder_writer_refuses_a_raw_round_whoever_calls(tmp_path, golden: Golden) -> None:
    """The Python API's writers (write_tables, write_report) share the folder writer."""
    from gpuscale.sources.atomic import OutputError, write_atomically
    from tests.mlperf.logbuilder import RoundBuilder

    root = RoundBuilder(name="r").system("Acme", "box").runs("Acme", "box", "bert", [10])
    root = root.write_dir(tmp_path)
    with pytest.raises(OutputError) as refused:
        write_atomically(root / "Acme" / "tables", lambda tmp: (tmp / "a.csv").write_text("x"))
    assert f" {root} (" in str(refused.value)  # the round it lies in
    paths = {str(tmp_path): "<tmp>"}
    golden.check(VIEW, "the folder writer: in a raw round", str(refused.value), paths=paths)
    assert not (root / "Acme" / "tables").exists()
    assert write_atomically(tmp_path / "t", lambda tmp: (tmp / "a.csv").write_text("x"))


def test_names_may_be_given_comma_separated() -> None:
    """`--round v4.1,v5.0` read v4.1 alone (the rest of the text was ignored)."""
    from gpuscale.tables.round_requests import RoundSelection

    asked = request_of(RoundSelection, {"round_names": ["v4.1,v5.0"], "benchmark": ["bert, gpt3"]})
    assert asked.round_names == ("v4.1", "v5.0") and asked.benchmark == ("bert", "gpt3")


def test_what_the_machine_refuses_is_one_line_not_a_traceback(tmp_path) -> None:
    """A full disk under stdout and a path name too long for the file system each ended
    in a traceback."""
    import subprocess
    import sys

    run = [sys.executable, "-m", "gpuscale.cli"]
    if Path("/dev/full").exists():
        with open("/dev/full", "w") as full:
            done = subprocess.run(
                [*run, "scores", "--round", "v4.1", "-f", "json"],
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
            )
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.strip().endswith(f"error: {os.strerror(errno.ENOSPC)}")  # the OS's
    done = subprocess.run([*run, "scores", "y" * 300], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: {os.strerror(errno.ENAMETOOLONG)}: yyy")


def test_a_second_workload_or_a_long_or_letterless_name_is_refused_plainly(
    golden: Golden,
) -> None:
    """plan -b bert -b retinanet plans both; a 100,000-character value does not come back
    whole in the refusal; `-b 伯特` is not called "ambiguous"."""
    from typer.testing import CliRunner

    run = CliRunner().invoke
    two = run(gpuscale.cli.app, ["plan", "-a", "H100", "-b", "bert", "-b", "retinanet"])
    assert two.exit_code == 2
    assert two.stderr.startswith("error: --workload ") and "bert, retinanet" in two.stderr
    golden.check(VIEW, "plan: two workloads", two.stderr)
    assert run(gpuscale.cli.app, ["plan", "-a", "H100", "-b", "bert", "-b", "bert"]).exit_code == 0
    long = run(gpuscale.cli.app, ["scores", "-b", "x" * 100_000])
    assert long.exit_code == 2 and len(long.stderr) < 1_000
    assert "(100,000 characters)" in long.stderr
    letterless = run(gpuscale.cli.app, ["scores", "-b", "伯特"])
    assert letterless.stderr.startswith("error: --benchmark") and "伯特" in letterless.stderr
    assert "ambiguous" not in letterless.stderr
    golden.check(VIEW, "scores: a 100,000-character benchmark", long.stderr)
    golden.check(VIEW, "scores: a benchmark without letters", letterless.stderr)


def test_analyze_bench_alone_says_which_round_options_went_unused(tmp_path, golden: Golden) -> None:
    """`analyze --bench FILE -b bert` does not drop -b without a word."""
    from typer.testing import CliRunner

    from tests.builders import bench_record

    results = tmp_path / "results.jsonl"
    rows = [bench_record("mlp-1m", 1_000_000, n, 100.0 * n) for n in (1, 2)]
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    asked = ["analyze", "--bench", str(results), "-b", "bert", "--reference", "family"]
    result = CliRunner().invoke(gpuscale.cli.app, [*asked, "--decompose"])
    assert result.exit_code == 0, result.output
    (note,) = [line for line in result.stderr.splitlines() if "--benchmark" in line]
    assert note.startswith("note: ") and "--reference" in note  # every unused option named
    assert "--decompose" in note  # a flag of the rounds' rows likewise
    golden.check(VIEW, "analyze --bench: round options unused", note)


def test_scores_refuses_two_choices_of_columns() -> None:
    """`scores --all-columns --columns accelerators` showed the one column, dropping
    --all-columns without a word."""
    from typer.testing import CliRunner

    result = CliRunner().invoke(
        gpuscale.cli.app, ["scores", "--all-columns", "--columns", "accelerators"]
    )
    assert result.exit_code == 2 and result.stdout == ""
    assert "--all-columns" in result.stderr and "--columns" in result.stderr
