"""The bench rows an advice may use, once, and as the step model reads them; the errors
that refuse them.

Usable runs (:func:`usable`): a broken model's (its loss not finite) never, with
``--allow-flagged`` or without; other flagged runs only where allowed. What to do about
those left out follows the kinds of flag (``bench.table.flag_summary``): a noisy host is
re-run on a quieter machine or its runs allowed, a broken model fixed, any other flag
benched again as it says. Which model is advised where none was asked, and why larger
ones were passed over: :func:`why_this_model`.

Read as the step model takes them (:func:`as_step_model`): per micro-step where a run
accumulated ``k`` micro-batches (the bench times one optimizer step: forward and backward
summed over the ``k``, the optimizer and DDP's copies once; a plain step is ``k``
micro-steps plus one optimizer step), so the micro-step is ``(forward + backward) / k``
and the fixed cost ``(intercept - optimizer) / k``. An FSDP run's N = 1 step is its
compute (FSDP communicates nothing on one device), with no DDP overhead read from it; its
own work is a fixed per-step cost (``fixed_split.fsdp_fixed``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from gpuscale.advice.calibrate.record import cell
from gpuscale.advice.calibration import Benched
from gpuscale.advice.explain.runs import (
    MODEL_THEN,
    all_failed,
    allowed_warning,
    broken_note,
    broken_refusal,
    columns_missing,
    flagged_help,
    largest_trusted,
    not_in_file,
)
from gpuscale.advice.explain.runs import remedy as remedy
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Finding, FindingKind
from gpuscale.hardware.peaks import cpu_peak
from gpuscale.plausibility import FlagKind
from gpuscale.tables import BENCH_COLUMNS
from gpuscale.tables.bench_runs import runs_like
from gpuscale.tables.requests import FieldError, NamedError, as_keywords, ref


class CalibrationError(ValueError):
    """The measurements cannot calibrate the model (no N = 1 run of that model, ...)."""


class NamedCalibrationError(CalibrationError, NamedError):
    """A :class:`CalibrationError` whose sentence names request fields (``ref``): the CLI
    says the option (``--bench``), Python the keyword (``bench=``)."""


class BenchFieldError(CalibrationError, FieldError):
    """A request's field the bench file refuses (a model it does not hold, a fixed cost
    above its step): a :class:`CalibrationError` and a :class:`FieldError` both, so the
    CLI names the option (``--model tf-3m: not in ...``) and Python the keyword
    (``model='tf-3m' is not in ...``), never the other's."""

    def __init__(self, field: str, value: object, rule: str, *, then: str = "") -> None:
        FieldError.__init__(self, field, value, rule)
        self.text = f"{ref(field, value)} is {rule}{then}"  # as NamedError's
        self.args = (as_keywords(self.text),)


def broken_models(table: pd.DataFrame) -> dict[str, list[int]]:
    """Each model with an ``ok`` run whose own loss was not finite (its flags say ``loss not
    finite``), with the device counts of those runs: a broken (or diverged) model, none of
    whose runs an advice uses, ``--allow-flagged`` or not."""
    ok = table[table["status"] == "ok"]
    found: dict[str, list[int]] = {}
    for row in ok[ok["flag_kinds"].map(lambda kinds: FlagKind.LOSS in kinds)].itertuples():
        found.setdefault(str(row.model), []).append(int(row.accelerators))
    return {m: sorted(set(n)) for m, n in found.items()}


def usable_runs(
    table: pd.DataFrame, allow: bool, model: str | None, where: str
) -> tuple[pd.DataFrame, str | None, dict[str, list[int]]]:
    """The bench table an advice may use: without the runs of its broken models
    (``broken_models``, returned too), other flagged runs made usable when ``allow`` (and
    the warning saying so, and what it left out all the same). ``CalibrationError`` when
    ``model`` (asked for) is broken, or when every model measured is."""
    broken = broken_models(table)
    if model in broken:
        raise CalibrationError(broken_refusal({model: broken[model]}, where))
    sound = table[~table["model"].astype(str).isin(broken)]
    if broken and not (sound["status"] == "ok").any():
        raise CalibrationError(broken_refusal(broken, where))
    if not allow:
        return sound, None, broken
    flagged = sound["flagged"].fillna(False).astype(bool) & (sound["status"] == "ok")
    return sound.assign(flagged=False), allowed_warning(sound, int(flagged.sum()), broken), broken


def known_model(table: pd.DataFrame, model: str, source: str | Path | None) -> None:
    """:class:`CalibrationError` when no row of the bench results is of ``model`` (a
    typo, another file): the models there and the closest one, not advice to re-run
    (:class:`BenchFieldError`: the CLI says ``--model``, Python ``model=``)."""
    names = sorted({str(m) for m in table["model"].dropna()})
    where = _where(source)
    if model in names:
        runs = table[table["model"] == model]
        if not (runs["status"] == "ok").any():  # said as what happened, not as untrusted
            raise CalibrationError(all_failed(runs, model, where))
        return
    raise BenchFieldError("model", model, not_in_file(model, names, where), then=MODEL_THEN)


def check_columns(bench: pd.DataFrame) -> None:
    """``ValueError`` for a table that is no bench table (columns missing)."""
    missing = [c for c in BENCH_COLUMNS if c not in bench.columns and c not in _LATER_COLUMNS]
    if missing:
        raise ValueError(columns_missing(missing))


