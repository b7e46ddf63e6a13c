"""The bench table: a results file's records as rows of ``gpuscale.tables.BENCH_COLUMNS``
(:func:`bench_table`), with what each run derives from its configuration's one-device run,
and why runs are flagged (:func:`flag_summary`). Reading the file is ``bench.results``'s;
nothing here imports torch.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuscale.bench.baselines import baseline_flags, one_rank_flags, with_flags
from gpuscale.bench.config import tf32_mode
from gpuscale.bench.evidence import grade
from gpuscale.bench.record import conv_share
from gpuscale.bench.row_keys import fields_of_key
from gpuscale.plausibility import (
    NOISY_KINDS,
    FlagKind,
    cpu_use,
    energy_meter_flag,
    flag_kinds,
    flag_reasons,
    kind_of,
    loss_flags,
    measured_host,
    peak_flags,
    queued_share,
    run_flags,
    samples_flags,
    too_few_for_noise,
)
from gpuscale.quantities import counted
from gpuscale.tables import BENCH_COLUMNS, BENCH_GROUP_COLUMNS, BenchStatus, frame_of
from gpuscale.tables.bench import BATCH_PART, BENCH_SCHEMA, one_device

if TYPE_CHECKING:
    import pandas as pd

# The flag of a run at N > 1 whose configuration has no N = 1 run.
NO_ONE_DEVICE = f"{FlagKind.NO_ONE_DEVICE}: exposed communication includes DDP's own overhead"


def _host_devices(record: dict[str, object]) -> int | None:
    """The GPUs the run's host had, as its topology listed them (None on a CPU, or where
    the record holds no topology)."""
    topology = (record.get("environment") or {}).get("topology")
    if isinstance(topology, dict) and isinstance(topology.get("gpus"), list):
        return len(topology["gpus"]) or None
    return None


def _host_link(record: dict[str, object]) -> str:
    """The link preset of the run's host as its topology recorded it: the slowest GPU
    pair's, else (one GPU seen) its NVLink generation unless the GPU is a PCIe card (whose
    NVLink is an optional bridge); empty on a CPU, or where the record holds neither."""
    environment = record.get("environment") or {}
    topology = environment.get("topology")
    if not isinstance(topology, dict):
        return ""
    preset, generation = topology.get("preset"), topology.get("nvlink_generation")
    if isinstance(preset, str) and preset:
        return preset
    pcie_card = "pcie" in str(environment.get("device_name") or "").lower()
    return generation if isinstance(generation, str) and not pcie_card else ""


def _cores(record: dict[str, object], field: str = "cpu_count") -> int | None:
    """The CPU cores of the run's host its CPU affinity allowed (``os.cpu_count()`` less those
    a Slurm job's cpuset left out; ``cpu_total``: all), None where not recorded."""
    cores = (record.get("environment") or {}).get(field)
    return cores if isinstance(cores, int) and not isinstance(cores, bool) and cores > 0 else None


def _number(value: object, missing: float | None = math.nan) -> float | None:
    """A field's number as a float; ``missing`` where it holds none (a text, a bool)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return missing


# What the key says the run used: it wins over the row's config (rows written before
# the config recorded resolved values said ``threads`` 0 and the option's global batch).
_KEY_NUMBERS = ("threads", "batch_per_device", "global_batch")


def _config(r: dict[str, object]) -> dict[str, object]:
    config = dict(r["config"])
    named = fields_of_key(r["key"])
    for name in _KEY_NUMBERS:
        if re.fullmatch(r"[0-9]{1,15}", named.get(name, "")):
            config[name] = int(named[name])
    if named.get("backend") in ("gloo", "nccl"):
        config["backend"] = named["backend"]
    config["tf32"] = tf32_mode(config.get("tf32"))  # older rows: true / false
    return config


def _repeat(r: dict[str, object], config: dict[str, object]) -> int:
    """The runs of ``--repeat`` the row is the median of: the key's count where it names
    one (a key names every count over 1), else the config's, else 1."""
    named = fields_of_key(r["key"]).get("repeat", "")
    if re.fullmatch(r"[0-9]{1,15}", named):
        return int(named)
    count = config.get("repeat")
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 1


def _implied(flops: dict, timing: dict, config: dict) -> float:
    """TFLOP/s per device as the bench computes the rate it records (``bench.summary``):
    FLOPs per sample x samples/s / devices; NaN where any is missing."""
    per_sample, rate = _number(flops.get("per_sample")), _number(timing.get("samples_per_s"))
    devices = _number(config.get("accelerators", config.get("world_size")))
    if not devices or devices <= 0:
        return math.nan
    return per_sample * rate / devices / 1e12


