"""How well does the advice model predict? Measured on this machine and on MLPerf.

Usage::

    python benchmarks/advise_accuracy.py [--models mlp-0.2m,...] [--steps 30] [--repeat 3]

(a) CPU/gloo, 2 processes: ``gpuscale bench`` runs every model on 1 and 2 processes
    (one thread each, so a process is a "device" with its own core) and ``gpuscale
    collectives`` sweeps all-reduce. The step model is calibrated on N = 1 (compute
    breakdown and DDP's own overhead) and the collectives sweep (latency from the small
    messages, bus bandwidth from the large ones), with the documented default overlap
    for the device (0 on CPU), then predicts each model's N = 2 step time, which is
    compared with the measured one. Nothing measured at N = 2 enters the prediction; the
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

import pandas as pd


def _sweeps(models: list[str], steps: int, repeat: int, tmp: Path) -> list[pd.DataFrame]:
    """``repeat`` independent bench sweeps (N = 1 then 2 for every model), as tables."""
    from gpuscale.bench.models import select_models
    from gpuscale.bench.results import bench_table, read_results
    from gpuscale.bench.runner import SweepConfig, run_sweep

    sizes = {s.name: n for s, n in select_models(models)}
    tables = []
    for index in range(repeat):
        results = tmp / f"bench-{index}.jsonl"
        config = SweepConfig(
            models=tuple(models),
            nproc=(1, 2),
            out=results,
            backend="gloo",
            steps=steps,
            warmup=3,
            threads=1,
        )
        run_sweep(config, sizes)
        tables.append(bench_table(read_results(results)[0]))
    return tables


def _link(tmp: Path, gap_ms: float):
    from gpuscale.advise.calibrate import link_from_collectives
    from gpuscale.bench.runner import torchrun_command

    coll = tmp / "coll.jsonl"
    subprocess.run(
        [
            *torchrun_command(2, "gpuscale.bench.collectives"),
            "--out",
            str(coll),
            "--backend",
            "gloo",
            "--ops",
            "all_reduce",
            "--max-bytes",
            str(1 << 27),
            "--gap-ms",
            str(gap_ms),
        ],
        check=True,
        capture_output=True,
    )
    return link_from_collectives(coll)


def _predict(table: pd.DataFrame, model: str, link, overlap: float) -> dict | None:
    """One sweep's N = 2 prediction (from its N = 1 run) beside its N = 2 measurement."""
    from gpuscale.advise.calibrate import compute_from_bench
    from gpuscale.advise.model import predict_step

    measured = table[(table.model == model) & (table.world_size == 2) & (table.status == "ok")]
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


def part_a(models: list[str], steps: int, repeat: int, gap_ms: float) -> float:
    from gpuscale.advise.recommend import default_overlap

    with tempfile.TemporaryDirectory() as tmp:
        link = _link(Path(tmp), gap_ms)
        tables = _sweeps(models, steps, repeat, Path(tmp))
    overlap = default_overlap("cpu")
    print(
        f"(a) link fitted to the all-reduce sweep ({gap_ms:g} ms of compute between calls): "
        f"{link.busbw_gbs:.3g} GB/s bus bandwidth, "
        f"{link.latency_us:.0f} us per ring step; overlap {overlap} (CPU default); "
        f"{repeat} sweeps, each predicted from its own N = 1 run; medians over the sweeps"
    )
    rows = [
        row
        for table in tables
        for model in models
        if (row := _predict(table, model, link, overlap)) is not None
    ]
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
    parser.add_argument("--repeat", type=int, default=3, help="independent bench sweeps")
    parser.add_argument(
        "--gap-ms",
        type=float,
        default=0.0,
        help="compute between the calibration sweep's all-reduces (0: back to back, the "
        "validated protocol; see the collectives command's --gap-ms)",
    )
    args = parser.parse_args()
    part_b()
    mape = part_a(args.models.split(","), args.steps, args.repeat, args.gap_ms)
    print(f"median absolute percentage error: {mape:.1f}%")


if __name__ == "__main__":
    main()
