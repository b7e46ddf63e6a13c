"""How well does the advice predict? Measured on this machine and on MLPerf, beside baselines.

Usage::

    python benchmarks/advise_accuracy.py [--steps 20] [--repeat 2] [--skip-a] [--only-unseen]

(a) CPU/gloo, 2 processes: ``gpuscale bench`` runs every model on 1 and 2 processes and
    ``gpuscale collectives`` sweeps all-reduce (alternating, ``--repeat`` times: this
    machine's speed drifts). For each model, everything measured **except its own N = 2
    run** calibrates the model: its N = 1 run (compute, DDP's own overhead, jitter), the
    sweep (curve), and the other models' N = 2 runs (overlap, communication inside DDP
    over the curve, no-sync slowdown). Its N = 2 step is then predicted and compared with
    the measurement, per term (compute + wait: the no-sync step; exposed communication;
    the step), against three baselines: **ideal** (the N = 1 step), **no communication**
    (N = 1 compute plus DDP's own overhead) and **preset only** (the same step model on
    the ``pcie-phb`` preset with the CPU's default overlap, no measured curve or scale).
    The protocol (which terms, which medians) was chosen on the models of ``PROTOCOL``;
    ``HELD_OUT`` were never used to choose it and are scored separately.
(b) Convergence: leave-one-batch-size-out error of E(B) = E_min (1 + B / B_noise) on the
    reference convergence points of every workload and ruleset mlperf-logging ships,
    against a constant (samples independent of the batch) and log-log interpolation
    between the neighbouring batches; then the error of ``expected_samples_to_converge``
    against the measured samples of every system in each bundled round.
(c) MLPerf time to train: per round, workload and accelerator family (fastest system per
    accelerator count, four counts or more), each larger system predicted from all
    smaller ones: **throughput x convergence** (minutes per sample scaled ideally from
    the next smaller system, or Amdahl or USL fitted over the smaller ones, times the
    samples E(B) predicts at the larger system's global batch, scaled by the smaller
    systems' measured / expected samples) against the same three on the times alone.

(d) Unseen kinds (issue 26), fixed before any result was looked at: a GRU, a
    depthwise-separable CNN, an embedding-heavy model and a gated mixture of experts
    (``UNSEEN`` in ``advise_unseen.py``), and (issue 35, also fixed before any result) two
    small overhead-bound models at per-device batch 2, the published study's medium MLP
    and LeNet-5 (``SMALL_UNSEEN``), benched beside four ladder models at N = 1 and 2, two
    runs (``--bench-repeat 3``: each configuration the median of three). Each is
    advised under the README protocol (ladder rows plus its own N = 1 row)
    and scored per model: N = 2 step error, whether the recommended count is a measured
    best one (time to train within 5% of the fastest), whether the 80% interval covered
    the measurement; baselines ideal, no communication, preset alpha-beta. The three
    goals (median |error| <= 10% and below every baseline; the count right wherever the
    measured difference exceeds 10%; coverage 70-90%) are printed MET or NOT met.
    ``--only-unseen`` runs only this part, ``--unseen-data DIR`` (repeatable) keeps or
    reuses a run's files.

The last line reads ``median absolute percentage error: X%`` for part (a)'s model. Each
part run writes its summary into ``benchmarks/results/advise_accuracy.json`` (``--out``),
under its letter, with the command; the parts not run keep what an earlier run wrote
there (docs/advice-accuracy.md quotes the file).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from advise_unseen import bench_models, part_d, sweep_all_reduce

RESULTS = Path(__file__).resolve().parent / "results" / "advise_accuracy.json"
PROTOCOL = ("mlp-0.2m", "mlp-1m", "tf-1.5m", "mlp-4m", "mlp-17m")
HELD_OUT = ("cnn-0.3m", "cnn-1.2m", "tf-7m")


def _predict(table: pd.DataFrame, model: str, sweep: Path) -> dict | None:
    """The model's N = 2 step predicted without its own N = 2 run, and the baselines."""
    from gpuscale.advice.calibrate.calibration import calibrate
    from gpuscale.advice.calibrate.measured import measured_network, read_comm
    from gpuscale.advice.model.step import step_at
    from gpuscale.interconnect.network import Link, Network
    from gpuscale.interconnect.records import read_collectives

    ok = table[(table["status"] == "ok") & ~table["flagged"].astype(bool)]
    own = ok[ok["model"] == model].set_index("accelerators")
    if not {1, 2} <= set(own.index):
        return None
    without = ok[~((ok["model"] == model) & (ok["accelerators"] == 2))]
    base = Network(intra=Link.from_preset("pcie-phb"))
    network = measured_network(read_collectives(sweep), base)
    cal = read_comm(calibrate(without, model), network)
    scaled = cal.machine.network
    model_of, run = cal.model, cal.run
    step = step_at(
        model_of.spec,
        model_of.compute,
        scaled,
        2,
        batch=run.batch,
        overlap=run.overlap if run.overlap is not None else 0.0,
    )
    preset = step_at(
        model_of.spec,
        model_of.compute,
        base,
        2,
        batch=run.batch,
        overlap=0.0,  # CPU default
    )
    one, two = own.loc[1], own.loc[2]
    return {
        "model": model,
        "measured_ms": two["step_ms_mean"],
        "model_ms": step.step_ms,
        "ideal_ms": one["step_ms_mean"],
        "no_comm_ms": one["nosync_step_ms_mean"] + one["ddp_overhead_ms"],
        "preset_ms": preset.step_ms,
        "compute_measured_ms": two["nosync_step_ms_mean"],
        "compute_model_ms": step.compute_ms + step.wait_ms,
        "exposed_measured_ms": two["exposed_comm_ms"],
        "exposed_model_ms": step.exposed_ms,
    }


