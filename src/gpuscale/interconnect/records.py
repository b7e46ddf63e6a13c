"""Collectives sweeps as records: reading a ``gpuscale collectives`` results file, and the
curves the advice reads off it (:func:`read_collectives`).

Each sweep is a ``sweep`` header row (id, time, ranks, backend, device, versions, NCCL
environment, topology, what NCCL said it chose) followed by its ``result`` rows (one per
collective, size and placement). Files of the earlier ``gpuscale.collectives/1`` format
(results without a sweep) are read as one sweep each run of rows. Lines that are not
records are skipped and reported, and so are result rows whose numbers cannot be
measurements (text, a negative time: :func:`bad_number`) and sweep headers whose ranks,
nodes or settings no sweep writes (:func:`bad_header`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from gpuscale.interconnect.measured import CurveRead, MeasuredCurves
from gpuscale.interconnect.network import CommCurve
from gpuscale.plausibility import NOISY_P95_OVER_P50
from gpuscale.quantities import counted, joined
from gpuscale.sizes import number_or_none
from gpuscale.sources.bounded import BENCH_FILE, TooLarge, json_lines, schema_of
from gpuscale.tables import COLLECTIVES_COLUMNS
from gpuscale.tables.commands import quoted_path, suggested_command
from gpuscale.tables.json_depth import JSON
from gpuscale.tables.requests import NamedError, ref
from gpuscale.tables.round_requests import round_hint

SCHEMAS = ("gpuscale.collectives/1", "gpuscale.collectives/2")
COLLECTIVES_PREFIX = "gpuscale.collectives/"  # every version's schema begins so


@dataclass
class Sweeps:
    """Every sweep of a file, oldest first: headers by id, and the results table."""

    headers: dict[str, dict[str, JSON]] = field(default_factory=dict)
    results: pd.DataFrame = field(  # COLLECTIVES_COLUMNS
        default_factory=lambda: pd.DataFrame(columns=list(COLLECTIVES_COLUMNS))
    )
    problems: list[str] = field(default_factory=list)
    # the first line's schema ("" when it names none; None: no line): what the file holds
    first_schema: str | None = None
    # where in ``problems`` the rows skipped for a number no measurement gives (results)
    # or a field no sweep writes so (headers: :func:`bad_header`) are
    bad_at: list[int] = field(default_factory=list)

    @property
    def bad_rows(self) -> list[str]:
        """Of ``problems``, the rows skipped for a number or a field no sweep writes so."""
        return [self.problems[i] for i in self.bad_at]

    def skip_bad(self, where: str, why: str) -> None:
        """Skip the row at ``where`` (``FILE:LINE``) for ``why``, one of :attr:`bad_rows`."""
        self.bad_at.append(len(self.problems))
        self.problems.append(f"{where}: {why}; skipped")

    @property
    def latest(self) -> str | None:
        return next(reversed(self.headers), None)

    def of(self, sweep_id: str | None) -> pd.DataFrame:
        """The results of one sweep (the latest when None)."""
        sweep_id = sweep_id or self.latest
        return self.results[self.results["sweep_id"] == sweep_id]


# The numbers of a result row the curves, the verdict and the comparisons compute with:
# positive where given (a size, ranks, a time), the bandwidths at least 0 (busbw is 0 on
# one rank); another value (text, a negative time, NaN) is no measurement.
_POSITIVE = ("size_bytes", "ranks", "time_us", "time_us_max", "time_us_p50", "time_us_p99")
_AT_LEAST_0 = ("algbw_gbs", "busbw_gbs")


def bad_number(record: dict[str, JSON]) -> str | None:
    """Why a result row holds no measurement (its first number that cannot be one), None
    where each is one."""
    for key in (*_POSITIVE, *_AT_LEAST_0):
        value = record.get(key)
        if value is None:  # not measured (a size out of memory): no number to compute with
            continue
        number = number_or_none(value)
        if (
            number is None
            or not math.isfinite(number)
            or number < 0
            or (number == 0 and key in _POSITIVE)
        ):
            wanted = "positive" if key in _POSITIVE else "non-negative"
            return f"{key} {json.dumps(value)[:40]} is not a {wanted} number"
    return None


# The fields of a sweep header the advice and the comparisons compute with: ranks and
# nodes whole counts >= 1 where given, settings an object (iters, load, gap_ms).
_WHOLE = ("ranks", "nodes")


def bad_header(record: dict[str, JSON]) -> str | None:
    """Why a sweep header cannot describe a sweep (its first field no sweep writes so),
    None where each it holds can."""
    for key in _WHOLE:
        value = record.get(key)
        if value is None:
            continue
        count = number_or_none(value, whole=True)
        if count is None or count < 1:
            return f"sweep header {key} {json.dumps(value)[:40]} is not a whole count of 1 or more"
    settings = record.get("settings")
    if settings is not None and not isinstance(settings, dict):
        return f"sweep header settings {json.dumps(settings)[:40]} is not an object"
    return None


# The most a collectives file may hold: thousands of sweeps (a sweep is ~100 kB).
MAX_SWEEPS_BYTES = 64 << 20


def read_sweeps(path: str | Path) -> Sweeps:
    """The sweeps of a collectives file (a path or its name), read line by line;
    ``OSError`` when it cannot be read, ``ValueError`` past 64 MiB (a device such as
    ``/dev/zero`` ends there too)."""
    path = Path(path)
    out = Sweeps()
    rows: list[dict[str, JSON]] = []
    legacy = 0
    try:
        for number, record, unread in json_lines(path, MAX_SWEEPS_BYTES):
            if out.first_schema is None:
                out.first_schema = schema_of(record)
            if unread:
                out.problems.append(
                    f"{quoted_path(path)}:{number}: not a JSON record ({unread}); skipped"
                )
                continue
            if not isinstance(record, dict) or record.get("schema") not in SCHEMAS:
                out.problems.append(
                    f"{quoted_path(path)}:{number}: not a gpuscale collectives record; skipped"
                )
                continue
            kind = record.get("kind")
            if kind == "sweep" and (bad := bad_header(record)):
                out.skip_bad(f"{quoted_path(path)}:{number}", bad)
            elif kind == "sweep":
                out.headers[str(record.get("sweep_id"))] = record
            elif kind == "nccl":
                out.headers.setdefault(str(record.get("sweep_id")), {})["nccl"] = record.get("nccl")
            elif kind == "result" and (bad := bad_number(record)):
                out.skip_bad(f"{quoted_path(path)}:{number}", bad)
            elif kind == "result":
                rows.append(record)
            elif record.get("op") == "topology":  # version 1: ends a sweep
                legacy += 1
                out.headers[f"legacy-{legacy}"] = {"topology": record.get("topology")}
            elif "op" in record:  # version 1 result
                rows.append(
                    {
                        **record,
                        "kind": "result",
                        "sweep_id": f"legacy-{legacy + 1}",
                        "size_bytes": record.get("bytes"),
                        "placement": "in-place" if record["op"] == "all_reduce" else "out-of-place",
                    }
                )
    except TooLarge as exc:
        raise ValueError(
            f"{exc} (read {exc.lines:,} lines before stopping): collectives files are read "
            f"up to {MAX_SWEEPS_BYTES >> 20} MiB; keep the sweeps you need"
        ) from None
    if any(r["sweep_id"] == f"legacy-{legacy + 1}" for r in rows):
        out.headers.setdefault(f"legacy-{legacy + 1}", {})
    out.results = pd.DataFrame(rows).reindex(columns=list(COLLECTIVES_COLUMNS))
    return out


def read_collectives(path: Path) -> MeasuredCurves:
    """A ``gpuscale collectives`` file's curves (per collective and rank count, its sweep
    of the most timed calls per size, the latest of those; in-place where both ran; each
    size's median call: :func:`_curve`), how each was read, the header of the latest sweep
    read and the file's lines skipped."""
    try:
        sweeps = read_sweeps(path)
    except FileNotFoundError:  # as the bench loader says it ("no such results file")
        hint = round_hint([path], takes_round=False)  # advise's option: it takes no --round
        raise ValueError(
            f"{quoted_path(path)}: no such collectives file"
            + (hint or " (`gpuscale collectives --out FILE` writes one)")
        ) from None
    except IsADirectoryError:  # said as the bench loader says it ("is a folder: give ...")
        wanted = suggested_command("collectives", "--out", path / "collectives.jsonl")
        raise ValueError(
            f"{quoted_path(path)} is a folder: give a collectives file in it ({wanted} writes one)"
        ) from None
    except OSError as exc:
        raise ValueError(f"cannot read {quoted_path(path)}: {exc.strerror or exc}") from None
    if sweeps.bad_rows:  # the curves would rest on the rows left: said, not guessed around
        more = len(sweeps.bad_rows) - 1
        raise NamedError(
            sweeps.bad_rows[0].removesuffix("; skipped")
            + (f" ({more} more rows so)" if more else "")
            + ": not a measurement as `gpuscale collectives` writes it; measure again, or "
            "remove those rows"
        )
    table = sweeps.results
    if table.empty:
        schema = sweeps.first_schema or ""
        bench = schema.startswith(BENCH_FILE[0])  # as `holds` tells it
        held = (
            f"it holds `gpuscale bench` results: give it as {ref('bench')}"
            if bench  # what it is instead, where known; else what it should hold and whence
            else "a collectives file holds the all_reduce times by message size on 2 or more "
            "ranks, as JSON lines, that `gpuscale collectives --out FILE` measures and writes"
        )
        if schema.startswith(COLLECTIVES_PREFIX) and schema not in SCHEMAS:
            held = (  # a later gpuscale's file: its rows are not read, not absent
                f"its schema {schema} is not one this gpuscale reads ({joined(SCHEMAS)}): "
                "a newer gpuscale wrote it; read it with that one"
            )
        raise NamedError(f"{quoted_path(path)}: no collectives measurement ({held})")
    table = table[table["status"] == "ok"]
    curves: list[CommCurve] = []
    read: list[CurveRead] = []
    unfitted: list[CurveRead] = []  # under 4 sizes once those of wrong elements left out
    for (op, ranks), rows in table.groupby(["op", "ranks"]):
        if op not in ("all_reduce", "all_gather", "reduce_scatter") or ranks < 2:
            continue
        found, how = _curve(str(op), int(ranks), rows, sweeps.headers)
        if found is not None:
            curves.append(found)
            read.append(how)
        elif how.wrong_sizes:
            unfitted.append(how)
    if not any(c.op == "all_reduce" for c in curves):
        why = (
            f"ranks (a one-device host measures none: leave out {ref('collectives')} and give "
            f"the link as {ref('interconnect')} (a preset))"
        )
        wrong = next((r for r in unfitted if r.op == "all_reduce"), None)
        if wrong:  # measured, but its results were wrong
            why = (
                f"ranks whose check found no wrong elements (the check of sweep "
                f"{wrong.sweep_id} found {wrong.wrong:,} wrong elements at "
                f"{counted(len(wrong.wrong_sizes), 'size')}, nccl-tests' #wrong: a faulty "
                "link, GPU memory or NCCL build; fix it and measure again)"
            )
        raise NamedError(
            f"{quoted_path(path)}: need an all_reduce sweep of 4 or more sizes on 2 or more {why}"
        )
    # the header of the latest sweep a curve was read off (none: no sweep row)
    chosen = {r.sweep_id for r in read}
    latest = next((i for i in reversed(sweeps.headers) if i in chosen), "")
    header = sweeps.headers.get(latest, {})
    return MeasuredCurves(
        curves=tuple(curves),
        source=str(path),  # as given: two files of one name in two folders read apart
        nodes=int(header.get("nodes") or 1),
        ranks=int(header.get("ranks", 0)),
        under_load=bool(header.get("settings", {}).get("load")),
        device=str(header.get("device") or ""),
        sweep_id=latest,
        other_load_share=_share(header.get("host")),
        read=tuple(read),
        unfitted=tuple(unfitted),
        skipped=tuple(sweeps.problems),
    )


