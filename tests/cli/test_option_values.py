"""Every numeric option of every command, given a value it refuses, gets one specific line
naming the option, the value and what it must be: never the option's whole help, a field
name the command line does not have, another option's name, a traceback or a hang."""

from __future__ import annotations

import math

import pytest
import typer.main
from typer.testing import CliRunner

from gpuscale.cli import app

# What each command needs besides the option tried, so only that option is refused.
BASE = {
    "analyze": ["-b", "bert"],
    "advise": ["--params", "7M", "--step-ms", "20"],
    "plan": ["-w", "bert", "-a", "H100"],
    "bench": ["--backend", "gloo", "--nproc", "1", "--models", "mlp-0.2m"],
    "collectives": ["--backend", "gloo", "--nproc", "2"],
    "report": [],
}
# Options that take numbers as text (sizes, byte sizes, counts, lists of counts).
NUMBERS_AS_TEXT = {
    "--params",
    "--flops-per-sample",
    "--noise-scale",
    "--samples",
    "--max-params",
    "--min-params",
    "--memory-limit",
    "--min-bytes",
    "--max-bytes",
    "--nproc",
    "--devices",
}


def _type_name(param) -> str:  # type: ignore[no-untyped-def]
    """The type of an option's value: Typer that vendors Click has ``bare_type``; earlier
    Typer (an H100 machine's image had one) hands out Click's own options, with ``type``."""
    bare = getattr(param, "bare_type", None)
    return str(bare()) if bare is not None else param.type.name


def numeric_options() -> list[tuple[str, str, str]]:
    """(command, option, its help) of every option taking a number."""
    found = []
    for name, command in typer.main.get_command(app).commands.items():
        for param in command.params:
            if param.param_type_name != "option" or param.is_flag or name not in BASE:
                continue
            option = max(param.opts, key=len)
            kind = param.metavar or _type_name(param)  # a number taken as text: <int>
            if any(t in kind for t in ("int", "float")) or option in NUMBERS_AS_TEXT:
                found.append((name, option, param.help or ""))
    return found


OPTIONS = numeric_options()


def _given(command: str, option: str, value: str, tmp_path):  # type: ignore[no-untyped-def]
    """``command`` run with what it needs and ``option`` given ``value``."""
    if command in ("bench", "collectives"):
        pytest.importorskip("torch")
    args = list(BASE[command])
    if option in args:  # the option tried replaces the base's value
        at = args.index(option)
        del args[at : at + 2]
    if command in ("bench", "collectives", "report"):
        args += ["--out", str(tmp_path / "out")]
    given = [f"{option}={value}"] if option.startswith("--") else [option, value]
    return CliRunner().invoke(app, [command, *args, *given])


def test_the_options_found_are_every_commands_numbers() -> None:
    commands = {c for c, _, _ in OPTIONS}
    assert commands == set(BASE)
    assert len(OPTIONS) > 40


@pytest.mark.parametrize(("command", "option", "help_text"), OPTIONS, ids=lambda x: str(x)[:24])
def test_a_refused_value_is_one_line_naming_the_option(
    command: str, option: str, help_text: str, tmp_path
) -> None:
    result = _given(command, option, "-5", tmp_path)
    said = result.stderr.strip()
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), said
    assert "Traceback" not in said
    lines = said.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {option} -5"), said
    assert "_" not in lines[0].split(":")[1], said  # an option, never a field name
    assert help_text.split(".")[0] not in lines[0], said  # never the option's help


@pytest.mark.parametrize(("command", "option", "help_text"), OPTIONS, ids=lambda x: str(x)[:24])
def test_text_that_is_no_number_is_one_line_naming_the_option(
    command: str, option: str, help_text: str, tmp_path
) -> None:
    """``--steps abc`` gets one line, as a number out of range does, not Typer's usage box
    ("Input should be a valid integer, unable to parse string as an integer")."""
    result = _given(command, option, "abc", tmp_path)
    said = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert len(said) == 1 and said[0].startswith(f"error: {option} abc: "), said


