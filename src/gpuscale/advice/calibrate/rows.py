"""The bench rows an advice may use (:func:`usable`), read as the step model takes them
(:func:`as_step_model`), refused by the errors of :mod:`.errors`; the model advised on
where none was asked (:func:`default_model`) and why (:func:`chosen`), and the flagged runs
used with --allow-flagged (:func:`allowed_flagged`: its flags and the broken models left out
are findings the refusals say too)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from gpuscale.advice.calibrate.errors import (
    BenchFieldError,
    CalibrationError,
)
from gpuscale.advice.derived import broken_left_out, flags_among, flags_seen
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Finding, FindingKind, LeftOut, Refusal, RefusalKind, trusted_runs
from gpuscale.bench.table import flag_summary
from gpuscale.hardware.peaks import cpu_peak
from gpuscale.plausibility import FlagKind
from gpuscale.tables import BENCH_COLUMNS, BENCH_GROUP_COLUMNS
from gpuscale.tables.bench import configuration_labels
from gpuscale.tables.bench_schema import BENCH_LATER_COLUMNS

# Runs that share a machine setting: their compute and communication are comparable.
HARDWARE_COLUMNS = ("device", "device_name", "backend", "precision", "tf32", "threads")
# Columns a table saved by an earlier gpuscale lacks, unknown where absent (repeat*: unread).
# Columns holding k plain micro-steps plus one optimizer step (the bare module at N = 1).
_PLAIN_STEPS = ("plain_step_ms_mean", "small_batch_step_ms_mean", "fixed_ms")
_PLAIN_STEPS += ("fixed_ms_low", "fixed_ms_high")
Broken = tuple[tuple[str, tuple[int, ...]], ...]  # models, each with its counts


def _flagged(table: pd.DataFrame) -> pd.Series:
    return table["flagged"].fillna(False).astype(bool) & (table["status"] == "ok")


@dataclass(frozen=True, slots=True)
class Usable:
    """The runs an advice may use, the flagged ones allowed (count, flags), the broken
    models and the runs of the model asked for left out."""

    table: pd.DataFrame
    allowed: int
    flags: tuple[tuple[str, int, str], ...]
    broken: Broken
    left: LeftOut


def known_model(table: pd.DataFrame, model: str, source: str | Path | None) -> None:
    """Refused where no row is of ``model`` (:class:`BenchFieldError`) or each run failed."""
    where = str(source) if isinstance(source, str | Path) else ""  # said by the phrasebook
    names = sorted({str(m) for m in table["model"].dropna()})
    if model not in names:
        raise BenchFieldError(
            "model", model, Refusal(RefusalKind.NOT_IN_FILE, where, model, tuple(names))
        )
    runs = table[table["model"] == model]
    if not (runs["status"] == "ok").any():
        last = runs.iloc[-1]
        raise CalibrationError(
            Refusal(
                RefusalKind.ALL_FAILED,
                where,
                model,
                runs=len(runs),
                status=str(last["status"]),
                error=str(last["error"]),
            )
        )


def usable(bench: pd.DataFrame, req: AdviceRequest) -> Usable:
    """The runs of ``bench`` ``req`` may use: broken models' (a loss not finite) left out,
    refused where the model asked is broken, or every model is; flagged ones where allowed."""
    missing = [c for c in BENCH_COLUMNS if c not in bench.columns and c not in BENCH_LATER_COLUMNS]
    if missing:
        raise CalibrationError(Refusal(RefusalKind.COLUMNS_MISSING, names=tuple(missing)))
    if req.model is not None:
        known_model(bench, req.model, req.bench)
    # each model with an ``ok`` run whose loss was not finite, with those runs' counts
    ok = bench[bench["status"] == "ok"]
    lost = ok[ok["flag_kinds"].map(lambda kinds: FlagKind.LOSS in kinds).astype(bool)]
    counts = lost["accelerators"].groupby(lost["model"].astype(str), sort=False)
    broken = tuple((m, tuple(sorted({int(c) for c in n}))) for m, n in counts)
    mine = tuple((m, n) for m, n in broken if m == req.model)
    sound = bench[~bench["model"].astype(str).isin(dict(broken))]
    if mine or (broken and not (sound["status"] == "ok").any()):
        where = str(req.bench) if isinstance(req.bench, str | Path) else ""
        raise CalibrationError(Refusal(RefusalKind.BROKEN, where, broken=mine or broken))
    # the broken models said where no model or family was asked; the flagged runs
    # allowed, else those of the model (or family) asked left out
    asked = req.model is not None or req.family is not None
    left_broken = () if asked else broken
    if req.allow_flagged:
        allowed, flags = int(_flagged(sound).sum()), tuple(flag_summary(sound))
        left = LeftOut(broken=left_broken)
        return Usable(sound.assign(flagged=False), allowed, flags, broken, left)
    table = sound
    for column, value in (("model", req.model), ("family", req.family)):
        if value is not None:
            table = table[table[column] == value]
    outlasted = outlasted_by_flagged(table)
    flagged = _flagged(table)
    single = bool((flagged & (table["accelerators"] == 1)).any())
    flags = tuple(flag_summary(table)) if single else ()
    left = LeftOut(int(flagged.sum()), single, flags, left_broken, outlasted)
    return Usable(sound, 0, (), broken, left)


def _configuration(table: pd.DataFrame) -> pd.Series:
    """Each run's configuration and count, but its steps, as one key."""
    same = [c for c in BENCH_GROUP_COLUMNS if c != "steps"]
    same += ["batch_per_device", "global_batch", "accelerators", "device_name", "nnodes"]
    columns = table[[c for c in same if c in table.columns]]
    # a field one row lacks (an older row) is blank: pandas' str dtype keeps NaN a float
    key = columns.astype(object).where(columns.notna(), "").astype(str)
    return key.apply("|".join, axis=1)