def _fastest(*rates: float | None) -> float:
    """The largest of ``rates`` that is a number (NaN where none is)."""
    known = [r for r in rates if r is not None and not math.isnan(r)]
    return max(known, default=math.nan)


def _peak_and_mfu(
    r: dict[str, object], config: dict[str, object], flops: dict[str, object]
) -> dict[str, float]:
    """The peak and MFU the run recorded; where it recorded none on a GPU whose peak
    the device catalogue now knows (an L4 or A10 benched before their peaks were added),
    the peak and MFU read from it as the bench would have recorded them."""
    peak, mfu = _number(flops.get("peak_tflops")), _number(flops.get("mfu"))
    achieved = _number(flops.get("achieved_tflops_per_device"))
    if not math.isnan(peak) or config.get("device") != "cuda":
        return {"peak_tflops": peak, "mfu": mfu}
    from gpuscale.hardware.peaks import peak_at  # lazy: only rows without a peak

    name = (r.get("environment") or {}).get("device_name")
    tf32 = config.get("tf32", False)
    peak = peak_at(name, str(config.get("precision")), tf32, conv_share(flops))
    if peak is None:
        return {"peak_tflops": math.nan, "mfu": math.nan}
    return {"peak_tflops": peak, "mfu": achieved / peak}  # NaN where nothing was achieved


def _merged(stored: Sequence[str], said: Sequence[str] = ()) -> list[str]:
    """A record's ``stored`` flags with those ``said`` now from the same record, one reason
    per kind (``plausibility.kind_of``): a kind said now in today's words, where it stood
    (a flag reworded since the file was written is not counted twice)."""
    now = {kind_of(f): f for f in said}
    merged: dict[str, str] = {}
    for reason in [*stored, *said]:
        merged.setdefault(kind_of(reason), now.get(kind_of(reason), reason))
    return list(merged.values())


def _row(r: dict[str, object]) -> dict[str, object]:
    config, timing = _config(r), r.get("timing") or {}
    nvml, flops = r.get("nvml") or {}, r.get("flops") or {}
    noise, flags = r.get("noise") or {}, list(r.get("flags") or [])
    # shares from a phase too short to measure them are not measured, and the flags rows
    # written before this rule drew from them are taken back (plausibility.measured_host)
    host, unmeasured = measured_host(r.get("host"), timing, config.get("steps"))
    host = host or {}
    taken_back = {kind_of(f) for f in unmeasured}
    # a noisy flag stored on fewer timed steps than its rule now judges (written before
    # plausibility.NOISY_MIN_STEPS) is judged again: taken back, its spread the few-steps
    # weakness it is (``bench.evidence``)
    if too_few_for_noise(config.get("steps")):
        taken_back |= NOISY_KINDS
    flags = _merged([f for f in flags if kind_of(f) not in taken_back])
    achieved = _number(flops.get("achieved_tflops_per_device"))
    peak_mfu = _peak_and_mfu(r, config, flops)
    if r.get("status") == BenchStatus.OK:
        cpu = cpu_use(config, r.get("environment"))
        warmup, strategy = config.get("warmup"), config.get("strategy")
        said = run_flags(
            timing,
            host,
            noise,
            warmup=warmup,
            cpu=cpu,
            strategy=strategy,
            steps=config.get("steps"),
        )
        said += loss_flags(_number(r.get("loss_last"), None))
        said += samples_flags(r.get("data"))  # a global batch that repeats its samples
        # a rate above the peak (an MFU above 1) cannot be measured: the rate recorded, or
        # the one its FLOPs per sample and samples/s give (one edited alone is caught too)
        said += peak_flags(
            _fastest(achieved, _implied(flops, timing, config)), peak_mfu["peak_tflops"]
        )
        # a NaN written unflagged is flagged; one flagged is said once
        flags = _merged(flags, said)
    buckets = (r.get("comm") or {}).get("bucket_bytes") or []
    row = {c: config.get(c) for c in BENCH_COLUMNS if c in config}
    row.update({c: _number(timing.get(c)) for c in BENCH_COLUMNS if c in timing})
    row.update(
        source="bench",
        key=r["key"],
        sweep_id=r.get("sweep_id"),
        status=r.get("status"),
        repeat=_repeat(r, config),
        repeat_samples_per_s=tuple(timing.get("repeat_samples_per_s") or ()),
        device_name=(r.get("environment") or {}).get("device_name", config.get("device")),
        buckets=len(buckets) or None,
        largest_bucket_bytes=max(buckets, default=None),
        flops_per_sample=_number(flops.get("per_sample")),
        achieved_tflops_per_device=achieved,
        **peak_mfu,
        flops_uncounted_ops="; ".join(flops.get("uncounted_ops") or ()),
        grad_bytes_per_step=r.get("grad_bytes_per_step"),
        allreduce_bytes_per_step=r.get("allreduce_bytes_per_step"),
        peak_memory_bytes=(r.get("memory") or {}).get("peak_bytes"),
        device_memory_bytes=(r.get("environment") or {}).get("device_memory_bytes"),
        host_devices=_host_devices(r),
        host_link=_host_link(r),
        host_cpu_count=_cores(r),
        # all the host's cores; "host_cpu_count" is what rows of an interim version named it
        host_cpu_total=_cores(r, "cpu_total") or _cores(r, "host_cpu_count"),
        gpu_util_pct_mean=_number(nvml.get("gpu_util_pct_mean")),
        power_w_mean=_number(nvml.get("power_w_mean")),
        power_w_total=_number(nvml.get("power_w_total")),
        energy_j_per_step=_number(nvml.get("energy_j_per_step")),
        power_dropouts=nvml.get("power_dropouts"),
        power_uncovered_s=_number(nvml.get("power_uncovered_s")),
        energy_flag=energy_meter_flag(nvml.get("power_dropouts"), nvml.get("power_uncovered_s")),
        other_load_share=_number(host.get("other_load_share")),
        steal_share=_number(host.get("steal_share")),
        queued_share=_number(queued_share(host)),
        hostname=(r.get("environment") or {}).get("hostname"),
        error=r.get("error") or "",
        flags="; ".join(flags),
        # rank 0's per-step no-sync times: the jitter behind the straggler term
        nosync_step_ms_samples=tuple(((r.get("per_rank") or {}).get("nosync_step_ms") or [[]])[0]),
        noise_batch_small=noise.get("batch_small"),
        noise_batch_big=noise.get("batch_big"),
        noise_local_sq=tuple(noise.get("local_sq") or ()),
        noise_global_sq=tuple(noise.get("global_sq") or ()),
    )
    return row