def _ape(predicted: pd.Series, measured: pd.Series) -> pd.Series:
    return 100 * (predicted / measured - 1).abs()


def part_a(steps: int, repeat: int) -> dict:
    rows = []
    models = PROTOCOL + HELD_OUT
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(repeat):
            sweep = sweep_all_reduce(Path(tmp) / f"coll-{index}.jsonl")
            table = bench_models(models, steps, Path(tmp) / f"bench-{index}.jsonl")
            rows += [r | {"repeat": index} for m in models if (r := _predict(table, m, sweep))]
    frame = pd.DataFrame(rows)
    for name in ("model", "ideal", "no_comm", "preset"):
        frame[f"{name}_ape"] = _ape(frame[f"{name}_ms"], frame["measured_ms"])
    frame["compute_ape"] = _ape(frame["compute_model_ms"], frame["compute_measured_ms"])
    frame["exposed_err_ms"] = frame["exposed_model_ms"] - frame["exposed_measured_ms"]
    frame["held_out"] = frame["model"].isin(HELD_OUT)
    print(
        f"(a) CPU/gloo, 2 processes, {repeat} repeat(s) of an all-reduce sweep then a bench "
        f"sweep ({steps} steps). Each model's N = 2 step predicted without its own N = 2 run. "
        f"Protocol chosen on {', '.join(PROTOCOL)}; held out: {', '.join(HELD_OUT)}."
    )
    shown = frame.groupby("model", sort=False).median(numeric_only=True)
    print(shown.drop(columns=["repeat", "held_out"]).to_string(float_format=lambda v: f"{v:.3g}"))
    for label, part in (
        ("protocol", frame[~frame["held_out"]]),
        ("held out", frame[frame["held_out"]]),
    ):
        print(
            f"    MAPE of the step, {label} models: "
            + ", ".join(
                f"{name} {part[f'{name}_ape'].median():.1f}%"
                for name in ("model", "ideal", "no_comm", "preset")
            )
            + f"; compute term {part['compute_ape'].median():.1f}%, exposed communication "
            f"off by {part['exposed_err_ms'].abs().median():.3g} ms (median)"
        )
    best = min(frame[f"{b}_ape"].median() for b in ("ideal", "no_comm", "preset"))
    mape = float(frame["model_ape"].median())
    verdict = "beats" if mape < best else "does NOT beat"
    print(f"    the model {verdict} the best baseline ({best:.1f}%)")
    names = ("model", "ideal", "no_comm", "preset")
    return {
        "steps": steps,
        "repeats": repeat,
        "median_abs_step_error_pct": mape,
        "by_models": {
            label: {name: float(part[f"{name}_ape"].median()) for name in names}
            for label, part in (
                ("protocol", frame[~frame["held_out"]]),
                ("held out", frame[frame["held_out"]]),
            )
        },
        "by_model_pct": {m: float(v) for m, v in shown["model_ape"].items()},
        "no_unflagged_pair": [m for m in models if m not in shown.index],
    }


