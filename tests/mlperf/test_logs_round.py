"""A folder whose name says no round is refused with the round its logs point to, and why.

``gpuscale scores "/tmp/my results/mine"`` said only "give it, e.g. --round v5.0", a
fixed example, although the logs' dates and benchmarks bound the round
(``gpuscale.mlperf.round_hints``): the refusal now names the round they point to with its
evidence (a record, :class:`LogsRound`, said in one place), and where they point to none
says why and keeps the example. The round read is still the user's to give.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.mlperf import bundled_rounds, load_round
from gpuscale.mlperf.ingest import read_round
from gpuscale.mlperf.round_hints import LogsRound, logs_round, logs_round_said
from gpuscale.sources import RoundNotSaidError
from gpuscale.tables.refusals import as_options

from .logbuilder import RoundBuilder

runner = CliRunner()


def _ms(year: int, month: int, day: int) -> float:
    return dt.datetime(year, month, day, tzinfo=dt.timezone.utc).timestamp() * 1000


def _users_folder(tmp_path: Path, benches: dict[str, float], ruleset: str = "v4.1") -> Path:
    """A user's folder (``my results/mine``, no round in its name) of one system's results,
    ``benches``: benchmark -> its runs' first start (ms), 10 runs each."""
    rb = RoundBuilder(name=f"training_results_{ruleset}")
    rb.system("Acme", "box")
    for bench, start_ms in benches.items():
        rb.runs("Acme", "box", bench, [30 + k for k in range(10)], start_ms=start_ms)
    (tmp_path / "my results").mkdir()
    return rb.write_dir(tmp_path).rename(tmp_path / "my results" / "mine")


@pytest.mark.parametrize("round_name", bundled_rounds())
def test_each_bundled_rounds_logs_point_to_that_round(round_name: str) -> None:
    """The rule, checked on every round shipped: the first round published after the
    latest result's start, of those whose rules have its benchmarks, is the round itself
    (though some results ran a round or more earlier: v4.1's earliest on 2023-04-28)."""
    runs = load_round(round_name).runs.to_dict("records")
    found = logs_round(runs)
    assert found.round == round_name and found.fits[0] == round_name
    assert found.results > 100 and found.logs == len(runs)


def test_a_users_folder_is_refused_with_the_round_its_logs_say(tmp_path: Path, golden) -> None:
    path = _users_folder(tmp_path, {"llama2_70b_lora": _ms(2024, 9, 2), "gnn": _ms(2024, 10, 1)})
    with pytest.raises(RoundNotSaidError) as refused:
        read_round(path)
    assert refused.value.evidence == LogsRound(
        logs=20,
        results=2,
        first_day="2024-09-02",
        last_day="2024-10-01",
        benchmarks=("gnn", "llama2_70b_lora"),
        fits=("v4.1",),  # v4.0 has both, but was published (2024-06-12) before they ran
        round="v4.1",
    )
    assert str(refused.value).endswith("round_name='v4.1'")  # Python's keyword
    result = runner.invoke(app, ["scores", str(path)])
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert said.endswith("give it: --round v4.1")
    golden.check("mlperf/logs_round", "a user's folder", said, paths={str(tmp_path): "<tmp>"})
    scored = runner.invoke(app, ["scores", str(path), "--round", "v4.1", "-f", "csv"])
    assert scored.exit_code == 0 and "mine (v4.1)" in scored.stdout  # given, it is read


def test_logs_later_rounds_fit_too_point_to_the_first_published_after_them(
    tmp_path: Path,
) -> None:
    path = _users_folder(tmp_path, {"bert": _ms(2024, 10, 5)})
    with pytest.raises(RoundNotSaidError) as refused:
        read_round(path)
    found = refused.value.evidence
    assert found.fits[:2] == ("v4.1", "v5.0") and found.round == "v4.1"


def test_logs_no_round_fits_are_said_to_fit_none(tmp_path: Path, golden) -> None:
    """BERT run in December 2025: v5.0 (published 2025-06-04) is the last round with BERT."""
    path = _users_folder(tmp_path, {"bert": _ms(2025, 12, 1)}, ruleset="v5.0")
    with pytest.raises(RoundNotSaidError) as refused:
        read_round(path)
    found = refused.value.evidence
    assert found.round is None and found.fits == () and found.last_day == "2025-12-01"
    said = as_options(str(refused.value.text), {"round_name": "--round"})
    assert said.endswith(f"give it, e.g. --round {refused.value.example}")
    golden.check("mlperf/logs_round", "no round fits", said, paths={str(tmp_path): "<tmp>"})


def _said(found: LogsRound) -> str:
    """What the command line says of ``found`` (the example round: v5.0)."""
    return as_options(logs_round_said(found, "v5.0"), {"round_name": "--round"})


def _run(bench: str | None, start_ms: float | None, system: str = "box") -> dict[str, object]:
    return {
        "org": "Acme",
        "system_id": system,
        "benchmark": bench or "x",
        "log_benchmark": bench,
        "run_start_ms": start_ms,
    }


def test_undated_logs_point_to_a_round_only_where_one_rounds_rules_fit(golden) -> None:
    undated = logs_round([_run("gnn", None)])  # GNN: v4.0 and v4.1 alone
    assert (undated.results, undated.fits, undated.round) == (0, ("v4.0", "v4.1"), None)
    golden.check("mlperf/logs_round", "undated, two rounds fit", _said(undated))
    unset = logs_round([_run("gnn", 1_000_000)])  # 1970-01-01: a clock never set
    assert (unset.results, unset.fits, unset.round) == (0, ("v4.0", "v4.1"), None)
    mixed = logs_round([_run("gnmt", None), _run("llama2_70b_lora", None, "b")])
    assert (mixed.fits, mixed.round) == ((), None)  # no round has both
    golden.check("mlperf/logs_round", "undated, no round fits", _said(mixed))


def test_logs_that_say_nothing_keep_the_example(golden) -> None:
    """No run_start and a benchmark no round has (``my_model``): nothing bounds the round."""
    found = logs_round([_run("my_model", None)])
    assert found == LogsRound(1, 0, None, None, (), (), None)
    golden.check("mlperf/logs_round", "logs say nothing", _said(found))
    empty = logs_round([])
    assert (empty.logs, empty.round) == (0, None)
    golden.check("mlperf/logs_round", "no result log", _said(empty))
