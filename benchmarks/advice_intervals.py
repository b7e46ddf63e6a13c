"""The advice's 80% speedup interval per link class, chosen and fitted on the development
rows of the published tables alone (issue 73, item 7), then judged once on the held-out
rows by the held-out check.

    python benchmarks/advice_intervals.py

In a row: every development row of ``benchmarks/published/`` (the split rule:
``benchmarks/published/README.md``) advised by numbers as ``advice_heldout.py`` advises
it, with the model's own interval (no calibrated rule); each candidate rule of
``CANDIDATES`` judged by its leave-one-setup-out coverage on those rows; the rule
``SELECTION`` picks fitted on every development row and written to
``src/gpuscale/data/advice_intervals.json`` (the advice reads it:
``gpuscale/advice/search/predict.py``); the comparison to
``benchmarks/results/advice_intervals.json``; then ``advice_heldout.py`` run afresh (the
advice now carries the rule) and ``docs/heldout.md``'s tables rewritten from both results.
No held-out row is advised before the rule is written.

Leave-one-setup-out: a setup is one source's one device (``Tesla K80 (GCE)`` of
TensorFlow's 2017 page; the V100 of NVIDIA's tables, whatever its memory). Each setup's
rows are predicted by the rule fitted on the other setups' rows: how the intervals
transfer to hardware, a cloud and a table not seen, which is what the held-out rows (later
sources) are. A class's rule fitted per class takes the class's rows where it has at least
``MIN_CLASS_ROWS`` of them, else every class's (pooled): leaving out the only setup of a
class (the K80s on Amazon are all of PCIe with P2P and of multi-node) tests the pooled
rule there. Leave-one-model-family-out is computed beside it and said, never used to
choose.

Fits (scores over ``g = sqrt(log2 N)``, ``r = log(published / point)``; the conformal
rank of ``n`` scores ``ceil((n + 1) q)``, at most ``n``; widths never below 0):

* ``scale``: a factor ``k`` on the model's interval in log, the ``q = 0.8`` rank of
  ``log(point / published) / log(point / low)`` (below the point) or
  ``log(published / point) / log(high / point)`` (above);
* ``band`` and ``union``: ``low`` the ``q = 0.9`` rank of ``-r / g``, ``high`` of ``r / g``
  (each end apart, 80% between them); pooled with a class scale: ``r`` over the class's
  median ``|r|`` (its rows', else every row's), the widths times it;
* ``extend``: ``low`` the ``q = 0.9`` rank of ``log(low / published) / g``, ``high`` of
  ``log(published / high) / g``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import re
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import gpuscale
from gpuscale.advice.model.network import CLASSES, count_class
from gpuscale.advice.search import predict

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import advice_heldout as heldout  # noqa: E402  (the rows and how each is advised)

COMMAND = "python benchmarks/advice_intervals.py"
DATA = HERE.parent / "src" / "gpuscale" / "data" / predict.INTERVALS_FILE
OUT = HERE / "results" / "advice_intervals.json"
DOCS = HERE.parent / "docs" / "heldout.md"
BEGIN, END = "<!-- advice_intervals.json: begin -->\n", "<!-- advice_intervals.json: end -->"

LEVEL = 0.8  # the interval's coverage
PER_END = 0.9  # each end's, for the rules fitted end by end
MIN_CLASS_ROWS = 10  # fewer of a class's rows: its per-class rule is the pooled one
# (name, kind, pooling): pooling "class" (each class its own widths), "pooled" (one for
# every class) or "class scale" (pooled over residuals divided by each class's scale)
CANDIDATES = (
    ("the model's own interval", "model", "none"),
    ("scale, per class", "scale", "class"),
    ("scale, pooled", "scale", "pooled"),
    ("band, per class", "band", "class"),
    ("band, pooled", "band", "pooled"),
    ("band, pooled with a class scale", "band", "class scale"),
    ("union of the model's and a band, per class", "union", "class"),
    ("union of the model's and a band, pooled", "union", "pooled"),
    ("the model's extended, per class", "extend", "class"),
    ("the model's extended, pooled", "extend", "pooled"),
)
# Declared before any candidate was scored: the candidate whose worst class's
# leave-one-setup-out coverage is closest to 80% (the least max over classes of
# |coverage - 0.8|); those within TIE of that least, the narrowest (median high / low over
# the development rows' left-out intervals); then the first in CANDIDATES. A rule narrower
# than the model's own interval is not adopted (added once the step model's wait term was
# fitted): most development rows are pre-2019 hardware where the model's interval
# over-covers, and narrowing on their evidence would narrow it on the newer hardware users
# run, whose development rows (README.md rule 4) do not say it over-covers.
TIE = 0.02
MEMORY = re.compile(r"\s*\d+\s*GB")  # a device's memory size, left out of its setup
SELECTION = (
    "least max over link classes of |leave-one-setup-out coverage - 0.8| on the "
    f"development rows; within {TIE} of it, the narrowest (median high / low); then the "
    "first candidate; never one narrower than the model's own interval; admissible: keeps "
    "the measured study answer (one device for the single- vs dual-GPU study's small models "
    "given one step time)"
)
# The published single- vs dual-GPU study (tests/advice/test_published_study.py): two RTX
# 4070 Ti SUPER behind a PCIe host bridge; its small models' step at batch 8 as published
# (the 6.9M MLP's 18.6 ms; the 258K MLP's 1,234 samples/s). Added on 2026-11-27 by the
# lead's rule (the admissible candidates keep the study's known answers), after the refit
# on 260 development rows chose a pooled band under which the 80% interval at two devices
# no longer reaches below 1x at the fixed cost's low end, so two devices were advised there.
STUDY: dict[str, object] = {
    "device_name": "RTX 4070 Ti SUPER",
    "link": "pcie-phb",
    "max_devices": 2,
}
STUDY_SMALL = ((6.9e6, 18.6), (258e3, float(f"{1e3 * 8 / 1234:.4g}")))


@dataclass(frozen=True)
class DevRow:
    """A development row as the advice predicts it: its published ratio, the model's point
    and interval at ``n`` devices over its point at the row's base count (as
    ``advice_heldout.advise_row`` divides them), the upper end's ceiling (linear from the
    base), its setup and model family."""

    source: str
    model: str
    device: str
    link_class: str
    n: int
    published: float
    point: float
    low: float
    high: float
    ceiling: float
    setup: str
    family: str


def _setup(source: str, device: str) -> str:
    """``source: device`` with the memory size left out (one V100 whatever its memory)."""
    return f"{source}: {MEMORY.sub('', device)}"


def _family(model: str) -> str:
    """The model's family: its name's first word of letters (``ResNet-152``: ResNet)."""
    found = re.match(r"[A-Za-z]+", model)
    return found.group(0) if found else model


def dev_rows() -> list[DevRow]:
    """Every unflagged development row, advised with the model's own interval."""
    out = []
    for row in heldout.read_rows():
        if row.split != "development" or row.flagged:
            continue
        advice = heldout.advise(row)  # with the fitted terms of the row's stack
        inputs = advice.calibration
        # weak scaling without a convergence model: a step of compute alone scales
        # linearly, so the upper end's ceiling is linear
        if inputs.run.scaling != "weak" or inputs.search.convergence is not None:
            raise ValueError(f"{row.source}: {row.model}: not advised at a kept batch")
        found = count_class(inputs.machine.network, row.n_gpus)
        if found != row.link_class:
            raise ValueError(
                f"{row.source}: {row.model}: class {found}, the table's {row.link_class}"
            )
        table = predict.predicted(inputs)[0].set_index("accelerators")  # no rule
        at, base = table.loc[row.n_gpus], float(table.loc[row.n_base, "speedup"])
        out.append(
            DevRow(
                source=row.source,
                model=row.model,
                device=row.device,
                link_class=row.link_class,
                n=row.n_gpus,
                published=row.published,
                point=float(at["speedup"]) / base,
                low=float(at["speedup_low"]) / base,
                high=float(at["speedup_high"]) / base,
                ceiling=row.n_gpus / row.n_base,
                setup=_setup(row.source, row.device),
                family=_family(row.base_model),
            )
        )
    return out