def _neighbour(points: list[tuple[float, float]], b: float) -> float:
    """Log-log interpolation (or extrapolation) from the two nearest batches."""
    near = sorted(points, key=lambda p: abs(math.log(p[0] / b)))[:2]
    (b1, e1), (b2, e2) = sorted(near)
    slope = math.log(e2 / e1) / math.log(b2 / b1)
    return e1 * (b / b1) ** slope


def part_b() -> dict:
    import mlperf_logging

    from gpuscale import load_round
    from gpuscale.analysis.critical_batch import fit
    from gpuscale.analysis.decompose import expected_samples
    from gpuscale.analysis.metrics import plausible_samples
    from gpuscale.mlperf.rcp import rcp_points

    root = Path(mlperf_logging.__file__).parent / "rcp_checker"
    rows = []
    for path in sorted(root.glob("training_*/rcps_*.json")):
        ruleset = path.parent.name.removeprefix("training_")
        benchmark = path.stem.removeprefix("rcps_")
        points = list(rcp_points(ruleset, benchmark))
        if len(points) < 3:
            continue
        errors = {"E(B)": [], "constant": [], "neighbours": []}
        for i, (b, e) in enumerate(points):
            rest = points[:i] + points[i + 1 :]
            model = fit([p[0] for p in rest], [p[1] for p in rest])
            if model is None:
                continue
            errors["E(B)"].append(abs(model.samples(b) / e - 1))
            errors["constant"].append(abs(np.median([p[1] for p in rest]) / e - 1))
            errors["neighbours"].append(abs(_neighbour(rest, b) / e - 1))
        rows.append(
            {"ruleset": ruleset, "benchmark": benchmark, "points": len(points)}
            | {k: 100 * float(np.median(v)) for k, v in errors.items()}
        )
    frame = pd.DataFrame(rows)
    print("(b) Leave-one-batch-size-out on the RCPs, median absolute % error of the samples:")
    print(frame.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    print(
        "    over all: "
        + ", ".join(f"{c} {frame[c].median():.1f}%" for c in ("E(B)", "constant", "neighbours"))
    )
    scores = load_round().scores
    scores = scores.assign(samples_to_converge=plausible_samples(scores))  # flagged: NaN
    rows = []
    for (round_name, benchmark), group in scores.groupby(["round", "benchmark"]):
        group = group.dropna(subset=["samples_to_converge", "global_batch_size"])
        expected = [expected_samples(round_name, benchmark, b) for b in group["global_batch_size"]]
        ratio = group["samples_to_converge"].to_numpy(float) / np.asarray(expected)
        ratio = ratio[np.isfinite(ratio)]
        if len(ratio):
            rows.append(
                {
                    "round": round_name,
                    "benchmark": benchmark,
                    "systems": len(ratio),
                    "median_measured_over_expected": float(np.median(ratio)),
                    "median_abs_error_pct": 100 * float(np.median(np.abs(ratio - 1))),
                }
            )
    expected = pd.DataFrame(rows)
    print("    expected_samples_to_converge against the measured samples, bundled rounds:")
    print(expected.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    return {
        "rcp_sets": len(frame),
        "leave_one_out_median_error_pct": {
            c: float(frame[c].median()) for c in ("E(B)", "constant", "neighbours")
        },
        "expected_samples": expected.to_dict("records"),
    }


def _forward(frontier: pd.DataFrame, round_name: str, benchmark: str) -> list[dict]:
    from gpuscale.analysis.decompose import expected_samples
    from gpuscale.analysis.metrics import plausible_samples
    from gpuscale.analysis.scaling_laws import fit_law

    n = frontier["accelerators"].to_numpy(float)
    t = frontier["time_to_train_min"].to_numpy(float)
    s = plausible_samples(frontier).to_numpy(float)  # a flagged count predicts nothing
    b = frontier["global_batch_size"].to_numpy(float)
    e = np.array([expected_samples(round_name, benchmark, x) for x in b])
    rows = []
    for i in range(3, len(n)):
        small = slice(0, i)
        row = {"ideal": t[i - 1] * n[i - 1] / n[i]}
        for law in ("amdahl", "usl"):
            try:
                row[law] = float(fit_law(law, n[small], t[small], n[0])([n[i]])[0])
            except (RuntimeError, ValueError):
                row[law] = math.nan
        # minutes per sample over the smaller systems, times the samples E(B) predicts at
        # the larger system's batch (scaled by the smaller ones' measured / expected)
        per_sample = t[small] / s[small]
        samples = e[i] * np.nanmedian(s[small] / e[small])
        usable = np.all(np.isfinite(per_sample)) and np.isfinite(samples)
        row["ideal_x_convergence"] = (
            per_sample[-1] * n[i - 1] / n[i] * samples if usable else math.nan
        )
        for law in ("amdahl", "usl"):
            try:
                tau = float(fit_law(law, n[small], per_sample, n[0])([n[i]])[0])
                row[f"{law}_x_convergence"] = tau * samples if usable else math.nan
            except (RuntimeError, ValueError):
                row[f"{law}_x_convergence"] = math.nan
        rows.append({k: 100 * abs(v / t[i] - 1) for k, v in row.items()})
    return rows


def part_c() -> dict:
    from gpuscale import load_round
    from gpuscale.analysis.equilibrium import fastest_per_count
    from gpuscale.analysis.metrics import scaling_table

    scores = load_round().scores
    rows = []
    for round_name in sorted(scores["round"].unique()):
        in_round = scores[scores["round"] == round_name]
        for workload in sorted(in_round["workload"].unique()):
            table = scaling_table(in_round, workload, division="all")  # as published: both
            for family, group in table.groupby("accelerator_family"):
                frontier = fastest_per_count(group)
                if len(frontier) < 4:
                    continue
                benchmark = str(frontier["benchmark"].iloc[0])
                for r in _forward(frontier, round_name, benchmark):
                    rows.append({"round": round_name, "workload": workload, "family": family} | r)
    frame = pd.DataFrame(rows)
    laws = [
        "ideal_x_convergence",
        "amdahl_x_convergence",
        "usl_x_convergence",
        "ideal",
        "amdahl",
        "usl",
    ]
    summary = frame.groupby(["round", "workload", "family"])[laws].median().reset_index()
    print("(c) MLPerf, larger systems predicted from smaller ones, median absolute % error:")
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    print(
        f"    over all {len(frame)} predictions: "
        + ", ".join(f"{c} {frame[c].median():.1f}%" for c in laws)
    )
    return {
        "predictions": len(frame),
        "median_abs_error_pct": {c: float(frame[c].median()) for c in laws},
    }


def write_results(parts: dict[str, dict], out: Path) -> None:
    """``parts`` (by letter) over what ``out`` held, each with the command that made it."""
    held = json.loads(out.read_text()) if out.exists() else {}
    command = "python benchmarks/advise_accuracy.py " + " ".join(sys.argv[1:])
    held |= {letter: {"command": command.strip()} | part for letter, part in parts.items()}
    out.write_text(json.dumps(dict(sorted(held.items())), indent=1) + "\n")
    print(f"wrote {out} (parts {', '.join(sorted(parts))})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=2, help="sweep + bench repeats")
    parser.add_argument("--skip-a", action="store_true", help="only the MLPerf parts")
    parser.add_argument(
        "--unseen-data",
        type=Path,
        action="append",
        help="folder of one run of the unseen models (benched there when empty); repeat "
        "for several runs (default: two runs in temporary folders)",
    )
    parser.add_argument("--only-unseen", action="store_true", help="only part (d)")
    parser.add_argument(
        "--bench-repeat",
        type=int,
        default=1,
        help="part (d): each bench configuration run this many times, the median kept",
    )
    parser.add_argument("--skip-unseen", action="store_true", help="no part (d)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the results file")
    args = parser.parse_args()
    parts: dict[str, dict] = {}
    if not args.skip_unseen:
        with tempfile.TemporaryDirectory() as tmp:
            parts["d"] = part_d(
                args.unseen_data or [Path(tmp) / "1", Path(tmp) / "2"],
                args.steps,
                args.bench_repeat,
            )
    if not args.only_unseen:
        parts["b"], parts["c"] = part_b(), part_c()
        if not args.skip_a:
            parts["a"] = part_a(args.steps, args.repeat)
    write_results(parts, args.out)
    if "a" in parts:
        print(f"median absolute percentage error: {parts['a']['median_abs_step_error_pct']:.1f}%")


if __name__ == "__main__":
    main()
