"""The comma lists of `bench` and `collectives`: an empty item (`1,,2`,
`1,2,`) is refused in one line naming the option, as `1.5` is, never run as if it were
not there; a misspelt collective gets the closest name, as other options do; and
`--gpu` without the saved topology it names is refused rather than ignored."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("torch")

from gpuscale.cli import app

from ..golden import Golden

cli = CliRunner()
BENCH = ["bench", "--backend", "gloo", "--steps", "1", "--warmup", "1"]
COLLECTIVES = ["collectives", "--backend", "gloo", "--max-bytes", "1K", "--iters", "1"]
VIEW = "bench/list_refusals"


def refused(tmp_path: Path, *args: str) -> str:
    """The one line ARGS exit 2 with; nothing written."""
    out = tmp_path / "r.jsonl"
    result = cli.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert not out.exists()
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.mark.parametrize("nproc", ["1,,2", "1,2,", ",1"])
def test_bench_refuses_an_empty_count(tmp_path: Path, nproc: str, golden: Golden) -> None:
    line = refused(tmp_path, *BENCH, "--models", "mlp-0.2m", "--nproc", nproc)
    assert line.startswith(f"error: --nproc {nproc}:")  # the option and its value
    golden.check(VIEW, f"bench --nproc {nproc}", line)


def test_bench_refuses_an_empty_model_name(tmp_path: Path, golden: Golden) -> None:
    line = refused(tmp_path, *BENCH, "--nproc", "1", "--models", "mlp-0.2m,")
    assert line.startswith("error: --models ") and "mlp-0.2m,:" in line
    golden.check(VIEW, "bench --models mlp-0.2m,", line)


@pytest.mark.parametrize("option, value", [("--nproc", "2,"), ("--ops", "all_reduce,")])
def test_collectives_refuses_an_empty_item(
    tmp_path: Path, option: str, value: str, golden: Golden
) -> None:
    line = refused(tmp_path, *COLLECTIVES, option, value)
    assert line.startswith(f"error: {option} {value}: ")
    golden.check(VIEW, f"collectives {option} {value}", line)


def test_a_misspelt_collective_gets_the_closest(tmp_path: Path, golden: Golden) -> None:
    line = refused(tmp_path, *COLLECTIVES, "--ops", "all_reduse")
    assert "'all_reduce'" in line  # the closest
    golden.check(VIEW, "collectives --ops all_reduse", line)


@pytest.mark.parametrize("command", [COLLECTIVES, ["topo"]], ids=["collectives", "topo"])
def test_gpu_without_a_saved_topology_is_refused(tmp_path: Path, command: list[str]) -> None:
    args = [*command, "--gpu", "A100"]
    if command[0] == "collectives":
        line = refused(tmp_path, *args)
    else:
        result = cli.invoke(app, args)
        assert result.exit_code == 2, result.output
        line = result.output.strip()
    assert line.startswith("error: --gpu A100:") and "--topo-file" in line


@pytest.mark.parametrize(
    "command, option, value, twice",
    [
        ([*BENCH, "--models", "mlp-0.2m"], "--nproc", "1,2,2", "2"),
        ([*BENCH, "--models", "mlp-0.2m"], "--nproc", "1,01", "1"),  # 01 is 1
        ([*BENCH, "--nproc", "1"], "--models", "mlp-0.2m,mlp-0.2m", "mlp-0.2m"),
        (COLLECTIVES, "--ops", "all_reduce,broadcast,all_reduce", "all_reduce"),
        (COLLECTIVES, "--ops", "all_reduce,ALL_REDUCE", "all_reduce"),  # one, however spelt
    ],
)
def test_an_item_given_twice_is_refused(
    tmp_path: Path, command: list[str], option: str, value: str, twice: str, golden: Golden
) -> None:
    """An item given twice (`bench --nproc 1,2,2`) is refused in one line naming the
    option and the item, as an empty one is, never run once without a word."""
    line = refused(tmp_path, *command, option, value)
    assert line.startswith(f"error: {option} {value}:") and f" {twice} " in line
    golden.check(VIEW, f"{command[0]} {option} {value}", line)


def test_a_model_in_both_model_options_or_in_two_cases_is_refused() -> None:
    from gpuscale.bench.models import sort_models

    for names in (["mlp-0.2m", "mlp-0.2m"], ["mlp-0.2m", "MLP_0.2M"]):
        with pytest.raises(ValueError, match=r"mlp-0\.2m given"):
            sort_models(names)


def test_a_ladder_model_is_named_whatever_its_case() -> None:
    """`--ops ALL_REDUCE` is all_reduce; a ladder model is read alike (``MLP_0.2M``), a
    model of the user's is spelled as its code is."""
    from gpuscale.bench.models import BY_NAME, ladder_name

    for name in BY_NAME:
        for typed in (name.upper(), name.replace("-", "_"), name.replace("-", "").upper()):
            assert ladder_name(typed) == name
    assert ladder_name("Pkg.Mod:Make") == "Pkg.Mod:Make"
    assert ladder_name("mlp-3m") == "mlp-3m"  # no ladder model: unknown, said later


@pytest.mark.parametrize(
    "typed", ["ALL_REDUCE", "allreduce", "all-reduce", "AllReduce", "All_Reduce"]
)
def test_nccl_and_nccl_tests_spellings_name_a_collective(typed: str) -> None:
    """`--ops ALL_REDUCE` (NCCL's spelling) was unknown with no hint; every spelling of
    each collective (NCCL's, nccl-tests' binary names, with hyphens) is its name."""
    from gpuscale.bench.collectives_config import OPS, CollectivesConfig

    assert CollectivesConfig(ops=(typed,)).ops == ("all_reduce",)
    for op in OPS:
        spellings = (op.upper(), op.replace("_", ""), op.replace("_", "-"))
        assert CollectivesConfig(ops=spellings[:1]).ops == (op,)
        assert CollectivesConfig(ops=spellings[1:2]).ops == (op,)
        assert CollectivesConfig(ops=spellings[2:]).ops == (op,)


def test_a_collective_is_never_read_from_its_beginning() -> None:
    """docs/interconnect.md said a collective is named "by an unambiguous beginning"; `--ops
    broad` is refused, as every choice's abbreviation is (`--backend glo`), naming the
    collective in full."""
    from gpuscale.bench.collectives_config import OPS, CollectivesConfig

    for op in OPS:
        with pytest.raises(ValueError, match=f"give {op} in full"):
            CollectivesConfig(ops=(op[:-2],))


def test_an_upper_case_typo_of_a_collective_gets_the_closest(
    tmp_path: Path, golden: Golden
) -> None:
    line = refused(tmp_path, *COLLECTIVES, "--ops", "ALL_REDUSE")
    assert "'all_reduce'" in line  # the closest
    golden.check(VIEW, "collectives --ops ALL_REDUSE", line)
    line = refused(tmp_path, *COLLECTIVES, "--ops", "all")  # three begin so: each named
    assert all(op in line for op in ("all_gather", "all_reduce", "all_to_all"))
    golden.check(VIEW, "collectives --ops all", line)
