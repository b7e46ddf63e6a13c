"""The bench table: one row per run of ``gpuscale bench`` (columns, statuses)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuscale.tables.codes import Code

if TYPE_CHECKING:  # pandas only when tables are built: the CLI starts without it
    import pandas as pd


class BenchStatus(Code):
    """The ``status`` of a bench row."""

    OK = "ok"
    OOM = "oom"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    ERROR = "error"


# How a bench run was configured (``gpuscale.bench.config.BenchConfig`` and the launch).
BENCH_CONFIG_COLUMNS: tuple[str, ...] = (
    "model",
    "family",
    "params",
    "accelerators",
    "nnodes",
    "backend",
    "device",
    "device_name",
    "scaling",
    "batch_per_device",
    "global_batch",
    "accum",
    "precision",
    "tf32",
    "strategy",
    "bucket_mb",
    "grad_comm",
    "steps",
    "threads",
)
# Runs that differ only in the device count (one group per model and configuration):
# speedup and DDP's own overhead are read within a group. The configuration less what
# follows from the model (family, params), the device count, the device's name and the
# batch (which strong scaling splits over the devices).
BENCH_GROUP_COLUMNS: tuple[str, ...] = tuple(
    c
    for c in BENCH_CONFIG_COLUMNS
    if c
    not in (
        "family",
        "params",
        "accelerators",
        "nnodes",
        "device_name",
        "batch_per_device",
        "global_batch",
    )
)
# Milliseconds per optimizer step (the slowest rank's), and throughput.
BENCH_TIMING_COLUMNS: tuple[str, ...] = (
    "step_ms_mean",
    "step_ms_p50",
    "step_ms_p95",
    "nosync_step_ms_mean",
    "plain_step_ms_mean",  # N = 1: the bare module's step, no DDP wrapper
    "small_batch_per_device",  # N = 1: the second batch the bare module was timed at
    "small_batch_step_ms_mean",  # its plain step
    "fixed_ms",  # N = 1: intercept of the plain step against the batch (fixed per-step cost)
    "fixed_ms_low",  # its 80% range, from the steps' standard errors
    "fixed_ms_high",
    "samples_per_s",
    "forward_ms",
    "backward_ms",
    "optimizer_ms",
    "sync_overhead_ms",  # synchronised minus no-sync step
    "comm_ms",  # communication in flight per step (DDP comm hook), N > 1
    "ddp_overhead_ms",  # the group's N = 1 sync overhead: DDP's own work, no communication
    "fsdp_overhead_ms",  # the same for an FSDP group: FSDP's own per-step work (NaN for DDP)
    "exposed_comm_ms",  # sync overhead less DDP's own: communication backward did not hide,
    # at most comm_ms where it was timed
    "sync_wait_ms",  # sync overhead beyond DDP's own and comm_ms: waiting for the slowest
    # rank, or noise (NaN at N > 1 where no communication was timed)
    "overlap",  # 1 - exposed / comm
    "comm_fraction",  # exposed / step
)
BENCH_COLUMNS: tuple[str, ...] = (
    "source",
    "key",
    "sweep_id",  # one `gpuscale bench` invocation: N > 1 is read against its own N = 1
    "status",
    *BENCH_CONFIG_COLUMNS,
    *BENCH_TIMING_COLUMNS,
    "buckets",
    "largest_bucket_bytes",
    "flops_per_sample",  # forward + backward, torch.utils.flop_counter
    "achieved_tflops_per_device",
    "peak_tflops",
    "mfu",
    "flops_uncounted_ops",  # dense ops that ran without a FLOP formula ("; "), not in the count
    "grad_bytes_per_step",
    "allreduce_bytes_per_step",
    "peak_memory_bytes",
    "device_memory_bytes",  # the device's whole memory (torch's total_memory); GPUs only
    "host_devices",  # the GPUs the run's host had (its detected topology); NaN on a CPU
    "host_link",  # the link preset its topology records (bench.table._host_link); "" if none
    "host_cpu_count",  # the CPU cores of the run's host (os.cpu_count() there)
    "gpu_util_pct_mean",
    "power_w_mean",  # per device: power_w_total / accelerators
    "power_w_total",  # measured at this N: every device, every host's package once
    "energy_j_per_step",
    "other_load_share",
    "steal_share",
    "hostname",
    "error",
    "flags",  # why a number cannot be trusted ("; "-separated), empty when none
    "flag_kinds",  # the flags' kinds (plausibility.FlagKind values), a tuple; () when none
    "flagged",
    "evidence",  # ok rows: "strong", "weak" (bench.evidence: steps, spread, busy window)
    # or "flagged" (not trusted: never strong)
    "evidence_notes",  # why weak ("; "-separated; a flagged row's too), empty when strong
    "evidence_kinds",  # the notes' kinds (bench.evidence.Weakness values), a tuple
    "config_group",
    "nosync_step_ms_samples",
    "noise_batch_small",
    "noise_batch_big",
    "noise_local_sq",
    "noise_global_sq",
)


# The bench table's dtypes (pandas names, as the round tables': ``float64`` measurements,
# NaN where a run did not measure them, cast; ``int`` whole numbers as recorded, not cast:
# int64, or float64 with NaN where a row failed before its batch was known (pandas'
# nullable Int64 would carry <NA> into speedup and efficiency); ``str`` text; ``object``
# tuples or values as recorded). ``bench_table`` builds its frame through ``frame_of``, which casts
# the numbers once, so a column stays a number even when no run measured it.
_BENCH_INTEGERS = {
    "params",
    "accelerators",
    "nnodes",
    "batch_per_device",
    "global_batch",
    "accum",
    "steps",
    "threads",
    "buckets",
    "largest_bucket_bytes",
    "grad_bytes_per_step",
    "allreduce_bytes_per_step",
    "peak_memory_bytes",
    "device_memory_bytes",
    "host_devices",
    "host_cpu_count",
    "noise_batch_small",
    "noise_batch_big",
}
_BENCH_FLOATS = {
    *BENCH_TIMING_COLUMNS,
    "bucket_mb",
    "flops_per_sample",
    "achieved_tflops_per_device",
    "peak_tflops",
    "mfu",
    "gpu_util_pct_mean",
    "power_w_mean",
    "power_w_total",
    "energy_j_per_step",
    "other_load_share",
    "steal_share",
}
_BENCH_OBJECTS = {
    "tf32",
    "flagged",
    "flag_kinds",
    "evidence_kinds",
    "nosync_step_ms_samples",
    "noise_local_sq",
    "noise_global_sq",
}
_BENCH_DTYPES = (("int", _BENCH_INTEGERS), ("float64", _BENCH_FLOATS), ("object", _BENCH_OBJECTS))
BENCH_SCHEMA: dict[str, str] = {
    c: next((dtype for dtype, kind in _BENCH_DTYPES if c in kind), "str") for c in BENCH_COLUMNS
}


# One row per collective, size and placement of a ``gpuscale collectives`` sweep; the
# names an nccl-tests user knows, units in the names.
COLLECTIVES_COLUMNS: tuple[str, ...] = (
    "sweep_id",
    "op",
    "placement",
    "status",
    "size_bytes",
    "count",
    "dtype",
    "redop",
    "root",
    "ranks",
    "time_us",
    "time_us_max",
    "time_us_p50",
    "time_us_p99",
    "algbw_gbs",
    "busbw_gbs",
    "wrong",
    "load",
    "gap_ms",
    "error",
)


def one_device(frame: pd.DataFrame, column: str) -> pd.Series:
    """Per row, ``column`` of the N = 1 ``ok`` run it is read against: of the same
    configuration group and the same sweep (measured in the same ``gpuscale bench``
    call), else the group's latest. A re-run into the same file is thus compared with
    itself, never with another sweep's one-device run on a differently loaded host."""
    import pandas as pd  # the CLI starts without pandas

    single = frame[(frame["status"] == BenchStatus.OK) & (frame["accelerators"] == 1)]
    latest = single.drop_duplicates("config_group", keep="last").set_index("config_group")
    fallback = frame["config_group"].map(latest[column])
    same = single.dropna(subset=["sweep_id"]).drop_duplicates(
        ["config_group", "sweep_id"], keep="last"
    )
    paired = pd.MultiIndex.from_frame(frame[["config_group", "sweep_id"]])
    found = same.set_index(["config_group", "sweep_id"])[column].reindex(paired)
    return pd.Series(found.to_numpy(), index=frame.index).fillna(fallback)


