"""How long ``gpuscale advise --bench`` takes as the results file grows (issue 38).

Usage::

    python benchmarks/advise_rows.py [--rows 40,200,800,2000] [--models-per-row 0.5]

Writes a synthetic results file of ROWS rows (models of an MLP-like family at N = 1 and 2
CPU processes, communication and overlap measured, realistic timings with 5% noise),
then times, in this process, ``gpuscale.advise(bench=FILE)`` (reading, calibration, the
leave-one-out interval, the recommendation) against two baselines run on the same table:
one calibration of the model advised on (what the advice cannot do without), and the
leave-one-out interval done the way it was before issue 38 (one calibration per left-out
model and N, every model left out). Prints seconds and ratios; the target is advise on
2,000 rows in under 10 s.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpuscale.advice.api import advise_by_keywords as advise
from gpuscale.advice.calibrate.calibration import calibrate
from gpuscale.advice.calibrate.measured import from_residuals, read_comm, step_error
from gpuscale.advice.calibrate.rows import default_model
from gpuscale.advice.explain.phrasebook import said
from gpuscale.advice.model.step import step_at
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import SCHEMA, bench_table, read_results
from gpuscale.bench.row_keys import run_key
from gpuscale.interconnect.network import Link, Network


def record(model: str, params: int, n: int, rng: random.Random) -> dict:
    """One ``ok`` row of ``model`` at ``n`` CPU processes, timings from its size."""
    cfg = BenchConfig(steps=20, batch=8)
    noise = rng.uniform(0.95, 1.05)
    forward = (0.2 + params / 2e6) * noise
    backward, optimizer = 2 * forward, 0.1 + params / 1e7
    comm = (0.3 + params * 4 / 1e9 * 1e3) * noise if n > 1 else None
    nosync = forward + backward + optimizer
    step = nosync + (0.5 * comm if comm else 0.05)
    key = run_key(cfg, model=model, accelerators=n, nnodes=1, device="cpu", threads=1)
    config = {
        **json.loads(cfg.to_json()),
        **{"model": model, "family": "mlp", "params": params, "accelerators": n},
        **{"nnodes": 1, "backend": "gloo", "device": "cpu", "batch": 8},
        **{"batch_per_device": 8, "global_batch": 8 * n, "threads": 1},
    }
    timing = {
        "step_ms_mean": step,
        "step_ms_p50": step,
        "step_ms_p95": step,
        "nosync_step_ms_mean": nosync,
        "samples_per_s": 8 * n / step * 1e3,
        "forward_ms": forward,
        "backward_ms": backward,
        "optimizer_ms": optimizer,
        "sync_overhead_ms": step - nosync,
        "comm_ms": comm,
    }
    return {
        "schema": SCHEMA,
        "key": key,
        "sweep_id": "s1",
        "status": "ok",
        "config": config,
        "environment": {"hostname": "bench", "device_name": "cpu"},
        "flags": [],
        "timing": timing,
        "flops": {"per_sample": 6.0 * params},
        "per_rank": {"step_ms": [[step] * 4] * n, "nosync_step_ms": [[nosync] * 4] * n},
        "grad_bytes_per_step": 4 * params,
        "host": {"other_load_share": 0.0, "steal_share": 0.0},
    }


def write_rows(path: Path, rows: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    models = max(2, rows // 2)
    with path.open("w") as out:
        for k in range(models):
            params = int(1e5 * math.exp(rng.uniform(0, math.log(500))))
            for n in (1, 2):
                out.write(json.dumps(record(f"m{k:05d}-{params}", params, n, rng)) + "\n")


def old_residuals(table, network) -> list[float]:
    """The log errors (measured over predicted) the interval was computed from before
    issue 38: every model with N > 1 rows left out in turn, one calibration per left-out
    row."""
    ok = table[(table["status"] == "ok") & ~table["flagged"].fillna(False).astype(bool)]
    multi = ok[ok["accelerators"] > 1].dropna(subset=["step_ms_mean"])
    residuals = []
    for model, rows in multi.groupby("model"):
        rest = ok[~((ok["model"] == model) & (ok["accelerators"] > 1))]
        for r in rows.itertuples():
            try:
                other = read_comm(calibrate(rest, str(model)), network)
                scaled = other.machine.network
            except ValueError:
                continue
            run = other.run
            step = step_at(
                other.model.spec,
                other.model.compute,
                scaled,
                int(r.accelerators),
                batch=run.batch,
                overlap=run.overlap if run.overlap is not None else 0.0,
                bucket_mb=run.bucket_mb,
                strategy=run.strategy,
            )
            residuals.append(math.log(float(r.step_ms_mean) / step.step_ms))
    return residuals


def old_leave_one_out(table, network) -> float:
    """The seconds the interval took as it was computed before issue 38."""
    started = time.perf_counter()
    from_residuals(old_residuals(table, network), 2)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", default="40,200,800,2000")
    parser.add_argument("--old-up-to", type=int, default=200, help="largest size timed the old way")
    args = parser.parse_args(argv)
    network = Network(intra=Link.from_preset("pcie-phb"))
    print(f"{'rows':>6} {'advise s':>9} {'1 calib s':>10} {'ratio':>7} {'old LOO s':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        warm = Path(tmp) / "warm.jsonl"  # imports and first-call costs, not timed
        write_rows(warm, 8)
        advise(bench=warm, interconnect="pcie-phb")
        for rows in (int(r) for r in args.rows.split(",")):
            path = Path(tmp) / f"rows-{rows}.jsonl"
            write_rows(path, rows)
            started = time.perf_counter()
            result = advise(bench=path, interconnect="pcie-phb")
            seconds = time.perf_counter() - started
            table = bench_table(read_results(path)[0])
            started = time.perf_counter()
            cal = read_comm(calibrate(table, default_model(table)), network)
            one = time.perf_counter() - started
            old = old_leave_one_out(table, network) if rows <= args.old_up_to else math.nan
            step_error(table, network, cal)  # warm: the interval the advice used
            print(f"{rows:>6} {seconds:>9.2f} {one:>10.3f} {seconds / one:>7.0f} {old:>10.2f}")
            print(f"       {said(result.calibration.model.error.source)}")
        command = [sys.executable, "-m", "gpuscale.cli", "advise", "--bench", str(path)]
        started = time.perf_counter()
        done = subprocess.run([*command, "--interconnect", "pcie-phb"], capture_output=True)
        print(
            f"the command line, as a user types it, on {rows:,} rows: "
            f"{time.perf_counter() - started:.2f} s (exit {done.returncode}; target < 10 s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