def conformal(scores: list[float], q: float) -> float:
    """The ``ceil((n + 1) q)``-th smallest of ``n`` scores (at most the largest)."""
    ordered = sorted(scores)
    rank = min(len(ordered), math.ceil((len(ordered) + 1) * q))
    return ordered[rank - 1]


def _g(r: DevRow) -> float:
    return math.sqrt(math.log2(r.n))


def _residual(r: DevRow) -> float:
    return math.log(r.published / r.point) / _g(r)


def _scale_score(r: DevRow) -> float:
    """How many times the model's half-width (log) the published ratio lies from the point."""
    if r.published < r.point:
        below = math.log(r.point / r.low)
        return math.log(r.point / r.published) / below if below > 0 else math.inf
    above = math.log(r.high / r.point)
    if r.published == r.point:
        return 0.0
    return math.log(r.published / r.point) / above if above > 0 else math.inf


def _ends_fit(kind: str, rows: list[DevRow]) -> tuple[float, float]:
    """(low, high) widths of ``kind`` fitted on ``rows`` (the module's docstring)."""
    if kind == "model":
        return 0.0, 0.0
    if kind == "scale":
        k = conformal([_scale_score(r) for r in rows], LEVEL)
        if not math.isfinite(k):
            raise ValueError("a scale's score is infinite at its rank: no factor covers")
        return k, k
    if kind in ("band", "union"):
        res = [_residual(r) for r in rows]
        return max(0.0, conformal([-x for x in res], PER_END)), max(0.0, conformal(res, PER_END))
    if kind == "extend":
        low = [math.log(r.low / r.published) / _g(r) for r in rows]
        high = [math.log(r.published / r.high) / _g(r) for r in rows]
        return max(0.0, conformal(low, PER_END)), max(0.0, conformal(high, PER_END))
    raise ValueError(f"no fit for {kind!r}")


