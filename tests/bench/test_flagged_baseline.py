"""A speedup is only as trustworthy as both of its runs: a run at N > 1 read against a
flagged N = 1 run is flagged too, with why, and kept out of every trusted statement (the
CLI's notes, the JSON document, the report's findings, break-even and answer)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from gpuscale.analysis.bench_scaling import bench_scaling, trusted
from gpuscale.analysis.bench_sentences import break_even_sentence
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table
from gpuscale.bench.results_file import append_result
from gpuscale.cli import app
from gpuscale.plausibility import FlagKind, flag_kinds, flag_reasons
from gpuscale.report.bench_section import bench_findings, measured_answer

from ..builders import bench_record
from ..golden import Golden

VIEW = "bench/flagged_baseline"
RUN_1 = "mlp-1m (run 1)"  # a model measured twice, by its label

BUSY = ["machine busy: other processes used 60% of its CPU time during the timed steps"]


def _sweeps(first_busy: bool) -> list[dict]:
    """mlp-1m measured twice: sweep s1, then s2; in s2 the N = 1 run is flagged busy
    (and in s1 too with ``first_busy``); every N = 2 run is clean on its own."""
    rows = []
    for sweep, rate_2, busy in (("s1", 150.0, first_busy), ("s2", 80.0, True)):
        one = bench_record("mlp-1m", 10**6, 1, 100.0, sweep_id=sweep)
        rows += [
            {**one, "flags": BUSY} if busy else one,
            bench_record("mlp-1m", 10**6, 2, rate_2, sweep_id=sweep),
        ]
    return rows


def test_a_run_read_against_a_flagged_one_device_run_is_flagged_with_why() -> None:
    table = bench_table(_sweeps(first_busy=False))
    two = table[table["accelerators"] == 2].set_index("sweep_id")
    assert not two.at["s1", "flagged"]  # its own sweep's N = 1 run is clean
    assert two.at["s2", "flagged"]
    assert flag_kinds(two.at["s2", "flags"]) == (FlagKind.BASELINE.value,)
    assert f"({FlagKind.BUSY})" in two.at["s2", "flags"]  # the baseline's own kind


def test_no_trusted_statement_rests_on_a_flagged_baseline(golden: Golden) -> None:
    scaling = bench_scaling(bench_table(_sweeps(first_busy=True)))
    assert trusted(scaling).empty
    said = [break_even_sentence(scaling, 2), *bench_findings(scaling), measured_answer(scaling)]
    assert "not stated" in said[0]
    findings = " ".join(said[1:-1])
    assert "Best scaling" not in findings and "All 4 runs" in findings
    assert "(2 flagged" in said[-1]
    golden.check(VIEW, "every run flagged: break-even, findings, answer", "\n".join(said))


def test_the_report_leaves_out_the_run_against_the_flagged_baseline(golden: Golden) -> None:
    scaling = bench_scaling(bench_table(_sweeps(first_busy=False)))
    findings = " ".join(bench_findings(scaling))
    # the s2 run (0.8x against a busy N = 1 run) is named as left out, never the best
    assert "mlp-1m (run 2) on 2" in findings.split("Left out")[1].split(".")[0]
    (best,) = [f for f in bench_findings(scaling) if f.startswith(f"{RUN_1} on 2")]
    assert "1.50x" in best  # the clean run's speedup
    golden.check(VIEW, "one run left out: the findings", "\n".join(bench_findings(scaling)))
    assert "0.80" not in measured_answer(scaling)


def test_the_cli_and_its_json_say_why(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    for record in _sweeps(first_busy=True):
        append_result(path, record)
    said = " ".join(CliRunner().invoke(app, ["analyze", "--bench", str(path)]).output.split())
    # each run by its label (a model run twice: "(run 1)", as the table names it)
    result = CliRunner().invoke(app, ["analyze", "--bench", str(path), "-f", "json"])
    runs = pd.DataFrame(json.loads(result.output)["bench"]["runs"])
    two = runs[runs["accelerators"] == 2]
    assert two["flagged"].all()
    assert all(flag_kinds(f) == (FlagKind.BASELINE.value,) for f in two["flags"])
    # the CLI says each run by its label (a model run twice: "(run 1)") with the JSON's reason
    (reason,) = set(flag_reasons(two["flags"].iloc[0]))
    assert f"flagged {RUN_1} on 2: " in said and reason.split(":")[0] in said
    assert said.startswith("break-even on 2") and "not stated" in said


def test_the_ddp_step_measured_faster_than_plain_flags_its_n_above_one_runs_too() -> None:
    # DDP's one-rank step (3.5 ms) against the bare module's 4.0 ms: 1.14x as fast, noise
    one = bench_record("mlp-1m", 10**6, 1, 8 / 0.0035, plain_step_ms=4.0, sweep_id="s")
    two = bench_record("mlp-1m", 10**6, 2, 3000.0, sweep_id="s")
    scaling = bench_scaling(bench_table([one, two])).set_index("accelerators")
    assert flag_kinds(scaling.at[1, "flags"]) == (FlagKind.ONE_RANK_FASTER.value,)
    assert "1.14x" in scaling.at[1, "flags"]  # 4.0 ms / 3.5 ms
    assert flag_kinds(scaling.at[2, "flags"]) == (FlagKind.BASELINE.value,)


def test_an_fsdp_step_measured_faster_than_plain_is_said_of_fsdp() -> None:
    """An FSDP run's one-rank step faster than the bare module's is flagged in FSDP's
    words (it said "DDP's one-rank step ... DDP's own cost"), of the same kind."""
    fsdp = BenchConfig(steps=20, batch=8, strategy="fsdp")
    one = bench_record("mlp-1m", 10**6, 1, 8 / 0.0035, plain_step_ms=4.0, config=fsdp)
    (flags,) = bench_table([one])["flags"]
    assert flags == (
        "FSDP's one-rank step measured 1.14x as fast as the plain step of the same model: "
        "noise larger than FSDP's own cost; run more --steps on a quieter machine"
    )
    assert flag_kinds(flags) == (FlagKind.ONE_RANK_FASTER.value,)