@pytest.mark.parametrize(("command", "option", "help_text"), OPTIONS, ids=lambda x: str(x)[:24])
def test_a_huge_number_is_said_as_typed(
    command: str, option: str, help_text: str, tmp_path
) -> None:
    """``--steps 1e99`` (never echoed as a 100-digit integer), ``--price 1e400`` (not
    ``inf``), ``--step-ms 1e99`` (not ``1e+99``): refused, as typed, one line."""
    result = _given(command, option, "1e99", tmp_path)
    said = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert len(said) == 1 and said[0].startswith(f"error: {option} 1e99: "), said


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["advise", "--strategy", "fsdpp"],
            "--strategy fsdpp: must be one of ddp, zero2, fsdp, hybrid",
        ),
        (["advise", "--scaling", "strng"], "--scaling strng: must be one of auto, strong, weak"),
        (["advise", "--grad-bytes", "3"], "--grad-bytes 3: must be one of 1, 2, 4, 8"),
        (["bench", "--precision", "fp64"], "--precision fp64: must be one of fp32, bf16, fp16"),
        (["bench", "--grad-comm", "fp16"], "--grad-comm fp16: must be one of fp32, bf16"),
        (["analyze", "--convergence-basis", "x"], "--convergence-basis x: must be one of"),
    ],
)
def test_a_choice_refused_names_its_option_once(args: list[str], said: str, tmp_path) -> None:
    """A value outside a field's choices said as the option and its choices, once (it was
    'grad_comm is one of ...', 'bytes per gradient element must be ...', or the choices
    twice: 'must be one of ddp, fsdp; ddp or fsdp.')."""
    command, option, value = args
    result = _given(command, option, value, tmp_path)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith(f"error: {said}"), lines
    assert lines[0].count("ddp, fsdp") <= 1 and "_" not in lines[0].split(":")[1], lines


def test_sizes_reach_what_the_largest_models_need() -> None:
    """Llama 3.1 405B costs ~2e16 FLOPs per sample: ``--flops-per-sample 2e16`` was refused
    by the size parser's own cap (10^16) below the field's, and ``20P`` was no size."""
    from gpuscale.quantities import parse_size

    assert parse_size("2e16") == parse_size("20P") == 2 * 10**16
    result = CliRunner().invoke(app, ["advise", *BASE["advise"], "--flops-per-sample", "20P"])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(app, ["advise", *BASE["advise"], "--samples", "1e17"])
    assert result.exit_code == 2 and "--samples 1e17: " in result.stderr
    assert "at most 10^16" in result.stderr  # a range's end as a person reads it


def test_the_refusals_docs_tour_quotes_are_what_advise_prints() -> None:
    """docs/tour.md said text that is no number gets Typer's "Invalid value" box; it gets
    one line like a number out of range. Each `error: --step-ms V: ...` it quotes is read
    from the page and checked against the command."""
    import re
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs" / "tour.md").read_text()
    quoted = re.findall(r"`(error: --step-ms (\S+): [^`]+)`", " ".join(page.split()))
    assert len(quoted) == 2, quoted
    for line, value in quoted:
        result = CliRunner().invoke(app, ["advise", "--params", "7M", f"--step-ms={value}"])
        assert result.exit_code == 2 and result.stderr.strip() == line, result.stderr


def test_a_choice_in_another_case_is_taken_and_a_preset_typo_gets_the_closest() -> None:
    """`--strategy FSDP` is read as `fsdpp` gets a hint, and `--interconnect NVLINK4` /
    `nvlnk4` get a did-you-mean, not 'unknown' alone."""
    from gpuscale.advice.request import AdviceRequest

    assert AdviceRequest(params=7e6, step_ms=20, strategy="FSDP").strategy == "fsdp"
    numbers = ["advise", *BASE["advise"]]
    result = CliRunner().invoke(app, [*numbers, "--interconnect", "NVLINK4"])
    assert result.exit_code == 0 and "on nvlink4" in result.stdout, result.output
    result = CliRunner().invoke(app, [*numbers, "--interconnect", "nvlnk4"])
    assert result.exit_code == 2 and "did you mean 'nvlink4'?" in result.stderr


