"""Reading the bench table (one row per run of ``gpuscale bench``): each row's one-device
run, how its configuration is labelled and grouped, and the host it ran on. Its columns
and dtypes are ``gpuscale.tables.bench_schema`` (importable from here too)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from gpuscale.tables.bench_schema import (
    BENCH_COLUMNS,
    BENCH_CONFIG_COLUMNS,
    BENCH_GROUP_COLUMNS,
    BENCH_SCHEMA,
    BENCH_TIMING_COLUMNS,
    COLLECTIVES_COLUMNS,
    BenchStatus,
)

if TYPE_CHECKING:  # pandas only when tables are built: the CLI starts without it
    import pandas as pd

T = TypeVar("T")

__all__ = [
    "BATCH_PART",
    "BENCH_COLUMNS",
    "BENCH_CONFIG_COLUMNS",
    "BENCH_GROUP_COLUMNS",
    "BENCH_SCHEMA",
    "BENCH_TIMING_COLUMNS",
    "COLLECTIVES_COLUMNS",
    "BenchStatus",
    "cell",
    "configuration_labels",
    "differing_fields",
    "group_and_batch",
    "most_host_devices",
    "on_a_larger_host",
    "one_device",
]


def cell(row: pd.Series, column: str, cast: Callable[..., T], default: T | None = None) -> T | None:
    """A bench row's ``column`` as ``cast`` makes it, or ``default`` where the row has none
    (missing, None, NaN: a field an older gpuscale did not record, a run without it)."""
    import pandas as pd  # the CLI starts without pandas

    value = row.get(column)
    if pd.isna(value):
        return default
    return cast(value)


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


# DDP's own settings: an FSDP run does not use them (``--grad-comm`` is refused with
# fsdp; its buckets are its own), so its label never names them.
_DDP_ONLY = ("bucket_mb", "grad_comm")


def _differ(rows: pd.DataFrame) -> list[str]:
    """Of one model's rows (``_label_fields``), the fields whose values differ: DDP's
    own settings among its DDP rows only."""
    ddp = rows[rows["strategy"] != "fsdp"]
    return [
        c
        for c in rows.columns
        if c != "model" and (ddp if c in _DDP_ONLY else rows)[c].nunique() > 1
    ]


def differing_fields(frame: pd.DataFrame) -> list[str]:
    """The configuration fields (``_LABEL``'s names: ``batch``, ``precision``...) that
    differ between rows of one model: what :func:`configuration_labels` names."""
    if frame.empty:
        return []
    fields = _label_fields(frame)
    differ = {c for _, rows in fields.groupby(frame["model"].astype(str)) for c in _differ(rows)}
    return [c for c in fields.columns if c in differ]


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
        differ = _differ(rows)
        for index, row in rows.iterrows():
            said = [
                _LABEL.get(c, c + " {}").format(row[c], s="" if row[c] == "1" else "s")
                for c in differ
                if not (c in _DDP_ONLY and row["strategy"] == "fsdp")
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