def _flag(frame: pd.DataFrame, rows: pd.Series, reason: str) -> None:
    """Add ``reason`` to the ``flags`` of ``rows`` (a boolean mask)."""
    frame.loc[rows, "flags"] = frame.loc[rows, "flags"].map(
        lambda f: "; ".join(filter(None, [f, reason]))
    )


def fsdp_own(frame: pd.DataFrame) -> pd.Series:
    """Per row, FSDP's own per-step work at N = 1 of its group: the larger of the
    synchronised minus no-sync step (the gradients' reduce-scatter and the resharding,
    which no bare module does) and the step less the plain one (``plain_step_ms_mean``),
    at least 0. The plain step of an FSDP run is no bare module: FSDP2's ``fully_shard``
    shards the module in place, so the bench's plain step times the sharded module and
    the step less it is about 0 by construction (tf-30m on an H100: 36.2 ms step, 36.5 ms
    "plain", 26.2 ms no-sync: 10.1 ms of FSDP's work, read as 0 before)."""
    plain = one_device(frame, "step_ms_mean") - one_device(frame, "plain_step_ms_mean")
    gap = one_device(frame, "sync_overhead_ms")
    return plain.clip(lower=gap).fillna(gap).clip(lower=0)  # NaN: the other


def bench_table(records: list[dict[str, object]]) -> pd.DataFrame:
    """One row per record (columns: ``gpuscale.tables.BENCH_COLUMNS``).

    Derived per configuration group (the same run at every world size): at N = 1
    ``ddp_overhead_ms`` is the synchronised minus no-sync step (DDP's bucket copies, no
    communication; for an FSDP group ``fsdp_overhead_ms``, FSDP's own per-step work: the
    larger of its N = 1 synchronised minus no-sync step and its step less the plain one,
    at least 0 (:func:`fsdp_own`), and ``ddp_overhead_ms`` NaN),
    ``exposed_comm_ms`` and ``sync_wait_ms`` 0; at N > 1 the sync overhead less the
    group's N = 1 synchronised minus no-sync step is the communication backward did not hide
    (``exposed_comm_ms``), at most the communication DDP timed (``comm_ms``): the rest is
    ``sync_wait_ms``, waiting for the slowest rank or noise (NaN where no communication was
    timed: the whole of it is then exposed); ``overlap = 1 - exposed / comm`` and
    ``comm_fraction = exposed / step``. Flags: each run's own (``plausibility``), a
    missing or flagged N = 1 baseline's (``bench.baselines``).
    """
    # frame_of loads pandas on first use: the torchrun workers import this module without it
    frame = frame_of(BENCH_SCHEMA, (_row(r) for r in records))
    if frame.empty:
        return frame
    # a whole-number column no run recorded (a CPU host's GPUs, a GPU's memory) is all
    # None, which pandas holds as object: float64 NaN, as the schema has such a column
    for name in (c for c, dtype in BENCH_SCHEMA.items() if dtype == "int"):
        if frame[name].dtype == object and frame[name].isna().all():
            frame[name] = frame[name].astype(float)
    frame["config_group"] = [
        "|".join(map(str, row)) for row in frame[list(BENCH_GROUP_COLUMNS)].itertuples(index=False)
    ]
    # like with like: the batch that stays fixed across N (per device when weak scaling,
    # global when strong) is part of the configuration
    fixed = frame["global_batch"].where(frame["scaling"] == "strong", frame["batch_per_device"])
    frame["config_group"] += BATCH_PART + fixed.astype(str)
    ok = frame["status"] == BenchStatus.OK
    ddp = one_device(frame, "sync_overhead_ms")
    multi = frame["accelerators"] > 1
    own = ddp.where(multi, frame["sync_overhead_ms"]).clip(lower=0)
    # each strategy's own work in its own column: FSDP's gap is no DDP copies
    fsdp = frame["strategy"] == "fsdp"
    frame["ddp_overhead_ms"] = own.where(~fsdp)
    # FSDP's own work: at least its synchronised minus no-sync gap (``fsdp_own``: the
    # plain step of an FSDP run times the sharded module, no bare one)
    frame["fsdp_overhead_ms"] = fsdp_own(frame).where(fsdp)
    beyond = (frame["sync_overhead_ms"] - own.fillna(0)).clip(lower=0)
    comm = frame["comm_ms"]
    timed = multi & (comm > 0)
    # communication backward did not hide cannot exceed the communication there was: the
    # rest of the sync step is waiting for the slowest rank, or noise, in its own column
    exposed = beyond.where(~timed, beyond.clip(upper=comm))
    frame["exposed_comm_ms"] = exposed.where(multi, 0.0)
    frame["sync_wait_ms"] = (beyond - exposed).where(timed).where(multi, 0.0)
    frame.loc[~ok, ["ddp_overhead_ms", "fsdp_overhead_ms", "exposed_comm_ms", "sync_wait_ms"]] = (
        math.nan
    )
    _flag(frame, ok & multi & ddp.isna(), NO_ONE_DEVICE)
    # beyond a margin for jitter, the wait says the step cannot be read as compute plus
    # communication
    _flag(
        frame,
        ok & timed & (beyond > 1.25 * comm + 0.5),
        f"{FlagKind.SYNC_WAIT} by over a quarter and 0.5 ms "
        "(sync_wait_ms, waiting for the slowest rank or noise)",
    )
    frame["overlap"] = (1 - frame["exposed_comm_ms"] / comm).where(timed)
    frame["comm_fraction"] = frame["exposed_comm_ms"] / frame["step_ms_mean"]
    # every N = 1 row's own flags first, then each N > 1 row takes its baseline's
    with_flags(frame, one_rank_flags(frame))
    frame["flag_kinds"] = frame["flags"].map(flag_kinds)  # a baseline's kinds named at N > 1
    with_flags(frame, baseline_flags(frame))
    frame["flag_kinds"] = frame["flags"].map(flag_kinds)
    frame["flagged"] = frame["flags"].astype(str).str.len() > 0
    frame["evidence"], frame["evidence_notes"], frame["evidence_kinds"] = grade(
        frame.to_dict("records")
    )
    return frame[list(BENCH_COLUMNS)]