def fit(kind: str, pooling: str, rows: list[DevRow]) -> dict[str, tuple[float, float, int]]:
    """Per class: (low, high, rows fitted on) of ``kind`` pooled as ``pooling`` over
    ``rows``."""
    by_class = {c: [r for r in rows if r.link_class == c] for c in CLASSES}
    own = {c: len(mine) >= MIN_CLASS_ROWS for c, mine in by_class.items()}
    if pooling == "class scale":
        scale = {
            c: statistics.median(abs(_residual(r)) for r in (by_class[c] if own[c] else rows))
            for c in CLASSES
        }
        z = [_residual(r) / scale[r.link_class] for r in rows]
        low, high = max(0.0, conformal([-x for x in z], PER_END)), max(0.0, conformal(z, PER_END))
        return {c: (low * scale[c], high * scale[c], len(rows)) for c in CLASSES}
    pooled = _ends_fit(kind, rows)
    out = {}
    for c in CLASSES:
        if pooling == "class" and own[c]:
            out[c] = (*_ends_fit(kind, by_class[c]), len(by_class[c]))
        else:
            out[c] = (*pooled, len(rows))
    return out


def interval(
    kind: str, widths: dict[str, tuple[float, float, int]], rows: list[DevRow]
) -> tuple[np.ndarray, np.ndarray]:
    """The rule's (low, high) at each of ``rows``, by the advice's own function."""
    a = np.array([widths[r.link_class][0] for r in rows])
    b = np.array([widths[r.link_class][1] for r in rows])
    return predict.ends(
        kind,
        (a, b),
        np.array([r.point for r in rows]),
        np.array([r.low for r in rows]),
        np.array([r.high for r in rows]),
        np.array([r.n for r in rows], float),
        np.array([r.ceiling for r in rows]),
    )