def test_columns_are_chosen_in_every_format_that_has_them_and_never_ignored(tmp_path) -> None:
    """`analyze -f csv --columns`, `analyze --bench --columns` (a typo too), `--columns
    a,,b` and `plan --devices 8,,16`: the columns chosen, refused with the closest, or
    refused as empty, never all written, ignored or an empty name dropped."""
    import json

    from ..builders import bench_record

    rounds = ["analyze", "--round", "v4.1", "-b", "bert"]
    result = CliRunner().invoke(app, [*rounds, "-f", "csv", "--columns", "system_name,speedup"])
    assert result.exit_code == 0 and result.stdout.splitlines()[0] == "system_name,speedup"
    result = CliRunner().invoke(app, [*rounds, "-f", "json", "--columns", "speedup"])
    assert result.exit_code == 2 and "not -f json" in result.stderr
    for empty in (",", "system_name,,speedup"):
        result = CliRunner().invoke(app, [*rounds, "--columns", empty])
        assert result.exit_code == 2 and "an empty column name" in result.stderr
    bench = tmp_path / "b.jsonl"
    rows = [bench_record("m", 10**6, n, rate) for n, rate in ((1, 100.0), (2, 150.0))]
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(app, ["analyze", "--bench", str(bench), "--columns", "speedp"])
    assert result.exit_code == 2 and "did you mean 'speedup'?" in result.stderr
    args = ["analyze", "--bench", str(bench), "-f", "csv", "--columns", "accelerators,speedup"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0 and result.stdout.splitlines()[0] == "accelerators,speedup"
    result = CliRunner().invoke(app, ["plan", *BASE["plan"], "--devices", "8,,16"])
    assert result.exit_code == 2 and "an empty count between commas" in result.stderr


def test_columns_given_twice_or_unknown_are_refused_before_any_note() -> None:
    """`scores --round v4.1 --columns foo` says the error before any note, and `--columns
    time_to_train_min,time_to_train_min` is refused, not the column shown twice."""
    asked = ["scores", "--round", "v4.1"]
    result = CliRunner().invoke(app, [*asked, "--columns", "foo"])
    assert result.exit_code == 2 and result.stderr.startswith("error: --columns foo"), result.stderr
    for twice in (
        "time_to_train_min,time_to_train_min",
        "system_name,Time_To_Train_Min,time_to_train_min",
    ):
        result = CliRunner().invoke(app, [*asked, "-b", "bert", "--columns", twice])
        assert result.exit_code == 2, result.stdout
        assert "time_to_train_min given twice" in result.stderr


@pytest.mark.parametrize(
    "args, twice",
    [
        (["plan", "-b", "bert", "-a", "H100", "-n", "8,16,16"], "--devices 8,16,16: 16 given"),
        (["plan", "-b", "bert", "-a", "H100", "-n", "8-64,16"], "--devices 8-64,16: 16 given"),
        (["scores", "--round", "v4.1,v4.1", "-b", "bert"], "--round v4.1,v4.1: v4.1 given"),
        (["scores", "--round", "v4.1", "-b", "bert", "-b", "BERT"], "bert,BERT: bert given"),
    ],
)
def test_a_list_item_given_twice_is_refused_in_every_command(args: list[str], twice: str) -> None:
    """`bench --nproc 1,2,2`, `plan -n 8,16,16`, `--round v4.1,v4.1` and `-b bert,bert`
    are each refused, the option and item named, as `--columns a,a` is, never run once
    without a word."""
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and twice in line and "given twice; give each" in line


@pytest.mark.parametrize("value", ["0", "2.5"])
def test_collectives_states_its_own_rule_for_nproc(value: str, tmp_path) -> None:
    """collectives runs one world size: its --nproc rule offers one number, never the
    bench's list of counts (``1,2,4``), which it refuses."""
    result = _given("collectives", "--nproc", value, tmp_path)
    said = result.stderr.strip()
    assert result.exit_code == 2, result.output
    assert said.startswith(f"error: --nproc {value}: ") and "1,2" not in said


# Each option that reads a size: its command, the request holding its range, its field and
# the reader of the values offered (a byte size or a count).
SIZE_OPTIONS = [
    ("advise", "--params", "advice", "params", "count"),
    ("advise", "--samples", "advice", "samples", "count"),
    ("advise", "--flops-per-sample", "advice", "flops_per_sample", "count"),
    ("advise", "--noise-scale", "advice", "noise_scale", "count"),
    ("bench", "--max-params", "bench", "max_params", "count"),
    ("bench", "--min-params", "bench", "min_params", "count"),
    ("bench", "--memory-limit", "bench", "memory_limit_bytes", "bytes"),
    ("collectives", "--min-bytes", "collectives", "min_bytes", "bytes"),
    ("collectives", "--max-bytes", "collectives", "max_bytes", "bytes"),
]


@pytest.mark.parametrize(("command", "option", "request_kind", "field", "kind"), SIZE_OPTIONS)
def test_a_size_typed_wrong_is_offered_only_sizes_its_field_takes(
    command: str, option: str, request_kind: str, field: str, kind: str, golden, tmp_path
) -> None:
    """``--params 7Q`` was offered ``20P or 2e16``, sizes --params refuses (it takes up to
    10^14): every example offered lies within the option's own range."""
    import re

    from gpuscale.advice.request import AdviceRequest
    from gpuscale.bench.config import BenchConfig
    from gpuscale.quantities import parse_bytes, parse_size

    ranges = {"advice": AdviceRequest.field_ranges, "bench": BenchConfig.field_ranges}
    low, high, _ = ranges.get(request_kind, {}).get(field, (0, math.inf, True))
    args = [a for a in BASE[command] if command != "advise" or a not in ("--params", "7M")]
    if command in ("bench", "collectives"):
        args += ["--out", str(tmp_path / "out")]
    if command == "advise" and option != "--params":
        args += ["--params", "7M"]
    result = CliRunner().invoke(app, [command, *args, option, "7Q"])
    said = result.stderr.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert len(said) == 1 and said[0].startswith(f"error: {option} 7Q: "), said
    offered = re.fullmatch(r".*\(use e\.g\. (.+)\)", said[0])
    assert offered, said
    examples = re.split(r", | or ", offered.group(1))
    assert len(examples) >= 3, examples
    read = parse_bytes if kind == "bytes" else parse_size
    for example in examples:
        assert low <= read(example) <= high, (example, low, high)
    golden.check("cli/option_refusals", f"{command} {option}: not a size", said[0])


@pytest.mark.parametrize(
    "typed", [["--round", "v5.0,"], ["--round", ",v4.1"], ["-b", "bert,", "--round", "v4.1"]]
)
def test_an_empty_round_or_workload_name_is_refused_with_that_options_example(
    typed, golden
) -> None:
    """``--round 'v5.0,'`` was told to give "names such as v4.1 or bert" (a workload is no
    round): each option now gives its own kind of name, worded as every list option is."""
    result = CliRunner().invoke(app, ["scores", *typed])
    assert result.exit_code == 2 and result.stdout == ""
    golden.check("cli/option_refusals", f"scores {' '.join(typed)}", result.stderr.strip())


@pytest.mark.parametrize(
    ("typed", "kind", "bare"),
    [("20ms", float, "20"), ("300 W", float, "300"), ("8x", int, "8"), ("1.5e3us", float, "1.5e3")],
)
def test_a_number_typed_with_its_unit_is_told_the_bare_number(typed: str, kind, bare: str) -> None:
    """``--step-ms 20ms`` said only "must be a number": the number is there, its unit is
    the option's."""
    from gpuscale.sizes import BadQuantity, reading_number

    with pytest.raises(BadQuantity) as refused:
        reading_number(kind)(typed)
    assert f"(give {bare}, a bare number)" in str(refused.value)
    with pytest.raises(BadQuantity) as unread:  # no number in it: nothing to give
        reading_number(kind)("abc")
    assert "give" not in str(unread.value)


def test_a_preset_typed_as_its_start_is_told_each_it_begins() -> None:
    """``--inter-node ib`` got no suggestion (two presets begin so): each is named, at most
    three, before the closest by spelling."""
    from gpuscale.hardware.links import _closest

    assert _closest("ib") == " (did you mean 'ib-ndr400' or 'ib-hdr200'?)"
    assert _closest("nvlnk") == " (did you mean 'nvlink5'?)"
    assert _closest("xyz") == ""
