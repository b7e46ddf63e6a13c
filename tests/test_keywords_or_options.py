"""A refusal names what the caller typed: the keyword from Python (``fixed_ms=30``), the
option on the command line (``--fixed-ms 30``). From Python, ``gpuscale.advise(...)``
said "--fixed-ms 30 is not below --step-ms 18.6", "--scaling weak with --global-batch",
"give it as --bench": options a Python caller has none of. Each case below is one
refusal, made both ways, with the names each way must use and the other's it must not."""

from __future__ import annotations

import json
import re
from dataclasses import fields, replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.request import AdviceRequest
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.sweep_request import check_nodes
from gpuscale.cli import app
from gpuscale.report.request import ReportRequest

from .builders import bench_record

runner = CliRunner()
NUMBERS = ["--params", "7M", "--step-ms", "18.6", "--batch", "8"]
NUMBERS_KW = dict(params=7e6, step_ms=18.6, batch=8)

# (Python keywords, the command line, names said from Python, the options said on the
# command line): the options are the ones `gpuscale advise --help` lists for the fields
ADVISE = [
    (
        dict(fixed_ms=30),
        ["--fixed-ms", "30"],
        ["fixed_ms=30", "step_ms=18.6"],
        ["--fixed-ms 30", "--step-ms 18.6"],
    ),
    (
        dict(step_ms=(18.6, 2.0), batch=(8, 64)),  # slower at the smaller batch
        ["--step-ms", "2", "--batch", "64"],
        ["step_ms=2", "batch=64", "batch=8"],
        ["--step-ms 2", "--batch 64", "--batch 8"],
    ),
    (
        dict(step_ms=(3.0, 5.0)),
        ["--step-ms", "5"],
        ["(step_ms=)", "batch="],
        ["(--step-ms)", "--batch"],
    ),
    (
        dict(scaling="weak", global_batch=128),
        ["--scaling", "weak", "--global-batch", "128"],
        ["scaling='weak'", "global_batch="],
        ["--scaling weak", "--global-batch"],
    ),
    (
        dict(latency_us=5.0),
        ["--latency-us", "5"],
        ["latency_us=", "busbw_gbs="],
        ["--latency-us", "--busbw-gbs"],
    ),
    (dict(model="tf-7m"), ["--model", "tf-7m"], ["model=", "bench="], ["--model", "--bench"]),
    (
        dict(nodes=2000, gpus_per_node=1000),
        ["--nodes", "2000", "--gpus-per-node", "1000"],
        ["nodes=2000", "gpus_per_node=1000"],
        ["--nodes 2000", "--gpus-per-node 1000"],
    ),
    (
        dict(samples=5e6, workload="bert"),
        ["--samples", "5M", "--workload", "bert"],
        ["samples=", "workload='bert'"],
        ["--samples", "--workload bert"],
    ),
]


def _said_from_python(call) -> str:
    with pytest.raises(ValueError) as refused:
        call()
    return str(refused.value)


def _said_on_the_command_line(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    return " ".join(result.output.split())  # one line, however the terminal wrapped it


def _names_only(said: str, mine: list[str], theirs: list[str]) -> None:
    assert all(name in said for name in mine), said
    assert not any(name in said for name in theirs), said


@pytest.mark.parametrize(("keywords", "args", "keyword_names", "options"), ADVISE, ids=str)
def test_an_advise_refusal_names_keywords_in_python_options_on_the_command_line(
    keywords: dict, args: list[str], keyword_names: list[str], options: list[str]
) -> None:
    python = _said_from_python(lambda: gpuscale.advise(**{**NUMBERS_KW, **keywords}))
    _names_only(python, keyword_names, options)
    assert "--" not in python, python
    cli = _said_on_the_command_line(["advise", *NUMBERS, *args])
    _names_only(cli, options, keyword_names)


def test_a_bench_file_given_as_the_sweep_is_named_each_way(tmp_path: Path) -> None:
    """A file of bench rows given as the collectives sweep: "give it as bench=" from
    Python, "give it as --bench" on the command line."""
    bench = tmp_path / "b.jsonl"
    bench.write_text(json.dumps(bench_record("m", 10**6, 1, 100.0)) + "\n")
    python = _said_from_python(lambda: gpuscale.advise(**NUMBERS_KW, collectives=str(bench)))
    _names_only(python, ["give it as bench="], ["--bench"])
    cli = _said_on_the_command_line(["advise", *NUMBERS, "--collectives", str(bench)])
    _names_only(cli, ["give it as --bench"], ["bench="])


@pytest.mark.parametrize(
    ("call", "args", "keyword_names", "options"),
    [
        (
            lambda: BenchConfig(global_batch=256),
            ["bench", "--global-batch", "256"],
            ["scaling='strong'", "batch="],
            ["--strong", "--batch"],
        ),
        (
            lambda: BenchConfig(backend="gloo", tf32="on"),
            ["bench", "--backend", "gloo", "--tf32"],
            ["backend='gloo'"],
            ["--backend gloo"],
        ),
        (
            lambda: check_nodes(2, 5),
            ["bench", "--nnodes", "2", "--node-rank", "5"],
            ["nnodes=2"],
            ["--nnodes 2"],
        ),
        (
            lambda: ReportRequest(model="x"),
            ["report", "--model", "x"],
            ["advise=True", "bench="],
            ["--advise", "--bench"],
        ),
    ],
    ids=["bench-global-batch", "bench-tf32", "bench-node-rank", "report-model"],
)
def test_a_field_refused_names_the_others_it_needs_each_way(
    call, args: list[str], keyword_names: list[str], options: list[str], tmp_path: Path
) -> None:
    python = _said_from_python(call)
    _names_only(python, keyword_names, options)
    out = ["--out", str(tmp_path / "r.jsonl")] if args[0] == "bench" else []
    cli = _said_on_the_command_line([*args, *out])
    _names_only(cli, options, keyword_names)


@pytest.mark.parametrize(
    "keywords",
    [dict(params=7e6, step_ms=2), dict(params=7e9, step_ms=900, batch=4, device_name="H100")],
    ids=["small", "7b-assumed"],
)
def test_the_advices_words_name_keywords_in_python_options_on_the_command_line(
    keywords: dict,
) -> None:
    """The advice's own words (its answer, explanation, what settles it, its warnings)
    name an input as its reader gives it; a command to paste (in backticks) is the
    shell's either way. The command line's words are the same advice's, its options."""
    python = gpuscale.advise(**keywords)
    said = [repr(python), *python.explanation, python.decision.settle or ""]
    said += [*python.decision.warnings, *python.predictions["energy_source"]]
    prose = [re.sub(r"`[^`]*`", "", s) for s in said]  # less the commands to paste
    assert any("samples=" in s for s in prose)
    options = {f"--{name.replace('_', '-')}" for name in (f.name for f in fields(AdviceRequest))}
    # the two spellings a sentence gives side by side ("--flops-per-sample (in Python: ...")
    beside = re.compile(r"--[a-z-]+ \(in Python|--[a-z-]+, or [a-z_]+=|--[a-z-]+ \S+ \([a-z_]+=")
    named = {o for s in prose for o in re.findall(r"--[a-z][a-z-]*", beside.sub("", s))}
    assert not named & options, named & options
    shell = replace(python, keywords=False)
    assert shell.explanation != python.explanation
    assert any("--samples" in s for s in shell.explanation)
    assert not any("samples=" in s for s in shell.explanation)