def longest(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` less its runs that a run of the same configuration and count (flagged or
    not) timed over more steps, at every count, N = 1 too: a mean of 2 steps (one slow step
    moves it by half) must not outweigh a longer run that contradicts it, nor stand in for
    it where it is flagged. A short run unflagged is no quieter machine: its host shares,
    read over less than ``plausibility.MIN_BUSY_WINDOW_S``, are not measured, while the
    longer run's flags say what the machine did; so a flagged longer run leaves its count
    to ``--allow-flagged`` or a quieter re-run, as a flagged run alone there would."""
    if table.empty or "steps" not in table.columns:
        return table
    ok_steps = table["steps"].where(table["status"] == "ok")
    most = ok_steps.groupby(_configuration(table)).transform("max")
    return table[~(table["steps"] < most)]


def outlasted_by_flagged(table: pd.DataFrame) -> int:
    """How many unflagged ``ok`` runs of ``table`` :func:`longest` drops for a flagged
    longer run of their configuration and count (left out with it: a refusal says so)."""
    if table.empty or "steps" not in table.columns:
        return 0
    kept = longest(table)
    flagged_keys = set(_configuration(kept[_flagged(kept)]))
    ok = table[(table["status"] == "ok") & ~_flagged(table)]
    dropped = ok[~ok.index.isin(kept.index)]
    return int(_configuration(dropped).isin(flagged_keys).sum()) if len(dropped) else 0


def trusted(table: pd.DataFrame) -> tuple[pd.DataFrame, list[str | Finding]]:
    """The ``ok`` runs of ``table`` not flagged and not outlasted (:func:`longest`); a note on
    the flagged ones, each named as the bench table names its run (``tf-7m (run 2)``)."""
    flagged, labels, table = table[_flagged(table)], configuration_labels(table), longest(table)
    if flagged.empty:
        return trusted_runs(table), []
    runs = tuple(
        Finding.of(FindingKind.RUN_ON, model=str(m), run=str(labels[i]), devices=int(n))
        for i, m, n in zip(flagged.index, flagged["model"], flagged["accelerators"], strict=True)
    )
    summary = tuple(flag_summary(flagged))
    flags = tuple(Finding.of(FindingKind.FLAG_RUNS, flag=kind, runs=n) for kind, n, _ in summary)
    said = {"pairs": runs, "flags": flags, "several": flags_among(summary, len(flagged))}
    found = Finding.of(FindingKind.FLAGGED_LEFT_OUT, runs=len(flagged), **said)
    return trusted_runs(table), [found]


def same_hardware(
    rows: pd.DataFrame, like: pd.Series, columns: tuple[str, ...] = HARDWARE_COLUMNS
) -> pd.DataFrame:
    """The rows whose ``columns`` hold ``like``'s values (missing matches missing)."""
    keep = np.ones(len(rows), bool)
    for column in columns:
        value = like[column]
        same = rows[column].isna() if pd.isna(value) else rows[column] == value
        keep &= same.to_numpy()
    return rows[keep]


def default_model(table: pd.DataFrame) -> str:
    """The largest model with a trustworthy N = 1 run (``CalibrationError`` when none)."""
    rows = trusted_runs(longest(table))
    single = rows[rows["accelerators"] == 1]
    if not single.empty:
        return str(single.sort_values("params")["model"].iloc[-1])
    ok = table[table["status"] == "ok"]
    if ok.empty:  # nothing measured: say why the runs failed, not what is missing
        found = Finding.of(FindingKind.NOTHING_MEASURED, model=None)
        if len(table):
            first = table.iloc[0]
            error = str(first["error"]).splitlines()[0] if first["error"] else None
            found = Finding.of(
                FindingKind.NOTHING_MEASURED,
                model=first["model"],
                devices=first["accelerators"],
                status=first["status"],
                error=error,
            )
        raise CalibrationError(found)
    if not (ok["accelerators"] == 1).any():
        raise CalibrationError(Finding.of(FindingKind.NO_SINGLE_RUN))
    raise CalibrationError(Finding.of(FindingKind.NO_TRUSTED_SINGLE_RUN))


def as_step_model(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` per micro-step: of ``k`` micro-batches, ``(forward + backward) / k`` and a
    plain step's ``(step - optimizer) / k + optimizer``. An FSDP run's N = 1 step is its
    compute (it communicates nothing on one device), no DDP overhead read from it."""
    if table.empty:
        return table
    out = table.copy()
    opt = out["optimizer_ms"].astype(float).fillna(0.0)
    fsdp = (out["strategy"] == "fsdp") & (out["accelerators"] == 1)
    fb = (out["forward_ms"] + out["backward_ms"]).astype(float)
    whole = (out["step_ms_mean"].astype(float) - opt) / fb
    scale = whole.where(fsdp & (fb > 0) & (whole > 0), 1.0)
    accum = out["accum"].astype(float).fillna(1.0).clip(lower=1.0)
    for column in ("forward_ms", "backward_ms"):
        out[column] = out[column].astype(float) * scale / accum
    for column in _PLAIN_STEPS:
        if column in out.columns:
            out[column] = (out[column].astype(float) - opt) / accum + opt
    out["ddp_overhead_ms"] = out["ddp_overhead_ms"].where(out["strategy"] != "fsdp")
    # no CPU records a peak: its threads' ceiling at the run's precision stands in for it
    # (hardware.peaks.cpu_peak), the bound and the price of its work
    cpu = (out["device"] == "cpu") & out["peak_tflops"].isna()
    if cpu.any():
        out["peak_tflops"] = out["peak_tflops"].astype(float)
        on = out.loc[cpu]
        out.loc[cpu, "peak_tflops"] = [
            cpu_peak(t, p) for t, p in zip(on["threads"], on["precision"], strict=True)
        ]
    return out


def chosen(bench: pd.DataFrame, name: str, broken: Broken) -> tuple[Finding | None, Finding | None]:
    """Why ``name`` where no model was asked, the largest benched: the larger models passed
    over, each with why its runs give no trustworthy N = 1 run (first, the model note), else
    the others benched (said after the decision); None for each not said."""
    sizes = bench.dropna(subset=["params"]).groupby("model")["params"].max()
    if name not in sizes:
        return None, None
    larger = sizes[sizes > sizes[name]].sort_values(ascending=False)
    found = Finding.of(FindingKind.MODEL_CHOSEN, model=name, size=float(sizes[name]))
    if len(larger):
        passed = tuple(
            Finding.of(
                FindingKind.PASSED_OVER,
                model=str(m),
                params=float(size),
                why=why_not(bench[bench["model"] == m], dict(broken).get(str(m))),
            )
            for m, size in larger.items()
        )
        return found.with_values(passed=passed, others=None), None
    others = tuple(str(m) for m in sizes.sort_values(ascending=False).index if m != name)
    if not others:
        return None, None
    return None, found.with_values(passed=None, others=len(others) + 1, listed=others)


def why_not(runs: pd.DataFrame, broken: tuple[int, ...] | None = None) -> Finding:
    """Why a model's ``runs`` give no trustworthy N = 1 run: ``broken`` (the counts whose
    loss was not finite), none, each failed, else flagged (its flagged runs' kinds, and
    how many unflagged ones a flagged longer run outlasted: :func:`longest`)."""
    single = runs[runs["accelerators"] == 1]
    ok = single[single["status"] == "ok"]
    flagged = ok[_flagged(ok)]
    kinds = tuple(dict.fromkeys(str(k) for row in flagged["flag_kinds"] for k in row))
    outlasted = len(ok) - len(flagged) if len(flagged) else 0
    case = "flagged"
    if ok.empty:
        case = "failed"
    if single.empty:
        case = "none"
    if broken:
        case = "broken"
    return Finding.of(
        FindingKind.NO_SINGLE,
        case=case,
        on=broken,
        runs=len(flagged) or len(ok) or len(single),
        kinds=kinds,
        outlasted=outlasted if case == "flagged" and outlasted else None,
        named=bool(kinds),
        status=str(single["status"].iloc[-1]) if len(single) else None,
    )


def allowed_flagged(found: Usable) -> Finding | None:
    """With --allow-flagged, the flagged runs used (by kind of flag; ``repeats``: those whose
    samples/s count samples their ranks repeated) and the broken models left out whatever it
    says; None where neither is."""
    used = None
    if found.allowed:
        flags, several = flags_seen(found.flags), flags_among(found.flags, found.allowed)
        repeats = next((n for k, n, _ in found.flags if k == FlagKind.SAMPLES_UNDER_BATCH), None)
        used = Finding.of(
            FindingKind.FLAGGED_USED,
            n=found.allowed,
            flags=flags,
            several=several,
            repeats=repeats,
            repeat_kind=FlagKind.SAMPLES_UNDER_BATCH.value,
        )
    parts = tuple(filter(None, (used, broken_left_out(found.broken))))
    return Finding.of(FindingKind.ALLOWED_FLAGGED, parts=parts) if parts else None
