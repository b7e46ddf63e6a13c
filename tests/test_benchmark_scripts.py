"""The scripts under ``benchmarks/`` name only what the package has.

They run outside the test suite (they are slow), so a name moved by a refactor (e.g.
``step_error`` from ``advice.api`` to ``advice.from_bench``) would break one silently: each
``from gpuscale... import NAME`` of every script must resolve."""

from __future__ import annotations

import ast
import importlib
import json
import random
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest

from gpuscale.advice.calibrate.calibration import calibrate
from gpuscale.advice.calibrate.measured import read_comm, step_error
from gpuscale.bench.results import bench_table, read_results
from gpuscale.interconnect.network import Link, Network

from .builders import benchmark_script, sweep_rows, write_jsonl

SCRIPTS = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py"))


def _missing(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gpuscale")):
            continue
        module = importlib.import_module(node.module)
        for alias in node.names:
            if hasattr(module, alias.name):
                continue
            try:  # a submodule imported by name
                importlib.import_module(f"{node.module}.{alias.name}")
            except ImportError:
                out.append(f"{node.module}.{alias.name}")
    return out


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_name_a_benchmark_imports_exists(script: Path) -> None:
    assert _missing(script) == [], f"{script.name} imports names gpuscale does not have"


# The scripts that calibrate read the calibration record's fields themselves (step_at's
# inputs): a field moved or renamed would crash them only in a long run (part (a) of
# advise_accuracy.py benches first). Each is run here on advise_rows.py's synthetic rows:
# MLP-like models at N = 1 and 2, communication measured, 5% noise.


@pytest.fixture(scope="module")
def scripts() -> dict[str, ModuleType]:
    # advise_accuracy imports advise_unseen by name: registered first
    return {
        name: benchmark_script(name) for name in ("advise_rows", "advise_unseen", "advise_accuracy")
    }


def _rows_table(scripts: dict[str, ModuleType], tmp_path: Path) -> pd.DataFrame:
    path = tmp_path / "bench.jsonl"
    scripts["advise_rows"].write_rows(path, 8)  # four models
    return bench_table(read_results(path)[0])


def _sweep(tmp_path: Path) -> Path:
    """A 2-rank all-reduce sweep at 0.86 GB/s and 250 us (gloo on a CPU host)."""
    header = {"kind": "sweep", "device": "cpu", "ranks": 2, "nodes": 1}
    rows = [
        {"schema": "gpuscale.collectives/2", "sweep_id": "s1", **r}
        for r in (header, *sweep_rows(0.86, 250.0))
    ]
    return write_jsonl(tmp_path / "coll.jsonl", rows)


def test_the_old_leave_one_out_gives_the_advices_residuals(scripts, tmp_path: Path) -> None:
    """advise_rows.py times the interval the way it was before issue 38 (one calibration per
    left-out row, the step read off the record by the script): the same log errors as the
    advice's own leave-one-out, which reads the record inside the package."""
    table = _rows_table(scripts, tmp_path)
    network = Network(intra=Link.from_preset("pcie-phb"))
    old = scripts["advise_rows"].old_residuals(table, network)
    model = str(table["model"].iloc[0])
    new = step_error(table, network, read_comm(calibrate(table, model), network))
    assert len(old) == 4
    assert sorted(old) == pytest.approx(sorted(new.residuals), rel=1e-12)


def test_part_a_predicts_each_models_two_device_step(scripts, tmp_path: Path) -> None:
    """advise_accuracy.py part (a) on rows whose N = 2 step is compute plus half the
    communication: each model's N = 2 step, predicted without it, within 15% and nearer than
    every baseline; its compute term within 5% of the no-sync step measured."""
    table, sweep = _rows_table(scripts, tmp_path), _sweep(tmp_path)
    for model in table["model"].unique():
        got = scripts["advise_accuracy"]._predict(table, str(model), sweep)
        assert got is not None
        error = {
            k: abs(got[f"{k}_ms"] / got["measured_ms"] - 1)
            for k in ("model", "ideal", "no_comm", "preset")
        }
        assert error["model"] < 0.15
        assert error["model"] < min(error["ideal"], error["no_comm"], error["preset"])
        assert got["compute_model_ms"] == pytest.approx(got["compute_measured_ms"], rel=0.05)


def test_part_d_scores_an_unseen_model(scripts, tmp_path: Path) -> None:
    """advise_unseen.py's row of one unseen model (the ladder's rows plus its own N = 1 run):
    the advice's N = 2 step within 10% of the measured one and inside its interval; the
    preset baseline (the calibration's compute on the pcie-phb preset, no measured
    communication) under the measured step, above the no-communication baseline."""
    unseen, rng = scripts["advise_unseen"], random.Random(0)
    models = (*unseen.LADDER_FOR_UNSEEN, "advise_unseen:gru")
    sizes = (1_000_000, 1_500_000, 300_000, 4_000_000, 2_000_000)
    records = [
        scripts["advise_rows"].record(m, p, n, rng)
        for m, p in zip(models, sizes, strict=True)
        for n in (1, 2)
    ]
    table = bench_table(read_results(write_jsonl(tmp_path / "bench.jsonl", records))[0])
    row = unseen._unseen_row(table, "advise_unseen:gru", _sweep(tmp_path))
    assert row is not None
    assert abs(row["error_pct"]) < 10 and row["covered"]
    assert row["no_comm_error_pct"] < row["preset_error_pct"] < 0


def test_the_interval_rule_goes_where_data_says_and_leaves_the_advices_alone(
    tmp_path: Path,
) -> None:
    """advice_intervals.py writes its rule to ``--data``: refitted there on the committed
    development rows it is the rule the package ships, and the package's file is left as it
    is; ``--data`` elsewhere with the held-out run (which reads the advice's own rule) is
    refused before any row is advised."""
    module = benchmark_script("advice_intervals")
    rule, out = tmp_path / "rule.json", tmp_path / "out.json"
    with pytest.raises(SystemExit) as refused:
        module.main(["--data", str(rule), "--out", str(out)])
    assert refused.value.code == 2 and not rule.exists() and not out.exists()
    shipped = module.DATA.read_bytes()
    assert module.main(["--no-heldout", "--data", str(rule), "--out", str(out)]) == 0
    assert module.DATA.read_bytes() == shipped
    refit = json.loads(rule.read_text())
    assert refit["fitted_on"]  # the day it was refitted: today, not the shipped file's day
    assert {k: v for k, v in refit.items() if k != "fitted_on"} == {
        k: v for k, v in json.loads(shipped).items() if k != "fitted_on"
    }


def test_a_timed_command_that_fails_stops_the_speed_benchmarks(tmp_path: Path) -> None:
    """A crash or a refusal is not a fast run: advise_speed.py, ingest.py, import_costs.py
    and plan_accuracy.py's speed part stop, naming the command and its exit status, where
    they would have recorded its seconds."""
    advise = benchmark_script("advise_speed")
    with pytest.raises(SystemExit, match=r"exited 2: .*no_such\.jsonl"):
        advise.timed(f"--bench {tmp_path / 'no_such.jsonl'}", advise.ROOT / "src")
    ingest = benchmark_script("ingest")
    crash = ("python3", "-c", "import sys; sys.exit('boom')")
    with pytest.raises(SystemExit, match=r"failed \(exit 1\): boom"):
        ingest._command(*crash)()
    ingest._command(*crash, ok=(0, 1))()  # grep -c's "no match" is no failure
    imports = benchmark_script("import_costs")
    with pytest.raises(SystemExit, match=r"exited 1: ModuleNotFoundError"):
        imports.timed("import gpuscale_no_such_library")
    plan = benchmark_script("plan_accuracy")
    with pytest.raises(SystemExit, match=r"exited 1: boom"):
        plan.cpu_of(list(crash), plan.ROOT / "src")
