"""How well does the advice model predict? Measured on this machine and on MLPerf.

Usage::

    python benchmarks/advise_accuracy.py [--models mlp-0.2m,...] [--steps 30] [--repeat 5]

(a) CPU/gloo, 2 processes: ``gpuscale bench`` runs every model on 1 and 2 processes
    (one thread each, so a process is a "device" with its own core) and ``gpuscale
    collectives --load`` sweeps all-reduce while a compute thread runs on every rank
    (on a CPU device DDP's all-reduce shares the core with backward; an idle sweep
    underestimates it 1.5-2x). Sweeps and bench runs alternate, ``--repeat`` times. The
    step model is calibrated on N = 1 (compute breakdown and DDP's own overhead) and
    the median of the sweeps' link fits (latency from the small messages, bus bandwidth
    from the large ones), with the documented default overlap for the device (0 on
    CPU), then predicts each model's N = 2 step time, which is compared with the
    measured one. Nothing measured at N = 2 by the bench enters the prediction; the
    N = 2 no-sync compute and exposed communication are printed beside it to show which
    term the error comes from. (b) MLPerf: per workload and accelerator family of
    the bundled rounds, leave-one-out predictions of time to train from Amdahl and the
    Universal Scalability Law against ideal linear scaling as the baseline.

The last line reads ``median absolute percentage error: X%`` for part (a).
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from gpuscale.advice.model import Link


def _sweep(models: list[str], steps: int, results: Path) -> pd.DataFrame:
    """One bench sweep (N = 1 then 2 for every model), as a table."""
    from gpuscale.bench.config import BenchConfig
    from gpuscale.bench.models import select_models
    from gpuscale.bench.results import bench_table, read_results
    from gpuscale.bench.runner import SweepConfig, run_sweep

    config = SweepConfig(
        models=tuple(models),
        nproc=(1, 2),
        out=results,
        bench=BenchConfig(backend="gloo", steps=steps, warmup=3, threads=1),
    )
    run_sweep(config, dict(select_models(models)))
    return bench_table(read_results(results)[0])


def _link(coll: Path, gap_ms: float, load: bool):
    """A link fitted to one all-reduce sweep (8 B to 128 MB) on 2 gloo processes."""
    from gpuscale.advice.calibrate import link_from_collectives
    from gpuscale.bench.runner import torchrun_command

    subprocess.run(
        [
            *torchrun_command(2, "gpuscale.bench.collectives"),
            *("--out", str(coll), "--backend", "gloo", "--ops", "all_reduce"),
            *("--max-bytes", str(1 << 27), "--gap-ms", str(gap_ms)),
            *(["--load"] if load else []),
        ],
        check=True,
        capture_output=True,
    )
    return link_from_collectives(coll)


def _predict(table: pd.DataFrame, model: str, link, overlap: float) -> dict | None:
    """One sweep's N = 2 prediction (from its N = 1 run) beside its N = 2 measurement."""
    from gpuscale.advice.calibrate import compute_from_bench
    from gpuscale.advice.model import predict_step

    measured = table[(table.model == model) & (table.accelerators == 2) & (table.status == "ok")]
    if measured.empty:
        return None
    compute, params, _ = compute_from_bench(table, model)
    grad_bytes = float(measured["grad_bytes_per_step"].iloc[0])
    predicted = predict_step(compute, grad_bytes, 2, link, overlap=overlap)
    return {
        "model": model,
        "params": int(params),
        "n1_step_ms": compute.total_ms,
        "n1_ddp_ms": compute.ddp_overhead_ms,
        "n2_wait_pred_ms": predicted.straggler_s * 1e3,
        "n2_comm_pred_ms": predicted.exposed_s * 1e3,
        "n2_nosync_ms": float(measured["nosync_step_ms_mean"].iloc[0]),
        "n2_exposed_ms": float(measured["exposed_comm_ms"].iloc[0]),
        "n2_measured_ms": float(measured["step_ms_mean"].iloc[0]),
        "n2_predicted_ms": predicted.step_s * 1e3,
    }


