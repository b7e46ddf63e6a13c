"""The bench results file: one JSON object per line, appended as each configuration ends.

Schema ``gpuscale.bench/1`` (documented in the README): ``schema``, ``key`` (identifies
the configuration for ``--resume``), ``status`` (``ok``, ``oom``, ``timeout``,
``crashed``, ``error``), ``error``, ``config`` (model, family, params, world_size, nnodes,
backend, device, scaling, batch_per_device, global_batch, precision, bucket_mb, steps,
warmup, threads), ``timing`` (milliseconds; see ``gpuscale.bench.worker``), ``per_rank``,
``grad_bytes_per_step``, ``allreduce_bytes_per_step``, ``memory``, ``nvml``,
``environment`` and ``started_at``/``duration_s``. Nothing here imports torch.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

SCHEMA = "gpuscale.bench/1"
STATUSES = ("ok", "oom", "timeout", "crashed", "error")

# Flat columns of ``bench_table`` (``source`` tells bench rows from MLPerf rows).
# The config and timing fields copied into the flat table, defined once.
CONFIG_FIELDS = (
    "model",
    "family",
    "params",
    "world_size",
    "nnodes",
    "backend",
    "device",
    "scaling",
    "batch_per_device",
    "global_batch",
    "precision",
    "bucket_mb",
    "steps",
)
TIMING_FIELDS = (
    "step_ms_mean",
    "step_ms_p50",
    "step_ms_p95",
    "samples_per_s",
    "forward_ms",
    "backward_ms",
    "optimizer_ms",
    "exposed_comm_ms",
    "nosync_step_ms_mean",
    "comm_fraction",
)
BENCH_COLUMNS: tuple[str, ...] = (
    "source",
    "key",
    "status",
    *CONFIG_FIELDS,
    *TIMING_FIELDS,
    "grad_bytes_per_step",
    "allreduce_bytes_per_step",
    "peak_memory_bytes",
    "gpu_util_pct_mean",
    "power_w_mean",
    "hostname",
    "error",
    "nosync_step_ms_samples",
)


@dataclass(frozen=True, slots=True)
class StepStats:
    """Summary of per-step times in milliseconds (warm-up already dropped)."""

    mean: float
    p50: float
    p95: float

    @classmethod
    def from_values(cls, values_ms: Iterable[float]) -> StepStats:
        array = np.asarray(list(values_ms), dtype=float)
        if array.size == 0:
            raise ValueError("no timed steps")
        return cls(
            mean=float(array.mean()),
            p50=float(np.percentile(array, 50)),
            p95=float(np.percentile(array, 95)),
        )


# What identifies a configuration: its fields less those that follow from the model.
_KEY_FIELDS = tuple(f for f in CONFIG_FIELDS if f not in ("family", "params"))


def config_key(config: dict[str, Any]) -> str:
    """A stable identifier of a configuration (what ``--resume`` compares)."""
    return "|".join(f"{p}={config.get(p)}" for p in _KEY_FIELDS)


def append_result(path: Path, record: dict[str, Any]) -> None:
    """Append one record and flush it to disk, so a crash later loses nothing."""
    record = {"schema": SCHEMA, **record}
    line = json.dumps(record, sort_keys=True, default=str)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")
        handle.flush()
        os.fsync(handle.fileno())


class ResultsError(ValueError):
    """A results file that cannot be used (missing, empty, no valid line)."""


def read_results(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """All records of a results file and a message per line that could not be read."""
    if not path.exists():
        raise ResultsError(f"{path}: no such results file")
    records, problems = [], []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{number}: not JSON ({exc.msg})")
            continue
        if not isinstance(record, dict) or record.get("schema") != SCHEMA:
            problems.append(f"{path}:{number}: not a {SCHEMA} record")
            continue
        records.append(record)
    return records, problems


def done_keys(path: Path, *, include_failed: bool = True) -> set[str]:
    """Keys already in the file (``--resume`` skips them); failures too unless asked."""
    if not path.exists():
        return set()
    records, _ = read_results(path)
    return {r["key"] for r in records if include_failed or r.get("status") == "ok"}


def bench_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """One flat row per record (columns: ``BENCH_COLUMNS``)."""
    rows = []
    for r in records:
        config = r.get("config", {})
        timing = r.get("timing") or {}
        nvml = r.get("nvml") or {}
        rows.append(
            {
                "source": "bench",
                "key": r.get("key"),
                "status": r.get("status"),
                **{c: config.get(c) for c in CONFIG_FIELDS},
                **{c: timing.get(c) for c in TIMING_FIELDS},
                "grad_bytes_per_step": r.get("grad_bytes_per_step"),
                "allreduce_bytes_per_step": r.get("allreduce_bytes_per_step"),
                "peak_memory_bytes": (r.get("memory") or {}).get("peak_bytes"),
                "gpu_util_pct_mean": nvml.get("gpu_util_pct_mean"),
                "power_w_mean": nvml.get("power_w_mean"),
                "hostname": (r.get("environment") or {}).get("hostname"),
                "error": r.get("error", ""),
                # rank 0's per-step compute times: the jitter behind the straggler term
                "nosync_step_ms_samples": tuple(
                    ((r.get("per_rank") or {}).get("nosync_step_ms") or [[]])[0]
                ),
            }
        )
    return pd.DataFrame(rows, columns=list(BENCH_COLUMNS))
