"""Which runs of a bench table share one run's configuration (what a prediction
calibrated on that run may be set beside), and the ``gpuscale bench`` options that run
that configuration again."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from gpuscale.tables.bench import BATCH_PART, BENCH_GROUP_COLUMNS, group_and_batch

if TYPE_CHECKING:  # pandas only when tables are built: the CLI starts without it
    import pandas as pd


def runs_like(
    frame: pd.DataFrame,
    config_group: str,
    device_name: object,
    strategy: str | None = None,
    fields: tuple[str, ...] = BENCH_GROUP_COLUMNS,
) -> pd.Series:
    """Per row of a bench table, whether it ran the configuration of the run whose
    ``config_group`` is given, on its device (``device_name``): the same model, backend,
    device, precision, TF32, strategy (``strategy`` where a prediction is of another
    strategy than the run's), accumulation, buckets, gradient precision, threads and
    scaling; its steps timed and its batch aside (a prediction's rows match the batch:
    ``tables.advice.same_configuration``). What an advice calibrated on that run may be set
    beside: a run of another model, device or configuration measures something else.
    ``fields``: the configuration's fields compared (all but the steps by default; the
    model and the hardware's, for the runs a calibration on the same hardware reads)."""
    import pandas as pd  # lazy: pandas, only where a bench table is read

    # split as each row's group is (a "|" in a model's name shifts both alike)
    parts = config_group.rsplit(BATCH_PART, 1)[0].split("|")
    wanted = dict(zip(BENCH_GROUP_COLUMNS, parts, strict=False))
    if strategy:
        wanted["strategy"] = strategy
    parts_of = group_and_batch(frame["config_group"])[0].str.split("|")
    same = pd.Series(True, index=frame.index)
    for i, column in enumerate(BENCH_GROUP_COLUMNS):
        if column != "steps" and column in wanted and column in fields:
            same &= parts_of.str[i] == wanted[column]
    names = frame.get("device_name", pd.Series(None, index=frame.index, dtype=object))
    device = names.isna() if pd.isna(device_name) else names.astype(object) == device_name
    return same & device


def bench_options(row: pd.Series, batch: bool = True, model: bool = True) -> str:
    """The ``gpuscale bench`` options that run ``row``'s configuration again (a bench
    table's row): ``--models tf-30m --batch 32 --precision bf16 --strategy fsdp`` (a
    model named by its file, ``--model``; without ``model``, its configuration alone); a
    run of another configuration measures something else than the one advised on."""
    name = str(row["model"])  # a shell word: a file path may hold a space
    option = "--model" if ":" in name else "--models"
    more = [f"{option} {shlex.quote(name)}"] * model
    more += [f"--batch {int(row['batch_per_device'])}"] * batch
    more += [f"--accum {int(row['accum'])}"] * (int(row.get("accum") or 1) > 1)
    more += [f"--precision {row['precision']}"] * (str(row.get("precision")) in ("bf16", "fp16"))
    more += ["--tf32"] * (str(row.get("tf32")) == "on")
    more += ["--strategy fsdp"] * (str(row.get("strategy")) == "fsdp")
    if row.get("device") == "cpu":
        threads = _int(row.get("threads"))
        more += ["--backend gloo"] + [f"--threads {threads}"] * bool(threads)
    return " ".join(more)


def _int(value: object) -> int:
    """``value`` as an int, 0 where missing (None, NaN)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0