# Columns a table saved by an earlier gpuscale lacks, read as unknown where absent.
_LATER_COLUMNS = ("host_devices", "host_link", "host_cpu_count", "fsdp_overhead_ms")


# What the calibration compares of the model's runs (``calibration.HARDWARE_COLUMNS`` less
# the device's name, compared apart): the runs of it the advice reads
HARDWARE = ("model", "backend", "device", "precision", "tf32", "threads")


def on_hardware(table: pd.DataFrame, cal: Benched) -> pd.Series:
    """The rows of ``table`` on the calibrated run's hardware (a mask): those the advice
    reads."""
    return runs_like(table, cal.bench.config_group, cal.device.name, fields=HARDWARE)


def why_this_model(
    table: pd.DataFrame, chosen: str, broken: dict[str, list[int]] | None = None
) -> str:
    """The sentence naming the model advised on and, where larger models of the table were
    passed over, each and why (``broken``: the models whose loss was not finite, with the
    counts, :func:`broken_models`); "" when the chosen model is the largest."""
    broken = broken or {}
    sizes = model_sizes(table)
    if chosen not in sizes:
        return ""
    larger = sizes[sizes > sizes[chosen]].sort_values(ascending=False)
    if larger.empty:
        return ""
    passed = [
        (str(name), float(size), table[table["model"] == name], broken.get(str(name)))
        for name, size in larger.items()
    ]
    return largest_trusted(chosen, float(sizes[chosen]), passed)


def model_sizes(table: pd.DataFrame) -> pd.Series:
    """Each model's parameters, by name."""
    return table.dropna(subset=["params"]).groupby("model")["params"].max()


@dataclass(frozen=True, slots=True)
class Usable:
    """The bench's runs an advice may use (``table``, :func:`usable_runs`), the file they
    were read from (``where``), the warning on the flagged runs allowed, and the broken
    models left out (each with its counts whose loss was not finite)."""

    table: pd.DataFrame
    where: str
    warning: str | None
    broken: dict[str, list[int]]

    def left_out(self, model: str | None = None, family: str | None = None) -> str:
        """What a refusal adds on the runs left out: flagged, broken ("" for neither); of
        ``model``'s runs only where the refusal is that model's (of ``family``'s where it is
        a family's): another model's flags and their remedies mend nothing of it."""
        table, broken = self.table, self.broken
        for column, value in (("model", model), ("family", family)):
            if value is not None:
                table = table[table[column] == value]
                broken = {m: n for m, n in broken.items() if m in set(table["model"])}
        return f"{flagged_help(table)}{broken_note(broken)}"


def usable(bench: pd.DataFrame, req: AdviceRequest) -> Usable:
    """The runs of ``bench`` the advice of ``req`` may use, once: the table checked
    (:func:`check_columns`), the model asked for in it (:func:`known_model`), then its
    broken models' runs left out and the flagged ones allowed as asked
    (:func:`usable_runs`)."""
    check_columns(bench)
    if req.model is not None:
        known_model(bench, req.model, req.bench)
    where = _where(req.bench)
    table, warning, broken = usable_runs(bench, req.allow_flagged, req.model, where)
    return Usable(table, where, warning, broken)


# Columns holding k plain micro-steps plus one optimizer step (the bare module at N = 1).
_PLAIN_STEPS = (
    "plain_step_ms_mean",
    "small_batch_step_ms_mean",
    "fixed_ms",
    "fixed_ms_low",
    "fixed_ms_high",
)


def as_step_model(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every row's phases per micro-step and FSDP's N = 1 step as its
    compute (see the module docstring); the measured steps and rates left as they are."""
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
    # (hardware.peaks.cpu_peak), the bound and the price of its work (fp32 work was priced at
    # AMX's bf16 8 TFLOP/s a thread)
    cpu = (out["device"] == "cpu") & out["peak_tflops"].isna()
    if cpu.any():
        out["peak_tflops"] = out["peak_tflops"].astype(float)
        on = out.loc[cpu]
        out.loc[cpu, "peak_tflops"] = [
            cpu_peak(t, p) for t, p in zip(on["threads"], on["precision"], strict=True)
        ]
    return out


def _where(source: str | Path | None) -> str:
    """The bench file's name as the refusals say it (``the bench results``: a table given)."""
    if source is None:
        return "the bench results"
    return Path(source).name


def accumulation_note(row: pd.Series) -> Finding | None:
    """How a run that accumulated gradients was read (None for one that did not)."""
    k = cell(row, "accum", int, 1)
    if k <= 1:
        return None
    b = int(row["batch_per_device"])
    return Finding.of(
        FindingKind.ACCUMULATED,
        model=row["model"],
        micro=k,
        batch=b,
        samples=b * k,
        forward_backward_ms=float(row["forward_ms"] + row["backward_ms"]),
    )


def which_configuration(rows: pd.DataFrame, row: pd.Series) -> list[Finding]:
    """Where the model ran in several precisions or strategies, which one the advice is
    on (the latest N = 1 run's)."""
    own = rows[(rows["model"] == row["model"]) & (rows["accelerators"] == 1)]
    kinds = own[["precision", "tf32", "strategy"]].astype(str).drop_duplicates()
    if len(kinds) < 2:
        return []
    found = Finding.of(
        FindingKind.CONFIGURATIONS,
        model=row["model"],
        configurations=len(kinds),
        precision=row["precision"],
        strategy=row["strategy"],
        tf32=row["tf32"],
    )
    return [found]
