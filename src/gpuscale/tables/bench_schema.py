"""The bench table's schema: one row per run of ``gpuscale bench`` (its columns, their
dtypes, a run's statuses)."""

from __future__ import annotations

from gpuscale.tables.codes import Code


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
# ``--repeat K``: the runs of one configuration, of which the row is the run of median
# throughput (``bench.summary.median_run``). Not a grouping column: the median run of
# K measures the same configuration as one run.
BENCH_REPEAT_COLUMNS: tuple[str, ...] = (
    "repeat",  # runs of the configuration (K; 1 where the run was not repeated)
    "repeat_samples_per_s",  # every run's throughput, a tuple; () where not repeated
    "repeat_spread",  # (max - min) / median of those; NaN where not repeated
)
# Columns added to the bench table after its first version: a table kept from before
# lacks them, and is read all the same (each has a default where absent).
BENCH_LATER_COLUMNS: tuple[str, ...] = (
    "host_devices",
    "host_link",
    "host_cpu_count",
    "host_cpu_total",
    "fsdp_overhead_ms",
    *BENCH_REPEAT_COLUMNS,
    "power_dropouts",
    "power_uncovered_s",
    "energy_flag",
)
BENCH_COLUMNS: tuple[str, ...] = (
    "source",
    "key",
    "sweep_id",  # one `gpuscale bench` invocation: N > 1 is read against its own N = 1
    "status",
    *BENCH_CONFIG_COLUMNS,
    *BENCH_TIMING_COLUMNS,
    *BENCH_REPEAT_COLUMNS,
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
    "host_cpu_count",  # the run's host's CPU cores its CPU affinity allowed
    "host_cpu_total",  # the host's CPU cores, the affinity aside (NaN: not recorded)
    "gpu_util_pct_mean",
    "power_w_mean",  # per device: power_w_total / accelerators
    "power_w_total",  # measured at this N: every device, every host's package once
    "energy_j_per_step",
    "power_dropouts",  # the meter's readings at ~0 W, failed or missing (NaN: not recorded)
    "power_uncovered_s",  # seconds of the timed phase no power reading covered
    # why the energy and power are no measurement (plausibility.energy_meter_flag), "" when
    # they are: kept in the table, left out of the advice's energy and cost
    "energy_flag",
    "other_load_share",
    "steal_share",
    # the share of its ready time the step thread of its most-waiting rank waited for a
    # core (plausibility.queued_share; NaN: not recorded)
    "queued_share",
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
    "repeat",
    "buckets",
    "largest_bucket_bytes",
    "grad_bytes_per_step",
    "allreduce_bytes_per_step",
    "peak_memory_bytes",
    "device_memory_bytes",
    "host_devices",
    "host_cpu_count",
    "host_cpu_total",
    "noise_batch_small",
    "noise_batch_big",
    "power_dropouts",
}
_BENCH_FLOATS = {
    *BENCH_TIMING_COLUMNS,
    "repeat_spread",
    "bucket_mb",
    "flops_per_sample",
    "achieved_tflops_per_device",
    "peak_tflops",
    "mfu",
    "gpu_util_pct_mean",
    "power_w_mean",
    "power_w_total",
    "energy_j_per_step",
    "power_uncovered_s",
    "other_load_share",
    "steal_share",
    "queued_share",
}
_BENCH_OBJECTS = {
    "tf32",
    "flagged",
    "flag_kinds",
    "evidence_kinds",
    "repeat_samples_per_s",
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
