"""Scaling of the user's own bench runs: speedup and efficiency per model, break-even size.

For each model and configuration group (the same run at every device count: same
threads per rank, batch, precision, backend, ...), against the group's one-device run
(of the same sweep where the file holds several, see ``tables.bench.one_device``):
``speedup = samples_per_s(N) / samples_per_s(1)`` (throughput, so weak and strong
scaling read the same way) and ``efficiency = speedup / N``. The one-device throughput is
the **plain** step's (the bare module, no DDP wrapper: what a user pays on one device)
where the run timed it, else the DDP step's (``baseline`` says which);
``speedup_ddp`` is always against DDP's one-rank step, which carries DDP's own overhead
and so flatters N > 1 (an FSDP group's against FSDP's, in ``speedup_fsdp``). At N = 1
``speedup`` and ``efficiency`` are NaN (a run on one device
has no speedup over one device): what that row measures against the bare module is
``ddp_vs_bare``, DDP's one-rank throughput over the bare module's (below 1: what DDP's
wrapper costs on one device; NaN at N > 1 and where no plain step was timed), or for an
FSDP run ``fsdp_vs_bare``, FSDP's (``ddp_vs_bare`` NaN there: no DDP wrapper ran). ``platform``
says what each run ran on (device and backend). A run without a one-device run of the
same configuration gets no speedup (it is never compared with another configuration) and
a flag saying so. An
efficiency that cannot be true (super-linear, see ``gpuscale.plausibility``) flags the
row, as does a flagged N = 1 run every row read against it (flagged in the bench table:
a speedup is only as trustworthy as both of its runs). The **break-even model size** at
N is where the speedup crosses 1: log-linear interpolation in parameters between the
largest model slower than one device and the next larger model that is not, over
unflagged rows.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from gpuscale.plausibility import FlagKind, flag_kinds, superlinear_flag
from gpuscale.tables import BenchStatus
from gpuscale.tables.bench import configuration_labels, one_device
from gpuscale.tables.measures import efficiency, rate_speedup

NO_BASELINE = f"{FlagKind.NO_BASELINE}: no speedup"


def bench_scaling(table: pd.DataFrame) -> pd.DataFrame:
    """The ``ok`` rows of a bench table with ``speedup`` and ``efficiency`` (against the
    plain one-device step where measured; NaN at N = 1) and the one-device throughput it is
    against (``baseline_samples_per_s``), ``speedup_ddp`` and ``baseline``
    columns (NaN where the group has no one-device run), ``ddp_vs_bare`` (N = 1 DDP rows),
    ``fsdp_vs_bare`` (N = 1 FSDP rows) and
    ``platform``, flags updated, sorted by model size, configuration (numbers in it read as
    numbers) and device count."""
    ok = table[table["status"] == BenchStatus.OK].copy()
    if ok.empty:
        return ok.assign(
            speedup=pd.Series(dtype=float),
            efficiency=pd.Series(dtype=float),
            baseline_samples_per_s=pd.Series(dtype=float),
            speedup_ddp=pd.Series(dtype=float),
            speedup_fsdp=pd.Series(dtype=float),
            ddp_vs_bare=pd.Series(dtype=float),
            fsdp_vs_bare=pd.Series(dtype=float),
            platform=pd.Series(dtype=str),
            baseline=pd.Series(dtype=str),
            configuration=pd.Series(dtype=str),
        )
    samples = ok["batch_per_device"].astype(float) * ok["accum"].astype(float)
    ok["plain_samples_per_s"] = samples / (ok["plain_step_ms_mean"].astype(float) / 1e3)
    ddp = one_device(ok, "samples_per_s")
    plain = one_device(ok, "plain_samples_per_s")
    ok = ok.drop(columns="plain_samples_per_s")
    fsdp = ok["strategy"] == "fsdp"
    # an FSDP run's plain step is the bare module only where it ran faster than FSDP's
    # step: an older bench timed the sharded module as "plain" (about FSDP's step)
    bare = plain.where(~fsdp | (plain > ddp))
    base = bare.where(bare > 0, ddp)
    multi = ok["accelerators"] > 1  # at N = 1 a "speedup" over one device is no speedup
    ok["speedup"] = rate_speedup(ok["samples_per_s"], base).where(multi)
    ok["baseline_samples_per_s"] = base.where(multi)  # what the speedup divides by
    ok["efficiency"] = efficiency(ok["speedup"], ok["accelerators"])
    # against the wrapped N = 1 step, and what the wrapper costs on one device (its
    # one-rank throughput over the bare module's), each in the column of the strategy the
    # row ran (an FSDP run's is no DDP wrapper's)
    wrapped_speedup = rate_speedup(ok["samples_per_s"], ddp)
    ok["speedup_ddp"] = wrapped_speedup.where(~fsdp)
    ok["speedup_fsdp"] = wrapped_speedup.where(fsdp)
    vs_bare = rate_speedup(ok["samples_per_s"], plain.where(plain > 0)).where(~multi)
    ok["ddp_vs_bare"] = vs_bare.where(~fsdp)
    ok["fsdp_vs_bare"] = vs_bare.where(fsdp)
    ok["platform"] = platform_labels(ok)
    # the wrapped step of the strategy the group ran (an FSDP group's is FSDP's, no DDP's)
    wrapped = np.where(fsdp, "FSDP N = 1", "DDP N = 1")
    ok["baseline"] = np.where(bare > 0, "plain N = 1 step", np.where(ddp > 0, wrapped, ""))
    # at N = 1 the bench table flagged DDP's one-rank step against the plain step, and
    # each N > 1 row whose N = 1 run is flagged (bench.baselines)
    extra = [
        _efficiency_flag(e, n, b)
        for e, n, b in zip(ok["efficiency"], ok["accelerators"], base, strict=True)
    ]
    ok["flags"] = ["; ".join(filter(None, [f, x])) for f, x in zip(ok["flags"], extra, strict=True)]
    ok["flag_kinds"] = ok["flags"].map(flag_kinds)
    ok["flagged"] = ok["flags"].str.len() > 0
    ok["configuration"] = configuration_labels(ok)  # two precisions of a model: two labels
    # numbers in labels read as numbers: batch 1, 8, 64, 256 (not 1, 256, 64, 8)
    order = {label: k for k, label in enumerate(sorted(set(ok["configuration"]), key=_natural))}
    ok["_order"] = ok["configuration"].map(order)
    ordered = ok.sort_values(["params", "_order", "accelerators"], kind="stable")
    return ordered.drop(columns="_order").reset_index(drop=True)


def _efficiency_flag(efficiency: float, accelerators: int, baseline: float) -> str | None:
    """The flag a run's efficiency earns past the bench table's own: no baseline to
    measure it against, or (N > 1) one that cannot be true."""
    if pd.isna(baseline):
        return NO_BASELINE
    if accelerators > 1:
        return superlinear_flag(efficiency, int(accelerators))
    return None


def _natural(label: str) -> list[tuple[int, float, str]]:
    """A sort key reading the runs of digits of ``label`` as numbers."""
    return [
        (0, float(part), "") if part.isdigit() else (1, 0.0, part)
        for part in re.split(r"(\d+)", label)
        if part
    ]


def platform_labels(frame: pd.DataFrame) -> pd.Series:
    """What each run ran on, device and backend: ``NVIDIA H100 80GB HBM3, nccl``, or
    ``CPU processes, gloo`` (a CPU run's processes are its "devices")."""
    names = frame.get("device_name", pd.Series(None, frame.index, dtype=object))
    cpu = frame["device"].astype(str).str.lower().eq("cpu")
    named = names.where(names.notna() & (names.astype(str) != ""), frame["device"]).astype(str)
    return named.where(~cpu, "CPU processes") + ", " + frame["backend"].astype(str)


def trusted(scaling: pd.DataFrame) -> pd.DataFrame:
    """The rows without flags: what advice and findings may use."""
    return scaling[~scaling["flagged"].astype(bool)]


def break_even_params(
    scaling: pd.DataFrame,
    accelerators: int = 2,
    speedup: float = 1.0,
    *,
    read: pd.Index | None = None,
) -> float | None:
    """Parameters at which the speedup on ``accelerators`` devices reaches ``speedup``.

    None when no model crosses it (all faster, all slower, or no such runs). With several
    families the smallest crossing is returned. Flagged rows are left out, except those
    labelled in ``read`` (the flagged runs an advice reads, which the report's findings
    count beside the unflagged ones).
    """
    flagged = scaling["flagged"].astype(bool)
    rows = scaling[~flagged | scaling.index.isin(read if read is not None else [])]
    rows = rows[rows["accelerators"] == accelerators].dropna(subset=["speedup"])
    crossings = []
    for _, family in rows.groupby("family"):
        ordered = family.sort_values("params")
        params = ordered["params"].to_numpy(float)
        values = ordered["speedup"].to_numpy(float)
        for i in range(1, len(params)):
            if values[i - 1] < speedup <= values[i]:
                fraction = (speedup - values[i - 1]) / (values[i] - values[i - 1])
                log_p = math.log10(params[i - 1]) + fraction * (
                    math.log10(params[i]) - math.log10(params[i - 1])
                )
                crossings.append(float(10**log_p))
                break
    return min(crossings, default=None)


# The one-device steps a measured speedup divides by: "nosync", DDP's N = 1 step less its
# own work (synchronised minus no-sync step), the step the prediction's N = 1 row models for a
# DDP bench; "ddp", DDP's whole N = 1 step (no no-sync step timed: none is left out);
# "bare", the bench's bare module; "fsdp", FSDP's N = 1 step (no faster bare module timed).
SPEEDUP_BASES = ("nosync", "ddp", "bare", "fsdp")


def speedups_as_predicted(scaling: pd.DataFrame) -> pd.DataFrame:
    """Each row's throughput speedup (``speedup``) against the one-device step the
    advice's prediction models at N = 1, and which step that is (``basis``, one of
    :data:`SPEEDUP_BASES`). A DDP bench is predicted from DDP's N = 1 step less DDP's own
    work, its ``ddp_overhead_ms`` (``advice.calibrate.calibration.single``): against that
    step, ``speedup_ddp x (step - own) / step``; with none recorded, against DDP's whole
    step (``speedup_ddp``). An FSDP bench is predicted from the bare module where one ran
    faster, else FSDP's step: the bench table's ``speedup`` and its ``baseline``."""
    one_step = one_device(scaling, "step_ms_mean").astype(float)
    one_own = pd.Series(0.0, index=scaling.index)
    if "ddp_overhead_ms" in scaling:
        one_own = one_device(scaling, "ddp_overhead_ms").astype(float).fillna(0.0)
    ddp = scaling["strategy"] != "fsdp"
    nosync = ddp & (one_own > 0) & (one_step > one_own)
    ratio = ((one_step - one_own) / one_step).where(nosync, 1.0)
    wrapped = scaling["speedup_ddp"].astype(float) * ratio
    bare = scaling["baseline"] == "plain N = 1 step"
    return pd.DataFrame(
        {
            "speedup": wrapped.where(ddp, scaling["speedup"].astype(float)),
            "basis": np.where(
                nosync, "nosync", np.where(ddp, "ddp", np.where(bare, "bare", "fsdp"))
            ),
        },
        index=scaling.index,
    )
