"""What the bench's runs of the model advised say beyond its calibration point.

Contention: the no-sync step's growth over N = 1 at N > 1 (waiting for the slowest
device, contention for shared cores) and the communication DDP timed over what the
network predicts for the same buckets (on CPU above 1: the all-reduce shares the cores
with backward), each read at the most specific level that measured it (every model of the
configuration, the family, its own runs); the noise scale the gradient norms measured.

The model's runs (:func:`of_model`): its N > 1 speedups like the run advised on, which
bench model is advised where none was asked and why, weak runs, and a per-device batch
advised far beyond the one timed (:func:`far_beyond_the_batch_timed`).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from gpuscale.advice.calibrate.rows import Usable
from gpuscale.advice.calibration import Benched, OneDevice, Runs
from gpuscale.advice.explain.runs import WeakRuns, largest_of, largest_trusted, weak_evidence
from gpuscale.advice.measured_runs import Measured
from gpuscale.advice.model.network import DEFAULT_BUCKET_MB, Network
from gpuscale.advice.model.step import per_step_ms
from gpuscale.advice.model.step_collectives import comm_times_s
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Finding
from gpuscale.advice.types import FindingKind as K
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.analysis.critical_batch import NoiseScale, noise_scale
from gpuscale.bench.evidence import labels, remedy
from gpuscale.bench.support import Support, support
from gpuscale.bench.support import weak as too_short
from gpuscale.plausibility import FlagKind
from gpuscale.tables.bench import most_host_devices
from gpuscale.tables.bench import one_device as at_one_device
from gpuscale.tables.bench_runs import bench_options, runs_like

# What the advice compares of the model's runs (the device's name compared apart).
_HARDWARE = ("model", "backend", "device", "precision", "tf32", "threads")
# A no-sync slowdown that falls by less than this share from fewer devices to more is
# run-to-run noise, not said (the step model holds it all the same).
FALL_NOISE = 0.05


def _comm_ratios(multi: pd.DataFrame, network: Network) -> pd.Series:
    """Per N > 1 row: measured DDP communication over the network's prediction (NaN where
    it was not measured); one prediction per distinct gradient size, N, bucket and
    strategy."""
    rows = multi.dropna(subset=["comm_ms", "grad_bytes_per_step"])
    ratios = pd.Series(np.nan, index=multi.index, dtype=float)
    predicted: dict[tuple, float] = {}
    columns = zip(
        rows.index,
        rows["grad_bytes_per_step"].to_numpy(float),
        rows["accelerators"].to_numpy(int),
        rows["bucket_mb"].to_numpy(float),
        (rows["strategy"] == "fsdp").to_numpy(bool),
        rows["comm_ms"].to_numpy(float),
        strict=True,
    )
    for index, grad, n, bucket, fsdp, comm in columns:
        key = (grad, n, DEFAULT_BUCKET_MB if np.isnan(bucket) else bucket, fsdp)
        if key not in predicted:
            predicted[key], _ = comm_times_s(
                network, grad, n, bucket_mb=key[2], strategy="fsdp" if fsdp else "ddp"
            )
        if predicted[key] > 0 and comm > 0:
            ratios[index] = comm / (predicted[key] * 1e3)
    return ratios


def _slowdown(multi: pd.DataFrame, single: pd.DataFrame) -> tuple[tuple[int, float], ...]:
    """(N, median no-sync step at N over the same configuration's at N = 1)."""
    if multi.empty or single.empty:
        return ()
    base = single.drop_duplicates("config_group", keep="last").set_index("config_group")
    reference = multi["config_group"].map(base["nosync_step_ms_mean"]).astype(float)
    ratio = multi["nosync_step_ms_mean"].astype(float) / reference
    found = ratio.groupby(multi["accelerators"]).median().dropna()
    return tuple((int(n), float(f)) for n, f in found.items() if f > 0)


def falling(slowdown: tuple[tuple[int, float], ...]) -> Finding | None:
    """A warning where the bench measured less contention at more devices, by more than
    ``FALL_NOISE`` (the step model takes each count as slow as the slowest measured at
    fewer: ``Compute.held_slowdown``); None where it never fell."""
    fell, most, at = [], 0.0, 1
    for n, s in sorted((n, s) for n, s in slowdown if n > 1):
        if s < most * (1 - FALL_NOISE):
            fell.append(Finding.of(K.FELL, slowdown=s, devices=n, most=most, at=at))
        elif s > most:
            most, at = s, n
    if not fell:
        return None
    return Finding.of(K.CONTENTION_FELL, falls=tuple(fell))


def slowdowns(
    single: pd.DataFrame, levels: tuple[pd.DataFrame, ...], family: str
) -> tuple[dict[int, float], Finding]:
    """The no-sync slowdown per N, the most specific ``levels`` (every model of the
    configuration, the family, the model's own runs) that measured it winning, and where
    it was read."""
    slowdown: dict[int, float] = {}
    read = Finding.of(K.CONTENTION_FROM, level="none")
    for rows_at, level in zip(levels, ("configuration", "family", "own"), strict=True):
        found = dict(_slowdown(rows_at, single))
        if found:
            slowdown.update(found)
            at = tuple(
                Finding.of(K.NO_SYNC_AT, slowdown=f, devices=n) for n, f in sorted(found.items())
            )
            read = Finding.of(K.CONTENTION_FROM, level=level, family=family, found=at)
    return slowdown, read


def comm_scale(levels: tuple[pd.DataFrame, ...], network: Network) -> tuple[float | None, pd.Index]:
    """The communication scale on ``network`` (measured over predicted, the median), the
    most specific of ``levels`` (N > 1 rows, each a part of the first) that measured it
    winning, and the rows it was read from; (None, no rows) where none did."""
    found, comm_rows = None, pd.Index([])
    if not levels:
        return found, comm_rows
    ratios = _comm_ratios(levels[0], network)  # every level is a part of the first
    for rows_at in levels:  # the median of measured over predicted at each level
        at = ratios.loc[rows_at.index].dropna()
        if len(at) and (scale := float(at.median())):
            found, comm_rows = scale, at.index
    return found, comm_rows


def read_comm(cal: Benched, table: pd.DataFrame, network: Network) -> tuple[Benched, Network]:
    """``cal`` with its communication scale read on ``network`` (:func:`comm_scale` of its
    ``comm_levels``: its own runs reproduce its calibration point; its family's, else all,
    without) and the runs of ``table`` it was read from, and ``network`` scaled by it
    (``Network.scaled``), once."""
    levels = cal.bench.comm_levels
    scale, rows = comm_scale(levels, network)
    if scale is None:
        return cal, network
    found = support(levels[0].loc[rows], table)
    bench = replace(cal.bench, comm_scale=scale, comm_support=found)
    return replace(cal, bench=bench), network.scaled(scale)


def noise(rows: pd.DataFrame) -> NoiseScale | None:
    """The noise scale the runs' gradient norms measured (the one over the most steps)."""
    best = None
    for r in rows.itertuples():
        local, glob = r.noise_local_sq, r.noise_global_sq
        if not (isinstance(local, tuple) and len(local) >= 2 and pd.notna(r.noise_batch_big)):
            continue
        estimate = noise_scale(
            list(local), list(glob), float(r.noise_batch_small), float(r.noise_batch_big)
        )
        if estimate is not None and (best is None or estimate.steps > best.steps):
            best = estimate
    return best


def one_device(cal: Benched) -> OneDevice | None:
    """The calibrated N = 1 run as it trained: its step, batch, strategy and DDP's own work
    in it (the N = 1 row is predicted without DDP: said beside it)."""
    bench, run, compute = cal.bench, cal.run, cal.model.compute
    if not bench.one_step_ms > 0:
        return None
    own = run.accum * compute.one_rank_own_ms  # FSDP's, where its bare step was timed
    if run.strategy == "ddp":
        own = per_step_ms(compute.ddp_ms_per_mparam, cal.model.spec.params)
    return OneDevice(
        bench.one_step_ms,
        run.batch,
        run.accum,
        run.strategy,
        own,
        config_group=bench.config_group,
        device_name=cal.device.name,
        fsdp_own_ms=bench.one_step_own_ms if run.strategy == "fsdp" else 0.0,
    )


def chosen_said(
    table: pd.DataFrame, chosen: str | None, broken: dict[str, tuple[int, ...]]
) -> tuple[str, str]:
    """Why the model advised on (``chosen``; None: a model given by its size) was chosen
    where none was asked: each larger model passed over and why (``broken``: the counts
    whose loss was not finite), else, the largest of several, the others ``--model``
    chooses; "" for what does not apply."""
    sizes = table.dropna(subset=["params"]).groupby("model")["params"].max()
    if chosen not in sizes:
        return "", ""
    larger = sizes[sizes > sizes[chosen]].sort_values(ascending=False)
    if not larger.empty:
        passed = [
            (str(name), float(size), table[table["model"] == name], broken.get(str(name)))
            for name, size in larger.items()
        ]
        return largest_trusted(chosen, float(sizes[chosen]), passed), ""
    if len(sizes) < 2:
        return "", ""
    others = [str(name) for name in sizes.sort_values(ascending=False).index if name != chosen]
    return "", largest_of(chosen, float(sizes[chosen]), len(sizes), others)


def same_samples(table: pd.DataFrame, model: str) -> bool:
    """Whether a run of ``model`` at N > 1 was flagged for ranks that saw the same
    samples (flagged or allowed, its gradient norms measure no noise scale)."""
    rows = table[(table["model"] == model) & (table["accelerators"] > 1)]
    return any(FlagKind.SAME_SAMPLES in kinds for kinds in rows["flag_kinds"])


def measured_runs(
    table: pd.DataFrame,
    model: str,
    allow_flagged: bool,
    like: tuple[str, str | None, str | None] | None = None,
) -> list[Measured]:
    """The model's N > 1 throughput speedups in the bench table, flagged as the bench
    flags them (``allowed`` where ``--allow-flagged`` let the advice use them); with
    ``like`` (the calibrated run's configuration group, device name and the strategy
    predicted), only the runs of that configuration on that device
    (``tables.bench.runs_like``): a CPU run of the model is no measurement of its advice on
    a GPU."""
    scaling = bench_scaling(table)
    base_batch = at_one_device(scaling, "batch_per_device")
    base_accum = at_one_device(scaling, "accum")
    of = (scaling["model"] == model) & (scaling["accelerators"] > 1)
    if like is not None and len(scaling):
        of &= runs_like(scaling, *like)
    rows = scaling[of].dropna(subset=["speedup"])
    at = pd.Series(range(len(scaling)), index=scaling.index, dtype=float)
    base_at = at_one_device(scaling.assign(_at=at), "_at")

    def weak_remedy(index: object) -> str:
        """What to bench where the run at ``index`` or its N = 1 run is weak evidence."""
        both = [index] + ([scaling.index[int(base_at[index])]] if pd.notna(base_at[index]) else [])
        pair = scaling.loc[both]
        found = support(pair)
        # weak: notes say why (a flagged run's too, graded flagged: ``bench.evidence``)
        weak = bool(pair.get("evidence_notes", pd.Series(dtype=str)).fillna("").ne("").any())
        return found.remedy() if weak and found is not None else ""

    return [
        Measured(
            devices=int(r.accelerators),
            speedup=float(r.speedup),
            flagged=bool(r.flagged),
            batch_per_device=int(r.batch_per_device),
            allowed=bool(r.flagged) and allow_flagged,
            accum=int(r.accum),
            base=(int(base_batch[i]), int(base_accum[i])),
            weak_remedy=weak_remedy(i),
            samples_per_s=float(r.samples_per_s),
            flags=str(r.flags) if bool(r.flagged) and isinstance(r.flags, str) else "",
        )
        for i, r in zip(rows.index, rows.itertuples(), strict=True)
    ]


def weak_said(
    table: pd.DataFrame, model: str, source: str | Path | None = None
) -> tuple[str | None, str | None, Support | None]:
    """The warning when runs of ``model`` the advice uses (``ok``, not flagged, or
    allowed) are weak evidence (``bench.evidence``: few steps timed, steps spread, busy
    share not measured): short, with the kinds of why and what to bench (the default
    view's line); then the same in full, with the steps' basis and the command that
    prints the runs' notes (on ``source``, the results file, where given: a source line
    of ``--explain``); then what they give. (None, None, support) when none is weak."""
    ok = table[(table["model"] == model) & (table["status"] == "ok")]
    rows = ok[~ok["flagged"].fillna(False).astype(bool)]
    weak = rows[rows["evidence"] == "weak"]
    found = support(rows, table)
    if weak.empty or found is None:
        return None, None, found
    kinds = labels(weak["evidence_kinds"])
    counts = [int(n) for n in sorted(weak["accelerators"].unique())]
    # runs too short to read the step's terms from: the change line says what to bench
    # (``explain.caveats.measure_first``), the warning only that they are weak
    fix = None if too_short(found) else remedy(found.fixes, found.steps_needed)
    weak_runs = WeakRuns(len(weak), len(rows), model, counts, kinds)
    said, full = weak_evidence(weak_runs, fix, found.remedy(basis=True), _file(source))
    return said, full, found


def run_options(table: pd.DataFrame, cal: Benched, req: AdviceRequest) -> str:
    """The ``gpuscale bench`` options of the run advised on: the calibrated run's
    configuration in the strategy predicted, and ``--out`` the file advised on where the
    advice was given its path (``""`` where no run of it is in ``table``)."""
    like = runs_like(table, cal.bench.config_group, cal.device.name)
    like &= table["model"] == cal.model.name
    rows = table[like]
    if rows.empty:
        return ""
    row = rows.sort_values("accelerators", kind="stable").iloc[0].copy()
    row["strategy"] = req.strategy or row.get("strategy")
    out = f" --out {_file(req.bench)}" if isinstance(req.bench, str | Path) else ""
    return f"{bench_options(row)}{out}"


def _file(source: str | Path | None) -> str:
    """The results file as a shell word (``FILE`` where the table was given, not read)."""
    return shlex.quote(str(source)) if isinstance(source, str | Path) else "FILE"


def far_beyond_the_batch_timed(cal: Benched, per_device: int) -> Finding | None:
    """A warning when the advice runs a per-device batch the bench never came near: above
    the one batch it timed while the step sat on a launch-bound floor there (its work was
    never seen: priced at the device's peak, a lower bound), or more than twice that batch.
    Held out on an H100: ResNet-50 bf16 timed at batch 32 on a host whose CPU set its step
    took 116 ms at batch 256 on another host; modelled from batch 32, the step there was
    under half of that (docs/advice.md)."""
    floor, timed = cal.model.compute.floor_ms > 0, cal.run.batch
    if (
        cal.bench.shape is not None
        or per_device <= timed
        or (per_device <= 2 * timed and not floor)
    ):
        return None
    return Finding.of(
        K.BEYOND_BATCH,
        batch=per_device,
        times=per_device / timed,
        timed=timed,
        floor=floor,
        model=cal.model.name,
    )


@dataclass(frozen=True, slots=True)
class ModelRuns:
    """The bench's rows on the calibrated model: the record's :class:`Runs` (its N > 1
    runs like the one advised on, whether one saw the same samples on every rank, the most
    GPUs a host had, the runs used as evidence: :func:`weak_said`, with the advised run's
    options), why this model (``rows.why_this_model``, else :func:`models_benched`; ""
    where asked), the weak runs said in short and in full, and the batch advised beyond
    the one timed (:func:`far_beyond_the_batch_timed`)."""

    runs: Runs
    passed_over: str
    others: str
    weak: str | None
    weak_in_full: str | None
    beyond: Finding | None


def of_model(
    bench: pd.DataFrame, found: Usable, cal: Benched, req: AdviceRequest, per_device: int
) -> ModelRuns:
    """:class:`ModelRuns` of ``cal``'s model in ``bench``, read once, advised at
    ``per_device`` samples per device."""
    table, name = found.table, cal.model.name
    like = runs_like(table, cal.bench.config_group, cal.device.name, fields=_HARDWARE)
    weak, weak_in_full, evidence = weak_said(table[like], name, req.bench)
    if evidence is not None:  # the bench command of the advised run, on the file advised on
        evidence = replace(evidence, run=run_options(table, cal, req))
    passed_over = others = ""
    if not req.model:
        chosen = None if req.params is not None else name
        passed_over, others = chosen_said(bench, chosen, dict(found.broken))
    beyond = far_beyond_the_batch_timed(cal, per_device)
    like = (cal.bench.config_group, cal.device.name, req.strategy)
    runs = Runs(
        from_bench=True,
        measured=tuple(measured_runs(bench, name, req.allow_flagged, like)),
        evidence=evidence,
        host_devices=most_host_devices(table),
        same_samples=same_samples(bench, name),
    )
    return ModelRuns(
        runs=runs,
        passed_over=passed_over,
        others=others,
        weak=weak,
        weak_in_full=weak_in_full,
        beyond=beyond,
    )