# How a configuration field reads in a label (``tf-30m (bf16)``, ``tf-7m (accum 4)``);
# ``{s}``: the plural's "s", none after a count of one ("1 thread").
_LABEL = {
    "precision": "{}",
    "tf32": "TF32 {}",
    "strategy": "{}",
    "accum": "accum {}",
    "scaling": "{} scaling",
    "grad_comm": "{} gradients",
    "bucket_mb": "buckets {} MiB",
    "backend": "{}",
    "device": "{}",
    "threads": "{} thread{s}",
    "steps": "{} step{s}",
    "batch": "batch {}",
    "params": "{} param{s}",
}


# How a configuration group ends: the batch that strong scaling fixes, after the fields.
BATCH_PART = "|batch="


def group_and_batch(groups: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Each ``config_group`` split into the configuration without its batch, and the batch
    (text): runs of one configuration at other batches share the first."""
    parts = groups.astype(str).str.rsplit(BATCH_PART, n=1)
    return parts.str[0], parts.str[-1]


def most_host_devices(frame: pd.DataFrame) -> int | None:
    """The most GPUs a host of a bench table's runs had (``host_devices``); None where no
    run says (CPU processes), or the table is an earlier gpuscale's without the column."""
    import pandas as pd  # lazy: pandas, only where a bench table is read

    if "host_devices" not in frame:
        return None
    known = pd.to_numeric(frame["host_devices"], errors="coerce").dropna()
    return int(known.max()) if len(known) else None


def on_a_larger_host(devices: int, host_devices: int | None) -> str:
    """`` on a host of N or more devices, where the bench's had 1`` where a measurement at
    ``devices`` cannot run on the bench's host (``host_devices`` GPUs; None: unknown, or
    CPU processes, which any host runs); else ""."""
    if host_devices is None or devices <= host_devices:
        return ""
    return f" on a host of {devices} or more devices, where the bench's had {host_devices}"


def _label_fields(frame: pd.DataFrame) -> pd.DataFrame:
    """Per row, the configuration fields a label may name (``_LABEL``'s), as text."""
    import pandas as pd  # lazy: pandas, only where a bench table is built

    groups = frame["config_group"].astype(str)
    fields = pd.DataFrame(
        {name: groups.str.split("|").str[i] for i, name in enumerate(BENCH_GROUP_COLUMNS)},
        index=frame.index,
    )
    fields["batch"] = group_and_batch(groups)[1]
    # one spec, two models (tiny.py:make of two folders): told apart by their size
    fields["params"] = frame["params"].astype(str)
    return fields


def differing_fields(frame: pd.DataFrame) -> list[str]:
    """The configuration fields (``_LABEL``'s names: ``batch``, ``precision``...) that
    differ between rows of one model: what :func:`configuration_labels` names."""
    if frame.empty:
        return []
    fields = _label_fields(frame)
    return [
        c
        for c in fields.columns
        if c != "model" and (fields.groupby(frame["model"].astype(str))[c].nunique() > 1).any()
    ]


def configuration_labels(frame: pd.DataFrame) -> pd.Series:
    """One label per row that tells configurations apart: the model, and where the
    frame holds it in several configurations the fields that differ (``tf-30m (bf16)``
    and ``tf-30m (fp32)``), and where one configuration ran in more than one sweep (a
    second ``gpuscale bench`` into the same file) and measured a device count again the
    run, ``tf-7m (run 2)``, k counted in file order and the same at every device count of
    that sweep (a sweep that measured only counts the earlier one lacks, as ``--resume``
    after an interruption does, completes it: no new run). A configuration
    measured twice at one device count within a sweep (rows without a sweep id) is
    another run too, so no table or figure puts two rows on one label."""
    import pandas as pd  # lazy: pandas, only where a bench table is built

    if frame.empty:
        return pd.Series([], index=frame.index, dtype=str)
    fields = _label_fields(frame)
    labels = frame["model"].astype(str).copy()
    for model, rows in fields.groupby(frame["model"], sort=False):
        differ = [c for c in fields.columns if c != "model" and rows[c].nunique() > 1]
        for index, row in rows.iterrows():
            said = [
                _LABEL.get(c, c + " {}").format(row[c], s="" if row[c] == "1" else "s")
                for c in differ
            ]
            if said:
                labels[index] = f"{model} ({', '.join(said)})"
    # A run: the sweep, and the how-manieth time within it the row's device count recurs.
    sweep = frame.get("sweep_id", pd.Series(None, frame.index, dtype=object))
    sweep = sweep.astype(object).where(sweep.notna(), "").astype(str)  # no id: one sweep
    again = frame.groupby([labels, sweep, frame["accelerators"]], sort=False).cumcount()
    run_id = sweep + "#" + again.astype(str)
    number = pd.Series(1, index=frame.index)
    for _, rows in run_id.groupby(labels, sort=False):
        _number_runs(rows, frame["accelerators"], number)
    runs = number.groupby(labels, sort=False).transform("max")
    return labels.where(runs == 1, labels + " (run " + number.astype(str) + ")")


def _number_runs(run_ids: pd.Series, accelerators: pd.Series, number: pd.Series) -> None:
    """Into ``number``: each run of one label (its rows' ``run_ids``, in file order) the
    first run number none of whose device counts it repeats. A ``--resume`` that measures
    the counts an interrupted sweep did not reach completes that run (no new label); a
    sweep that measures a count again is the next run."""
    used: dict[int, set[int]] = {}
    for _, rows in run_ids.groupby(run_ids, sort=False):
        counts = set(accelerators[rows.index])
        k = 1
        while used.get(k, set()) & counts:
            k += 1
        used.setdefault(k, set()).update(counts)
        number[rows.index] = k