def flag_summary(table: pd.DataFrame) -> list[tuple[str, int, str]]:
    """Why the ``ok`` runs of a bench table are flagged: (kind, runs, an example reason)
    per :class:`~gpuscale.plausibility.FlagKind` of its ``flag_kinds``, most frequent first."""
    counts: dict[str, tuple[int, str]] = {}  # kind -> (runs, its first reason)
    ok = table[(table["status"] == BenchStatus.OK) & table["flagged"].fillna(False).astype(bool)]
    for flags in ok["flags"]:
        kinds: dict[str, str] = {}  # each kind once a run, with its first reason
        for reason in flag_reasons(flags):
            kinds.setdefault(kind_of(reason), reason)
        for kind, reason in kinds.items():
            runs, first = counts.get(kind, (0, reason))
            counts[kind] = (runs + 1, first)
    return sorted(((k, n, r) for k, (n, r) in counts.items()), key=lambda x: -x[1])


def flags_counted(table: pd.DataFrame) -> str:
    """Each kind of flag of a bench table's ``ok`` runs once, with how many runs it holds
    for (:func:`flag_summary`): ``machine busy (3 runs); noisy steps (1 run)``."""
    return "; ".join(f"{kind} ({counted(n, 'run')})" for kind, n, _ in flag_summary(table))