def left_out(
    kind: str, pooling: str, rows: list[DevRow], group: Callable[[DevRow], str]
) -> dict[str, object]:
    """Coverage per class (and its counts) and the median width (high / low) of the
    intervals each group's rows get from the rule fitted on the other groups' rows."""
    covered: dict[str, list[bool]] = {c: [] for c in CLASSES}
    widths: list[float] = []
    for name in sorted({group(r) for r in rows}):
        mine = [r for r in rows if group(r) == name]
        rest = [r for r in rows if group(r) != name]
        low, high = interval(kind, fit(kind, pooling, rest), mine)
        for r, lo, hi in zip(mine, low, high, strict=True):
            covered[r.link_class].append(bool(lo <= r.published <= hi))
            widths.append(float(hi / lo))
    coverage = {c: sum(v) / len(v) for c, v in covered.items() if v}
    return {
        "coverage": coverage,
        "covered": {c: sum(v) for c, v in covered.items()},
        "rows": {c: len(v) for c, v in covered.items()},
        "worst_from_80": max(abs(v - LEVEL) for v in coverage.values()),
        "median_width": statistics.median(widths),
    }


def keeps_the_study(entry: dict[str, object]) -> bool:
    """Whether the published single- vs dual-GPU study's known answer for its small models
    given one step time holds with the rule ``entry`` (``tests/advice/test_published_study.py``:
    one device advised, at every end of the assumed fixed cost's range), asked as its
    users type it (``STUDY``)."""
    kept = predict.RULE
    predict.RULE = predict.rule_of(entry)
    try:
        return all(
            gpuscale.advise(**STUDY, params=params, step_ms=step_ms, batch=8).recommended == 1
            for params, step_ms in STUDY_SMALL
        )
    finally:
        predict.RULE = kept


def compare(rows: list[DevRow]) -> dict[str, object]:
    """Every candidate's leave-one-setup-out (chooses) and leave-one-family-out (said)
    coverage; the candidate ``SELECTION`` picks."""
    judged = []
    for name, kind, pooling in CANDIDATES:
        judged.append(
            {
                "name": name,
                "kind": kind,
                "pooling": pooling,
                "leave_one_setup_out": left_out(kind, pooling, rows, lambda r: r.setup),
                "leave_one_family_out": left_out(kind, pooling, rows, lambda r: r.family),
            }
        )
    for candidate in judged:
        candidate["keeps_the_study"] = keeps_the_study(data_file(rows, candidate))
    own = judged[0]["leave_one_setup_out"]["median_width"]  # the model's own interval
    eligible = [
        c
        for c in judged
        if c["leave_one_setup_out"]["median_width"] >= own and c["keeps_the_study"]
    ]
    best = min(c["leave_one_setup_out"]["worst_from_80"] for c in eligible)
    near = [c for c in eligible if c["leave_one_setup_out"]["worst_from_80"] <= best + TIE]
    chosen = min(near, key=lambda c: c["leave_one_setup_out"]["median_width"])  # first of ties
    return {"candidates": judged, "chosen": chosen["name"]}