def _share(host: JSON) -> float | None:
    """The share of the host's CPU time other processes used while a sweep ran, as its
    header's ``host`` records it (None: not measured, or a sweep that records none)."""
    share = number_or_none(host.get("other_load_share")) if isinstance(host, dict) else None
    return float(share) if share is not None and math.isfinite(share) else None


def _iters(header: dict[str, JSON]) -> int | None:
    """A sweep's timed calls per size, as its header records them (None: unrecorded)."""
    settings = header.get("settings")
    return number_or_none(settings.get("iters"), whole=True) if isinstance(settings, dict) else None


def _curve(
    op: str, ranks: int, rows: pd.DataFrame, headers: dict[str, dict[str, JSON]]
) -> tuple[CommCurve | None, CurveRead]:
    """The curve of ``op`` on ``ranks`` (``rows``: its ``ok`` results, in file order) and
    how it was read; no curve under 4 sizes. The sweep read is the one of the most timed
    calls per size (a median of 20 calls is steadier than one of 5), the latest of those;
    less its sizes whose check found wrong elements (nccl-tests' #wrong); its in-place
    rows where both placements ran; each size's median call where every size
    records one, else the mean (version 1 files, rows made by hand)."""
    order = list(dict.fromkeys(rows["sweep_id"]))  # oldest first
    iters = {i: _iters(headers.get(str(i), {})) for i in order}
    chosen = max(reversed(order), key=lambda i: iters[i] or 0)  # ties: the latest
    rows = rows[rows["sweep_id"] == chosen]
    # a size whose check found wrong elements in either placement timed no working
    # collective: left out of the fit
    wrong = pd.to_numeric(rows["wrong"], errors="coerce").fillna(0).clip(lower=0)
    left_out = sorted({float(s) for s in rows.loc[wrong > 0, "size_bytes"]})
    rows = rows[~rows["size_bytes"].isin(left_out)]
    if (rows["placement"] == "in-place").any():
        rows = rows[rows["placement"] == "in-place"]
    by_size = rows.groupby("size_bytes")
    mean = by_size["time_us"].median()  # one row per size: its mean call
    median = pd.to_numeric(by_size["time_us_p50"].median(), errors="coerce")
    enough = len(mean) >= 4
    fitted = "median" if median.notna().all() and (median > 0).all() else "mean"
    times = median if fitted == "median" else mean
    noisy = int((mean > NOISY_P95_OVER_P50 * median).sum())  # NaN: not noisy
    sizes = tuple(mean.index.astype(float))

    def curve(of: pd.Series) -> CommCurve:
        return CommCurve(op, ranks, sizes, tuple(of.to_numpy(float) / 1e6))

    return curve(times) if enough else None, CurveRead(
        op=op,
        ranks=ranks,
        sweep_id=str(chosen),
        iters=iters[chosen],
        latest_id=str(order[-1]),
        latest_iters=iters[order[-1]],
        times=fitted,
        noisy=noisy,
        sizes=len(sizes),
        means=curve(mean) if fitted == "median" and enough else None,
        wrong=int(wrong.sum()),
        wrong_sizes=tuple(left_out),
    )