def part_a(models: list[str], steps: int, repeat: int, gap_ms: float, load: bool) -> float:
    from gpuscale.advice.recommend import default_overlap

    overlap = default_overlap("cpu")
    links, tables = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(repeat):
            # Sweeps and bench runs alternate: this machine's speed drifts over minutes.
            links.append(_link(Path(tmp) / f"coll-{index}.jsonl", gap_ms, load))
            tables.append(_sweep(models, steps, Path(tmp) / f"bench-{index}.jsonl"))
    # One sweep is noisy (the bus bandwidth of a loaded sweep varies 2x between runs):
    # the link is the median of the sweeps' fits, the compute each repeat's own N = 1 run.
    link = Link(
        busbw_gbs=float(np.median([x.busbw_gbs for x in links])),
        latency_us=float(np.median([x.latency_us for x in links])),
        name="median of the sweeps",
    )
    rows = [row for t in tables for m in models if (row := _predict(t, m, link, overlap))]
    print(
        f"(a) {repeat} repeats, each: an all-reduce sweep on 2 gloo processes "
        f"({'a compute thread busy on every rank' if load else 'no other load'}; "
        f"{gap_ms:g} ms of compute between calls), then a bench sweep whose N = 1 runs "
        "calibrate the compute. Link fitted to each sweep (bus bandwidth, latency per "
        f"ring step): {'; '.join(f'{x.busbw_gbs:.3g} GB/s, {x.latency_us:.0f} us' for x in links)}"
        f"; used: their medians, {link.busbw_gbs:.3g} GB/s and {link.latency_us:.0f} us. "
        f"Overlap {overlap} (CPU default). Medians over the repeats:"
    )
    frame = pd.DataFrame(rows).groupby("model", sort=False).median()
    frame["error_pct"] = 100 * (frame["n2_predicted_ms"] / frame["n2_measured_ms"] - 1)
    print(frame.to_string(float_format=lambda v: f"{v:.3g}"))
    return float(frame["error_pct"].abs().median())


def part_b() -> None:
    from gpuscale import load_round
    from gpuscale.analysis.equilibrium import fastest_per_count
    from gpuscale.analysis.metrics import scaling_table
    from gpuscale.analysis.scaling_laws import leave_one_out

    tables = load_round()
    rows = []
    for round_name in sorted(tables.scores["round"].unique()):
        scores = tables.scores[tables.scores["round"] == round_name]
        for workload in sorted(scores["workload"].unique()):
            table = scaling_table(scores, workload)
            for family, group in table.groupby("accelerator_family"):
                frontier = fastest_per_count(group)
                if len(frontier) < 4:
                    continue
                errors = leave_one_out(frontier)
                rows.append(
                    {
                        "round": round_name,
                        "workload": workload,
                        "family": family,
                        "configs": len(frontier),
                        **errors[["ideal", "amdahl", "usl"]].median().to_dict(),
                    }
                )
    frame = pd.DataFrame(rows)
    print(
        "(b) MLPerf leave-one-out, median absolute % error of time to train "
        "(fastest system per accelerator count, per family):"
    )
    print(frame.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    print(
        "    over all groups: "
        + ", ".join(f"{c} {frame[c].median():.1f}%" for c in ("ideal", "amdahl", "usl"))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="mlp-0.2m,mlp-1m,tf-1.5m,mlp-4m,mlp-17m")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=5, help="sweep + bench repeats")
    parser.add_argument(
        "--gap-ms",
        type=float,
        default=0.0,
        help="compute between the calibration sweep's all-reduces (0: back to back, the "
        "validated protocol; see the collectives command's --gap-ms)",
    )
    parser.add_argument(
        "--no-load",
        dest="load",
        action="store_false",
        help="sweep all-reduce on idle ranks (by default a compute thread runs beside it, "
        "as backward does beside DDP's all-reduce; see the collectives command's --load)",
    )
    args = parser.parse_args()
    part_b()
    mape = part_a(args.models.split(","), args.steps, args.repeat, args.gap_ms, args.load)
    print(f"median absolute percentage error: {mape:.1f}%")


if __name__ == "__main__":
    main()
