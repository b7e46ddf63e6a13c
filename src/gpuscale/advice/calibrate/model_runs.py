"""The model's runs (:func:`of_model`): its N > 1 speedups like the run advised on, why this
bench model where none was asked, weak runs, and a batch advised far beyond the one timed."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from gpuscale.advice.calibrate.rows import HARDWARE_COLUMNS, Usable
from gpuscale.advice.calibration import Benched, OneDevice, Runs
from gpuscale.advice.explain.runs import Chosen, WeakRuns
from gpuscale.advice.measured_runs import Measured, trusted_runs
from gpuscale.advice.model.step import per_step_ms
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Finding
from gpuscale.advice.types import FindingKind as K
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.evidence import labels, remedy
from gpuscale.bench.support import Support, support
from gpuscale.bench.support import weak as too_short
from gpuscale.plausibility import FlagKind
from gpuscale.tables.bench import most_host_devices
from gpuscale.tables.bench import one_device as at_one_device
from gpuscale.tables.bench_runs import bench_options, runs_like

# What the advice compares of the model's runs (the device's name compared apart).
_HARDWARE = ("model", *(c for c in HARDWARE_COLUMNS if c != "device_name"))


def one_device(cal: Benched) -> OneDevice | None:
    """The calibrated N = 1 run as it trained, with the strategy's own work in it."""
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


def chosen(table: pd.DataFrame, name: str | None, broken: dict[str, tuple[int, ...]]) -> Chosen:
    """Why the model advised on (``name``) was chosen where none was asked (``broken``: each
    model's counts whose loss was not finite)."""
    sizes = table.dropna(subset=["params"]).groupby("model")["params"].max()
    if name not in sizes:
        return Chosen("", 0.0)
    larger = sizes[sizes > sizes[name]].sort_values(ascending=False)
    passed = tuple(
        (str(m), float(size), table[table["model"] == m], broken.get(str(m)))
        for m, size in larger.items()
    )
    others = tuple(str(m) for m in sizes.sort_values(ascending=False).index if m != name)
    return Chosen(name, float(sizes[name]), passed, others if len(sizes) > 1 else ())


def same_samples(table: pd.DataFrame, model: str) -> bool:
    """Whether a run of ``model`` at N > 1 was flagged for ranks that saw the same samples."""
    rows = table[(table["model"] == model) & (table["accelerators"] > 1)]
    return any(FlagKind.SAME_SAMPLES in kinds for kinds in rows["flag_kinds"])


def measured_runs(
    table: pd.DataFrame,
    model: str,
    allow_flagged: bool,
    like: tuple[str, str | None, str | None] | None = None,
) -> list[Measured]:
    """The model's N > 1 throughput speedups, flagged as the bench flags them; with ``like``
    (configuration group, device name, strategy), only runs like it."""
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


def weak_runs(
    table: pd.DataFrame, model: str, source: str | Path | None = None
) -> tuple[WeakRuns | None, Support | None]:
    """The runs of ``model`` the advice uses that are weak evidence (None when none is) and
    what they give."""
    rows = trusted_runs(table[table["model"] == model])
    weak = rows[rows["evidence"] == "weak"]
    found = support(rows, table)
    if weak.empty or found is None:
        return None, found
    kinds = tuple(labels(weak["evidence_kinds"]))
    counts = tuple(int(n) for n in sorted(weak["accelerators"].unique()))
    # runs too short to read the step's terms from: the change line says what to bench
    # (``explain.caveats.measure_first``), the warning only that they are weak
    fix = None if too_short(found) else remedy(found.fixes, found.steps_needed)
    full = found.remedy(basis=True)
    return WeakRuns(len(weak), len(rows), model, counts, kinds, fix, full, _file(source)), found


def run_options(table: pd.DataFrame, cal: Benched, req: AdviceRequest) -> str:
    """The ``gpuscale bench`` options of the run advised on (``""`` where ``table`` holds
    none)."""
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
    the one batch it timed while its step sat on a launch-bound floor, or more than twice
    that batch."""
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
    """The bench's rows on the calibrated model: its :class:`Runs`, why it was chosen, its
    weak runs, the batch advised beyond the one timed."""

    runs: Runs
    chosen: Chosen
    weak: WeakRuns | None
    beyond: Finding | None


def of_model(
    bench: pd.DataFrame,
    found: Usable,
    calibrated: tuple[Benched, Benched],
    req: AdviceRequest,
    per_device: int,
) -> ModelRuns:
    """:class:`ModelRuns` of the model ``calibrated`` (as benched, as asked), advised at
    ``per_device`` samples a device."""
    table, (cal, benched) = found.table, calibrated
    name = cal.model.name
    beyond = far_beyond_the_batch_timed(cal, per_device)
    picked = Chosen("", 0.0)  # why this model where none was asked
    if not req.model and req.params is None:
        picked = chosen(bench, name, dict(found.broken))
    hardware = runs_like(table, cal.bench.config_group, cal.device.name, fields=_HARDWARE)
    weak, evidence = weak_runs(table[hardware], name, req.bench)
    run = run_options(table, cal, req)  # the bench command of the advised run, on its file
    like = (cal.bench.config_group, cal.device.name, req.strategy)
    runs = Runs(
        from_bench=True,
        measured=tuple(measured_runs(bench, name, req.allow_flagged, like)),
        evidence=None if evidence is None else replace(evidence, run=run),
        host_devices=most_host_devices(table),
        same_samples=same_samples(bench, name),
        # a model given by its size has no bench run of its own
        one_device=None if req.params is not None else one_device(benched),
    )
    return ModelRuns(runs=runs, chosen=picked, weak=weak, beyond=beyond)