def data_file(rows: list[DevRow], chosen: dict[str, object]) -> dict[str, object]:
    """The data file's contents: the chosen rule fitted on every development row."""
    kind, pooling = str(chosen["kind"]), str(chosen["pooling"])
    widths = fit(kind, pooling, rows)
    return {
        "about": "The advice's 80% speedup interval by numbers per link class "
        "(gpuscale/advice/search/predict.py reads this file and says the rule): kind "
        "and, per class, low and high widths (a factor on the model's interval in log for "
        "'scale'; else a log width at N = 2 growing as sqrt(log2 N)), fitted on the "
        "development rows of benchmarks/published/ only; tests/advice/test_intervals.py "
        "pins them.",
        "fitted_by": COMMAND,
        "fitted_on": dt.date.today().isoformat(),
        "split_rule": "benchmarks/published/README.md: development if published before "
        "2019-01-01, and for sources added on 2026-11-27 by the parity of "
        "sha1(source|device|model) (rule 4); held-out rows never advised or used by the fit",
        "selection": SELECTION,
        "kind": kind,
        "name": chosen["name"],
        "pooling": pooling,
        "level": LEVEL,
        "classes": {
            c: {
                "low": round(widths[c][0], 6),
                "high": round(widths[c][1], 6),
                "rows": widths[c][2],
                "class_rows": sum(r.link_class == c for r in rows),
            }
            for c in CLASSES
        },
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def markdown(results: dict[str, object]) -> str:
    """The candidates' leave-one-setup-out coverage per class (the chosen in bold), with
    leave-one-family-out's worst class beside it."""
    words = heldout.CLASS_WORDS
    lines = [
        "| rule | "
        + " | ".join(words[c] for c in CLASSES)
        + " | worst from 80% | median width | family-out worst |",
        "| --- | " + " | ".join("---:" for _ in CLASSES) + " | ---: | ---: | ---: |",
    ]
    for c in results["candidates"]:  # type: ignore[union-attr]
        setup, family = c["leave_one_setup_out"], c["leave_one_family_out"]
        name = f"**{c['name']}** (chosen)" if c["name"] == results["chosen"] else c["name"]
        cells = [
            f"{_pct(setup['coverage'].get(k))} ({setup['covered'][k]}/{setup['rows'][k]})"
            for k in CLASSES
        ]
        lines.append(
            f"| {name} | {' | '.join(cells)} | {_pct(setup['worst_from_80'])} "
            f"| {setup['median_width']:.3f} | {_pct(family['worst_from_80'])} |"
        )
    return "\n".join(lines) + "\n"


def rule_markdown(data: dict[str, object]) -> str:
    """The chosen rule's widths per class, as the data file holds them."""
    said = (
        f"Rule: {data['name']} (`{data['kind']}`), chosen on the development rows by "
        f"`{data['fitted_by']}` on {data['fitted_on']}"
    )
    if data["kind"] == "model":
        return said + ": no widths of its own.\n"
    lines = [
        said + ", its widths fitted on them:",
        "",
        "| class | rows fitted on | low | high |",
        "| --- | ---: | ---: | ---: |",
    ]
    for c, w in data["classes"].items():  # type: ignore[union-attr]
        lines.append(
            f"| {heldout.CLASS_WORDS[c]} | {w['rows']} | {w['low']:.4f} | {w['high']:.4f} |"
        )
    return "\n".join(lines) + "\n"


def _replace(text: str, begin: str, end: str, body: str) -> str:
    head, rest = text.split(begin)
    return head + begin + body + end + rest.split(end, 1)[1]


def write_docs(path: Path, results: dict[str, object], data: dict[str, object]) -> None:
    """``docs/heldout.md``'s interval table rewritten (``advice_heldout.py`` writes its own)."""
    text = path.read_text()
    body = markdown(results) + "\n" + rule_markdown(data)
    path.write_text(_replace(text, BEGIN, END, body))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--data",
        type=Path,
        default=DATA,
        help=f"where the rule goes (default {DATA.name}: the advice's)",
    )
    parser.add_argument("--no-heldout", action="store_true", help="fit and write the rule only")
    args = parser.parse_args(argv)
    if args.data != DATA and not args.no_heldout:
        parser.error(
            "--data elsewhere needs --no-heldout: the held-out run reads the advice's rule"
        )
    rows = dev_rows()
    results = compare(rows)
    chosen = next(c for c in results["candidates"] if c["name"] == results["chosen"])  # type: ignore[union-attr]
    data = data_file(rows, chosen)
    results = {
        "command": COMMAND,
        "selection": SELECTION,
        "development_rows": len(rows),
        "setups": sorted({r.setup for r in rows}),
        "families": sorted({r.family for r in rows}),
        **results,
        "rule": data,
    }
    args.data.parent.mkdir(parents=True, exist_ok=True)
    args.data.write_text(json.dumps(data, indent=1) + "\n")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(markdown(results), end="")
    print(rule_markdown(data), end="")
    print(f"written: {args.data}, {args.out}")
    if args.no_heldout:
        return 0
    write_docs(DOCS, results, data)
    # a fresh process: the advice reads the rule just written
    done = subprocess.run([sys.executable, str(HERE / "advice_heldout.py"), "--docs", str(DOCS)])
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
