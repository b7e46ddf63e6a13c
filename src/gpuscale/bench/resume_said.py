"""What ``bench --resume`` does with the runs a results file already holds, in words:
the runs it keeps (ok and unflagged, and which of them are weak evidence), those it
measures again and why (flagged, with the kinds of flag, or failed, with the status), and
those missing; said before the sweep and on each progress line of a run measured again,
so that ``started mlp-0.2m x1`` says why a run the file held is measured again (say,
flagged "noisy synchronised steps").

Which rows are measured well is ``kept_and_again``'s one rule (``results.done_keys``
reads it): an ``ok`` row without flags, or whose only flag is that no N = 1 run is
there, which measuring again would not mend."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import pandas as pd

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.evidence import labels
from gpuscale.bench.row_keys import run_key
from gpuscale.plausibility import FlagKind
from gpuscale.quantities import counted, filled, joined
from gpuscale.tables import BenchStatus


class Sweep(Protocol):
    """What keys a sweep's runs (``runner.SweepConfig`` has it; not imported: the runner
    reads the results file, which reads this module)."""

    bench: BenchConfig
    models: tuple[str, ...]
    nproc: tuple[int, ...]
    nnodes: int


FLAGGED, FAILED = "flagged", "failed"


Again = dict[str, tuple[str, tuple[str, ...]]]  # key -> (flagged/failed, why: kinds/status)


def kept_and_again(table: pd.DataFrame) -> tuple[set[str], Again]:
    """(the keys measured well, key -> (``flagged``/``failed``, why) for each other key
    with a row: the latest row's flag kinds or status) of a bench table."""
    if table.empty:
        return set(), {}
    ok = table["status"] == BenchStatus.OK
    only = {FlagKind.NO_ONE_DEVICE}
    good = [bool(k) and set(f) <= only for k, f in zip(ok, table["flag_kinds"], strict=True)]
    kept = set(table.loc[good, "key"])
    again: Again = {}
    for key, status, kinds in zip(table["key"], table["status"], table["flag_kinds"], strict=True):
        if key in kept:
            continue
        if status == BenchStatus.OK:
            again[key] = (FLAGGED, tuple(kinds))
        else:
            again[key] = (FAILED, (str(status),))
    return kept, again


def weak_kept(table: pd.DataFrame, kept: set[str]) -> dict[str, tuple[str, ...]]:
    """Each kept key whose latest row is weak evidence (``bench.evidence``: few steps
    timed, steps spread, busy share not measured) -> its kinds of weakness, in short: kept
    all the same (ok and unflagged), and said beside the runs kept."""
    if table.empty:
        return {}
    latest = table.drop_duplicates("key", keep="last")
    weak = zip(latest["key"], latest["evidence_kinds"], strict=True)
    return {key: tuple(labels([kinds])) for key, kinds in weak if key in kept and kinds}


def run_fields(cfg: Sweep, world: int, device: str) -> dict[str, object]:
    """The fields a sweep (``cfg``, a ``runner.SweepConfig``) keys a run at ``world``
    devices by besides its model (``run_key``): one rule for the keys its ranks write,
    the rows the runner writes for them, and the runs ``--resume`` plans (``threads``: on
    CPUs; the key and the row say 0 on GPUs)."""
    threads = cfg.bench.resolved_threads(max(cfg.nproc))
    return {"accelerators": world, "nnodes": cfg.nnodes, "device": device, "threads": threads}


def planned_keys(cfg: Sweep, sizes: dict[str, int], device: str) -> list[str]:
    """The key of every run a sweep (``cfg``, a ``runner.SweepConfig``) plans on
    ``device`` (``cuda``/``cpu``), as its ranks key them (``run_key``)."""
    bench: BenchConfig = cfg.bench
    return [
        run_key(
            bench,
            model=model,
            params=sizes.get(model),
            **run_fields(cfg, per_node * cfg.nnodes, device),
        )
        for per_node in cfg.nproc
        for model in cfg.models
    ]


def resume_sentence(
    planned: Sequence[str],
    kept: set[str],
    again: Again,
    weak: dict[str, tuple[str, ...]] | None = None,
) -> str:
    """``--resume: 2 runs kept (ok and unflagged; 1 of them weak evidence: few steps
    timed), 2 flagged runs measured again (noisy synchronised steps), 2 missing``: the
    sweep's planned runs as the results file holds them (``weak``: :func:`weak_kept`)."""
    kept_n = sum(1 for k in planned if k in kept)
    shaky = [(weak or {})[k] for k in planned if k in kept and (weak or {}).get(k)]
    why = joined(dict.fromkeys(w for kinds in shaky for w in kinds))
    more = filled(f"; {len(shaky)} of them weak evidence: {{}}", why)
    parts = [f"{counted(kept_n, 'run')} kept (ok and unflagged{more})"]
    for kind in (FLAGGED, FAILED):
        whys = [again[k][1] for k in planned if k not in kept and again.get(k, ("",))[0] == kind]
        if whys:
            kinds = joined(dict.fromkeys(w for why in whys for w in why))
            parts.append(f"{counted(len(whys), f'{kind} run')} measured again ({kinds})")
    missing = sum(1 for k in planned if k not in kept and k not in again)
    parts.append(f"{missing} missing")
    return "--resume: " + ", ".join(parts)


def again_note(why: tuple[str, tuple[str, ...]] | None) -> str:
    """`` (again: flagged noisy synchronised steps)`` for a run measured again, else ``""``."""
    if why is None:
        return ""
    kind, reasons = why
    return f" (again: {kind}{filled(', {}', joined(reasons))})"
